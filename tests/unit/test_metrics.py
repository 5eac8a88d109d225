"""The three sub-metrics and HOPE end to end over scripted LLM answers and a fixed vector table.

Expected values are worked out by hand in the comments.
"""

import math

import pytest

from hope.core.evaluator import HopeEvaluator, InputError
from hope.core.hope_settings import load_profile
from hope.testing import api_status_error

from .fakes import TableEmbedder, context_passages, make_llm, scripted, user_text

P = ["Alpha passage about apples.", "Beta passage about bees.", "Gamma passage about goats."]
DOC = "Sentence one is here. Sentence two is here. Sentence three is here. Sentence four is here."
R2 = 1 / math.sqrt(2)

E1, E2, E3, E4 = [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]
VECTORS = {
    P[0]: E1,
    P[1]: E2,
    P[2]: E3,
    # concept unity statements
    "a1": E1,
    "a2": E1,
    "b1": E1,
    "b2": E2,
    "c1": E1,
    "c2": [1, 1, 0, 0],
    # questions: q-a is closest to P1, q-b to P2, q-c to P0
    "q-a": E2,
    "q-b": E3,
    "q-c": E1,
    # answers: passage a is independent (θ=1), b changes (θ=0), c inverts (θ=-1 -> 0)
    "alone-a": E1,
    "ctx-a": E1,
    "alone-b": E1,
    "ctx-b": E2,
    "alone-c": E1,
    "ctx-c": [-1, 0, 0, 0],
    # quadruples: true statements and the options
    "T1": E4,
    "T2": E1,
    "F1a": E2,
    "F1b": E2,
    "F1c": E3,
    "F2a": E2,
    "F2b": E3,
    "F2c": E4,
}
LETTER = {P[0]: "a", P[1]: "b", P[2]: "c"}


def focus_of(request):
    return next(p for p in P if p in user_text(request))


def statements(request):
    tag = LETTER[focus_of(request)]
    return {"statements": [f"{tag}1", f"{tag}2"]}


def questions(request):
    return {"questions": [f"q-{LETTER[focus_of(request)]}"]}


def answer(request):
    passages = context_passages(request)
    tag = user_text(request).split("Question: q-")[1][0]
    return {"answer": f"alone-{tag}" if len(passages) == 1 else f"ctx-{tag}"}


def quadruple(request):
    if "Sentence one" in user_text(request):
        return {"true_statement": "T1", "false_statements": ["F1a", "F1b", "F1c"]}
    return {"true_statement": "T2", "false_statements": ["F2a", "F2b", "F2c"]}


def choice(request):
    text = user_text(request)
    options = dict(
        line.split(". ", 1) for line in text.splitlines() if line[:2] in {"A.", "B.", "C.", "D."}
    )
    true_letter = next(k for k, v in options.items() if v.startswith("T"))
    if "T1" in options.values():
        return {"choice": true_letter}  # segment 1: right
    return {"choice": next(k for k in options if k != true_letter)}  # segment 2: wrong


HANDLERS = {
    "concept_statements": statements,
    "question_generation": questions,
    "answer_question": answer,
    "quadruple_generation": quadruple,
    "truth_choice": choice,
}


def paper(**changes):
    settings = load_profile("paper", progress=False)
    settings.concept_unity.n_items = 2
    settings.semantic_independence.n_questions = 1
    settings.semantic_independence.top_k = 1
    settings.information_preservation.n_segments = 2
    for key, value in changes.items():
        setattr(settings, key, value)
    return settings


def run(settings, handlers=HANDLERS, passages=P, document=DOC, **llm_kwargs):
    llm, client = make_llm(scripted(handlers), **llm_kwargs)
    result = HopeEvaluator(llm, TableEmbedder(VECTORS), settings).evaluate(document, passages)
    return result, client


def test_paper_profile_matches_hand_computed_values():
    result, _ = run(paper())
    # ζ̄_con: a = 1; b = (2 + 2·0)/4 = .5; c = (2 + 2/√2)/4
    cu = [p["concept_unity"]["score"] for p in result.passages]
    assert cu == pytest.approx([1.0, 0.5, (2 + 2 * R2) / 4])
    assert result.concept_unity == pytest.approx((1.0 + 0.5 + (2 + 2 * R2) / 4) / 3)
    # ζ̄_sem: θ(a*,a) = 1, 0, -1 -> clipped 0
    si = [p["semantic_independence"] for p in result.passages]
    assert [s["raw"] for s in si] == pytest.approx([1.0, 0.0, -1.0])
    assert [s["score"] for s in si] == pytest.approx([1.0, 0.0, 0.0])
    assert result.semantic_independence == pytest.approx(1 / 3)
    # retrieval: the other passage most similar to each question (focus excluded)
    assert [s["questions"][0]["retrieved"] for s in si] == [["1"], ["2"], ["0"]]
    # ζ_inf: two windows of three sentences, one answered right
    assert [s["correct"] for s in result.segments] == [True, False]
    assert result.information_preservation == 0.5
    assert result.hope == pytest.approx(
        (result.concept_unity + result.semantic_independence + 0.5) / 3
    )
    assert result.failures == []


def test_evidence_is_kept_for_every_score():
    result, _ = run(paper())
    first = result.passages[0]
    assert first["concept_unity"]["statements"] == ["a1", "a2"]
    q = first["semantic_independence"]["questions"][0]
    assert (q["question"], q["answer_alone"], q["answer_with_context"]) == (
        "q-a",
        "alone-a",
        "ctx-a",
    )
    seg = result.segments[0]
    assert seg["true_statement"] == "T1" and seg["false_statements"] == ["F1a", "F1b", "F1c"]
    assert seg["options"][seg["answer_key"]] == "T1"
    # T1 is orthogonal to every passage: a three-way tie, broken by index
    assert seg["retrieved"] == ["0", "1", "2"]
    assert seg["choice"] == seg["answer_key"]
    assert set(result.prompts) == set(HANDLERS)
    assert all("@v" in p["id"] for p in result.prompts.values())
    data = result.to_dict()
    for key in (
        "hope",
        "concept_unity",
        "semantic_independence",
        "information_preservation",
        "passages",
        "failures",
        "usage",
    ):
        assert key in data


def test_reference_profile_aggregation_rules():
    settings = load_profile("reference", progress=False)
    settings.concept_unity.n_items = 2
    settings.semantic_independence.n_questions = 1
    settings.semantic_independence.top_k = 1
    settings.information_preservation.n_segments = 2
    settings.information_preservation.top_k = 1

    def qa_pairs(request):
        tag = LETTER[focus_of(request)]
        qs = {"a": ["a1", "b2"], "b": ["b1", "b2"], "c": ["c1", "c1x"]}[tag]
        return {"pairs": [{"question": q, "answer": "x"} for q in qs]}

    def critic(request):
        # keeps both pairs of a, only the first of b, both of c
        return {"keep": [True, "b1" not in user_text(request)]}

    vectors = dict(VECTORS, c1x=[-1, 0, 0, 0])
    handlers = dict(HANDLERS, qa_pairs=qa_pairs, qa_critic=critic)
    llm, _ = make_llm(scripted(handlers))
    result = HopeEvaluator(llm, TableEmbedder(vectors), settings).evaluate(DOC, P)
    cu = [p["concept_unity"] for p in result.passages]
    # a: (1,0,0,0),(0,1,0,0) -> each 45° from the centroid; b: one question -> 1;
    # c: opposite vectors -> centroid 0 -> θ = 0, and a per-passage 0 is dropped
    assert [c["score"] for c in cu] == pytest.approx([R2, 1.0, 0.0])
    assert cu[1]["critic_keep"] == [True, False]
    assert result.concept_unity == pytest.approx((R2 + 1.0) / 2)
    # semantic independence: 1, 0, 0 -> zeros dropped -> 1
    assert result.semantic_independence == pytest.approx(1.0)
    assert result.information_preservation == 0.5
    assert result.hope == pytest.approx(((R2 + 1) / 2 + 1 + 0.5) / 3)


def test_reference_profile_refuses_a_single_passage():
    with pytest.raises(InputError, match="at least 2"):
        run(load_profile("reference", progress=False), passages=P[:1])


def test_single_passage_under_the_paper_profile_is_trivially_independent():
    # P_q = {p*} (the top-k of all passages), so the context {p*} ∪ P_q is p* alone and
    # LLM(q, p*, P_q) is the very request LLM(q, p*): same answer, θ = 1
    result, client = run(paper(), passages=P[:1])
    si = result.passages[0]["semantic_independence"]
    assert si["questions"][0]["retrieved"] == ["0"]
    assert si["score"] == pytest.approx(1.0)
    answer_requests = [r for r in client.requests if "Question:" in user_text(r)]
    # Both answers are asked concurrently; identical requests, so the second waits for the first.
    assert len(answer_requests) == 1


def test_document_shorter_than_a_segment_is_one_segment():
    result, _ = run(paper(), document="Sentence one is here. Sentence two is here.")
    assert len(result.segments) == 1
    assert result.segments[0]["segment"] == "Sentence one is here. Sentence two is here."


def test_a_failed_item_is_excluded_and_reported_never_scored_zero():
    def flaky_statements(request):
        if focus_of(request) == P[1]:
            raise api_status_error(500)
        return statements(request)

    result, _ = run(paper(), dict(HANDLERS, concept_statements=flaky_statements), max_retries=1)
    cu = result.passages[1]["concept_unity"]
    assert cu["status"] == "failed" and "HTTP 500" in cu["reason"] and cu["score"] is None
    assert result.concept_unity == pytest.approx((1.0 + (2 + 2 * R2) / 4) / 2)
    assert result.counts["concept_unity"].failed == 1
    assert result.counts["concept_unity"].scored == 2
    assert [f.metric for f in result.failures] == ["concept_unity"]
    assert result.usage["llm"]["failures"] == 1


def test_all_items_failed_gives_nan_and_a_warning_not_a_number():
    def broken(request):
        raise api_status_error(400, "context length exceeded")

    result, client = run(paper(), dict(HANDLERS, quadruple_generation=broken))
    assert math.isnan(result.information_preservation)
    assert math.isnan(result.hope)
    assert any("information_preservation is undefined" in w for w in result.warnings)
    assert result.to_dict()["information_preservation"] is None
    # a 400 is not retried
    assert sum("Text:" in user_text(r) for r in client.requests) == 2


def test_failed_answer_is_excluded_in_paper_and_zero_in_reference():
    def no_context_answers(request):
        if len(context_passages(request)) > 1:
            raise api_status_error(503)
        return answer(request)

    handlers = dict(HANDLERS, answer_question=no_context_answers)
    result, _ = run(paper(), handlers, max_retries=0)
    assert math.isnan(result.semantic_independence)
    settings = paper()
    settings.semantic_independence.failed_answer = "zero"
    result, _ = run(settings, handlers, max_retries=0)
    q = result.passages[0]["semantic_independence"]["questions"][0]
    assert q["status"] == "scored_zero" and q["similarity"] == 0.0
    assert result.semantic_independence == 0.0


def test_same_seed_same_numbers_other_seed_other_requests():
    from hope.testing import schema_responder

    def seeded_run(seed):
        llm, client = make_llm(schema_responder)
        from hope.models.embeddings import HashingEmbedder

        settings = load_profile("paper", progress=False, seed=seed)
        settings.information_preservation.n_segments = 2
        result = HopeEvaluator(llm, HashingEmbedder(), settings).evaluate(DOC, P)
        return result, sorted(r["seed"] for r in client.requests)

    first, seeds1 = seeded_run(7)
    again, seeds2 = seeded_run(7)
    _, seeds3 = seeded_run(8)
    assert first.scores == again.scores and seeds1 == seeds2
    assert seeds1 != seeds3


def test_segments_are_shared_across_chunkings_of_one_document():
    # same document, two chunkings: identical quadruple requests, so the cache serves the second
    _, client1 = run(paper())
    _, client2 = run(paper(), passages=[P[0], P[1]])
    quads = lambda c: [r for r in c.requests if "Text:" in user_text(r)]  # noqa: E731
    assert [r["seed"] for r in quads(client1)] == [r["seed"] for r in quads(client2)]


@pytest.mark.parametrize(
    ("document", "passages", "message"),
    [
        ("   ", P, "document is empty"),
        (DOC, [], "passage list is empty"),
        (DOC, [P[0], "  "], "passage 1 is empty"),
    ],
)
def test_bad_input_is_named(document, passages, message):
    with pytest.raises(InputError, match=message):
        run(paper(), document=document, passages=passages)


def test_quadruple_with_repeated_statements_is_regenerated_with_a_new_seed():
    calls = []

    def lazy_quadruple(request):
        calls.append(request["seed"])
        if len(calls) == 1:
            return {"true_statement": "T1", "false_statements": ["T1", "F1b", "F1c"]}
        return quadruple(request)

    settings = paper()
    settings.information_preservation.n_segments = 1
    result, _ = run(settings, dict(HANDLERS, quadruple_generation=lazy_quadruple))
    assert len(calls) == 2 and calls[0] != calls[1]
    assert result.segments[0]["status"] == "ok"
    assert result.usage["llm"]["invalid_responses"] == 1


def test_focus_passage_sampling_scores_a_seeded_subset_and_says_so():
    settings = paper(focus_passages=2)
    result, _ = run(settings)
    statuses = [p["concept_unity"]["status"] for p in result.passages]
    assert statuses.count("not_sampled") == 1
    assert result.counts["concept_unity"].total == 2
    again, _ = run(paper(focus_passages=2))
    assert [p["concept_unity"]["status"] for p in again.passages] == statuses
    sampled = [
        p["concept_unity"]["score"]
        for p in result.passages
        if p["concept_unity"]["score"] is not None
    ]
    assert result.concept_unity == pytest.approx(sum(sampled) / 2)
