from __future__ import annotations

import pytest

from hope.core.response_cache import ResponseCache
from hope.pipeline.questions_step import make_questions
from hope.rag.question_generation import (
    RagasOutput,
    excerpt_windows,
    generate_questions,
    plan_slots,
)
from hope.testing import FakeChatClient

from .helpers import DOCS, fake_config, question_writer


def ragas_record(domain, doc_id, n):
    doc = next(d for d in DOCS if d["doc_id"] == doc_id)
    sentence = doc["text"].split(". ")[n] + "."
    return {
        "domain": domain,
        "doc_id": doc_id,
        "question": f"Which {doc['title'].lower()} detail does sentence {n} of the text give?",
        "reference": sentence,
        "reference_contexts": [doc["text"]],
        "source_doc_ids": [doc_id],
        "generator": "ragas",
        "generator_detail": "single_hop_specific_query_synthesizer",
    }


def test_excerpts_are_sentence_aligned_and_bounded():
    text = DOCS[0]["text"]
    windows = excerpt_windows(text, 120)
    assert all(len(w) <= 120 for w in windows)
    assert all(w in text for w in windows)
    assert all(w.endswith(".") for w in windows)
    assert " ".join(windows).replace(" ", "") == text.replace(" ", "")


def test_slots_are_seeded_and_spread_over_documents():
    docs = [
        {**DOCS[0], "doc_id": "a", "domain": "news"},
        {**DOCS[1], "doc_id": "b", "domain": "news"},
    ]
    first = plan_slots("news", docs, 4, seed=1, context_chars=150)
    again = plan_slots("news", list(reversed(docs)), 4, seed=1, context_chars=150)
    assert [(s.doc_id, s.excerpts) for s in first] == [(s.doc_id, s.excerpts) for s in again]
    assert sorted(s.doc_id for s in first) == ["a", "a", "b", "b"]
    same_doc = [s for s in first if s.doc_id == first[0].doc_id]
    assert same_doc[0].excerpts[0] != same_doc[1].excerpts[0]  # a new excerpt per question


def fallback_llm(cache=None, responder=None):
    from hope.rag import rag_models as models

    config = fake_config()
    client = FakeChatClient(responder or question_writer)
    endpoint = models.role_endpoint(config, "questions")
    return models.chat_llm_factory(endpoint, cache, client)(), client


def test_fallback_is_recorded_when_ragas_raises():
    llm, _ = fallback_llm()

    def broken(domain, docs, count):
        raise ValueError("Documents appears to be too short")

    questions, report = generate_questions(
        DOCS,
        per_domain=2,
        mode="auto",
        seed=3,
        fallback_llm=llm,
        ragas_generate=broken,
        context_chars=200,
    )
    assert len(questions) == 4
    assert {q["generator"] for q in questions} == {"fallback"}
    assert all(q["fallback_reason"].startswith("ragas failed: ValueError") for q in questions)
    assert report["news"]["ragas_error"].startswith("ValueError: Documents appears")
    assert [q["question_id"] for q in questions] == [
        "news-q000",
        "news-q001",
        "wiki-q000",
        "wiki-q001",
    ]
    for q in questions:
        doc = next(d for d in DOCS if d["doc_id"] == q["doc_id"])
        assert q["domain"] == doc["domain"]
        assert q["reference_contexts"][0] in doc["text"]
        assert q["question"] and q["reference"]


def test_ragas_shortfall_is_filled_by_the_fallback():
    llm, _ = fallback_llm()

    def one_each(domain, docs, count):
        return RagasOutput([ragas_record(domain, docs[0]["doc_id"], 0)], "1 sample")

    questions, report = generate_questions(
        DOCS,
        per_domain=3,
        mode="auto",
        seed=3,
        fallback_llm=llm,
        ragas_generate=one_each,
        context_chars=200,
    )
    news = [q for q in questions if q["domain"] == "news"]
    assert [q["generator"] for q in news] == ["ragas", "fallback", "fallback"]
    assert news[0]["fallback_reason"] is None
    assert news[1]["fallback_reason"] == "ragas produced 1 of 3, 1 passed the gates"
    assert report["news"]["ragas_note"] == "1 sample"
    wiki = report["wiki"]
    assert {k: wiki[k] for k in ("requested", "ragas", "fallback", "extractive")} == {
        "requested": 3,
        "ragas": 1,
        "fallback": 2,
        "extractive": 0,
    }
    assert wiki["kept"] == 3 and wiki["shortfall"] == 0 and wiki["failed"] == 0
    assert wiki["tried"] == wiki["kept"] + sum(wiki["rejected"].values())
    assert all(q["gates"]["supported"]["passed"] for q in questions)


def test_ragas_only_mode_fails_loudly_naming_the_domain():
    def broken(domain, docs, count):
        raise RuntimeError("bad JSON")

    with pytest.raises(RuntimeError, match="domain 'news'"):
        generate_questions(
            DOCS, per_domain=1, mode="ragas", seed=3, fallback_llm=None, ragas_generate=broken
        )


def test_failed_llm_slots_are_counted_not_invented():
    llm, _client = fallback_llm(responder=lambda request: '{"question": "no"}')
    questions, report = generate_questions(
        DOCS[:1], per_domain=2, mode="fallback", seed=3, fallback_llm=llm, max_attempts=2
    )
    assert questions == []
    # Every candidate up to the cap (4 per requested question) was tried; the shortfall is stated.
    assert report["news"]["failed"] == 8
    assert report["news"]["tried"] == 8
    assert report["news"]["shortfall"] == 2
    assert report["news"]["generation_errors"][0]["errors"][0].startswith("invalid response")


def test_same_seed_same_questions_and_warm_rerun_sends_nothing():
    cache = ResponseCache(None)
    config = fake_config()
    client = FakeChatClient(question_writer)
    first, _ = make_questions(DOCS, config, "sample", cache, questions_client=client)
    sent = len(client.requests)
    assert sent == 4
    second, summary = make_questions(DOCS, config, "sample", cache, questions_client=client)
    assert second == first
    assert len(client.requests) == sent
    assert summary["usage"]["fallback"]["cache_hits"] == 4
    other, _ = make_questions(
        DOCS,
        fake_config(seed=8),
        "sample",
        ResponseCache(None),
        questions_client=FakeChatClient(question_writer),
    )
    assert [q["question"] for q in other] != [q["question"] for q in first]


def test_stage_summary_counts_tries_rejections_and_shortfall():
    config = fake_config(questions={"generator": "extractive", "per_domain": {"sample": 2}})
    questions, summary = make_questions(
        DOCS,
        config,
        "sample",
        ResponseCache(None),
        questions_client=FakeChatClient(question_writer),
    )
    assert summary["requested"] == 4 and summary["questions"] == len(questions) == 4
    assert summary["per_generator"] == {"ragas": 0, "fallback": 0, "extractive": 4}
    assert summary["shortfall"] == 0
    assert summary["tried"] == 4 + sum(summary["rejected"].values())
    assert summary["usage"]["ragas"] is None  # no ragas models outside auto/ragas
    assert summary["config"]["candidates_per_question"] == 4


def test_ragas_that_yields_too_few_samples_says_what_its_graph_held(monkeypatch):
    import ragas.testset
    from ragas.testset.graph import KnowledgeGraph, Node, NodeType

    from hope.rag.question_generation import ragas_testset

    graph = KnowledgeGraph(
        nodes=[
            Node(type=NodeType.DOCUMENT, properties={"page_content": "a"}),
            Node(type=NodeType.CHUNK, properties={"page_content": "b", "entities": ["Quay"]}),
            Node(type=NodeType.CHUNK, properties={"page_content": "c"}),
        ]
    )

    class Empty:
        def __init__(self, llm, embedding_model):
            self.knowledge_graph = graph

        def generate_with_langchain_docs(self, docs, **kwargs):
            assert [d.metadata["doc_id"] for d in docs] == [d["doc_id"] for d in DOCS[:2]]
            return type("Testset", (), {"samples": []})()

    monkeypatch.setattr(ragas.testset, "TestsetGenerator", Empty)
    output = ragas_testset(
        "news", DOCS[:2], 2, llm=None, embeddings=None, seed=1, call_timeout_s=10
    )
    assert output.records == []
    assert output.note == (
        "ragas synthesized 0 samples (0 without question, reference or context) from a knowledge "
        "graph of 2 chunk, 1 document nodes (1 with entities) and 0 relationships"
    )
