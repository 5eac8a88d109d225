"""Issue 11's fidelity fixes and the robust profile's options, over scripted answers.

De-duplication (eq. 2 defines S as a set), ``exclude_focus`` (paper vs published code), empty
answers failing the schema, and position debiasing of the ζ_inf choice. Expected values are worked
out by hand in the comments.
"""

import math

import pytest
from pydantic import ValidationError

from hope.core.hope_settings import ConfigError, load_profile
from hope.core.metrics import equations
from hope.core.metrics.information_preservation import Quadruple
from hope.core.prompts.response_schemas import AnswerResponse, QuadrupleResponse, statements_model

from .fakes import prompt_of, user_text
from .test_metrics import HANDLERS, LETTER, focus_of, paper, run


def options_of(request):
    return dict(
        line.split(". ", 1)
        for line in user_text(request).splitlines()
        if line[:2] in {"A.", "B.", "C.", "D."}
    )


def choice_requests(client):
    return [r for r in client.requests if "Exactly one of these statements" in user_text(r)]


# --- de-duplication -------------------------------------------------------------------------


def test_distinct_texts_folds_case_punctuation_and_whitespace():
    kept, duplicates = equations.distinct_texts(
        ["The cat.", "the  cat", "A dog", "", "  ", "THE CAT!"]
    )
    assert kept == ["The cat.", "A dog"]
    assert duplicates == 2


def test_duplicate_statements_count_once_in_concept_unity():
    # Passage b says b1 twice ("b1", "B1!") and b2 once. As a set S = {b1, b2}:
    # θ matrix [[1, 0], [0, 1]] -> ζ̄ = 2/4 = .5 (the multiset would give 5/9).
    def statements(request):
        tag = LETTER[focus_of(request)]
        return {"statements": [f"{tag}1", f"{tag.upper()}1!", f"{tag}2"]}

    settings = paper()
    settings.concept_unity.n_items = 3
    result, _ = run(settings, {**HANDLERS, "concept_statements": statements})
    b = result.passages[1]["concept_unity"]
    assert b["statements"] == ["b1", "b2"]
    assert b["duplicate_statements"] == 1
    assert b["score"] == pytest.approx(0.5)


def test_a_passage_left_with_too_few_distinct_statements_fails_with_that_reason():
    # A model that writes one statement three times: ζ̄ would be 1, the best score, for the worst
    # failure. As a set it is one statement < min_items = 2: recorded as failed, excluded.
    def repeated(request):
        tag = LETTER[focus_of(request)]
        return {"statements": [f"{tag}1", f"{tag}1", f"{tag.upper()}1."]}

    settings = paper()
    settings.concept_unity.n_items = 3
    result, _ = run(settings, {**HANDLERS, "concept_statements": repeated})
    for record in (p["concept_unity"] for p in result.passages):
        assert record["status"] == "failed"
        assert record["duplicate_statements"] == 2
        assert "1 distinct usable item(s), fewer than min_items=2" in record["reason"]
    assert math.isnan(result.concept_unity)
    assert result.counts["concept_unity"].failed == 3
    assert sum(f.metric == "concept_unity" for f in result.failures) == 3


def test_duplicate_questions_are_asked_once():
    def questions(request):
        tag = LETTER[focus_of(request)]
        return {"questions": [f"q-{tag}", f"Q-{tag.upper()}?"]}

    settings = paper()
    settings.semantic_independence.n_questions = 2
    result, client = run(settings, {**HANDLERS, "question_generation": questions})
    record = result.passages[0]["semantic_independence"]
    assert [q["question"] for q in record["questions"]] == ["q-a"]
    assert record["duplicate_questions"] == 1
    # 3 focus passages x 1 distinct question x (a*, a) = 6 answer requests, not 12
    assert sum("Question:" in user_text(r) for r in client.requests) == 6


# --- exclude_focus ----------------------------------------------------------------------------


def questions_closest_to_the_first_passage(request):
    return {"questions": ["q-c"]}  # q-c is E1, the vector of P[0]


@pytest.mark.parametrize(
    ("exclude_focus", "retrieved", "score"),
    [
        # paper: top-1 of all passages is p* itself; context {p*} ∪ P_q = p* alone, so the answer
        # with context is the answer alone ("alone-c" both times): θ = 1
        (False, ["0"], 1.0),
        # published code: p* removed; the other passages tie at θ = 0, the lower index wins (P1);
        # with two passages the answer is "ctx-c" = -E1: θ = -1, clipped to 0
        (True, ["1"], 0.0),
    ],
)
def test_exclude_focus_decides_whether_p_star_may_be_retrieved(exclude_focus, retrieved, score):
    settings = paper()
    settings.semantic_independence.exclude_focus = exclude_focus
    result, _ = run(
        settings, {**HANDLERS, "question_generation": questions_closest_to_the_first_passage}
    )
    record = result.passages[0]["semantic_independence"]
    assert record["questions"][0]["retrieved"] == retrieved
    assert record["score"] == pytest.approx(score)


def test_profiles_cite_their_choice_of_exclude_focus():
    assert load_profile("paper").semantic_independence.exclude_focus is False
    assert load_profile("reference").semantic_independence.exclude_focus is True
    assert load_profile("robust").semantic_independence.exclude_focus is False


# --- empty answers fail the schema ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "payload"),
    [
        (AnswerResponse, '{"answer": "   "}'),
        (statements_model(2), '{"statements": ["fine", " "]}'),
        (QuadrupleResponse, '{"true_statement": "", "false_statements": ["a", "b", "c"]}'),
    ],
)
def test_a_blank_string_fails_the_schema(model, payload):
    with pytest.raises(ValidationError, match="at least 1 character"):
        model.model_validate_json(payload)


def test_an_answer_that_stays_empty_is_a_recorded_failure_not_a_score():
    def blank(request):
        return {"answer": " "}

    result, client = run(paper(), {**HANDLERS, "answer_question": blank}, max_retries=2)
    record = result.passages[0]["semantic_independence"]
    assert record["status"] == "failed"
    assert "invalid response" in record["questions"][0]["reason"]
    assert math.isnan(result.semantic_independence)
    seeds = {r["seed"] for r in client.requests if "Question: q-a" in user_text(r)}
    assert len(seeds) > 1  # regenerated with derived seeds before giving up


# --- position debiasing (robust profile) ------------------------------------------------------


def test_reversed_options_move_the_true_statement_to_the_mirrored_letter():
    quad = Quadruple(("doc",), "T", ("F1", "F2", "F3"), order=(2, 0, 3, 1))
    assert quad.options() == {"A": "F2", "B": "T", "C": "F3", "D": "F1"}
    assert quad.answer_key() == "B"
    assert quad.options(reverse=True) == {"A": "F1", "B": "F3", "C": "T", "D": "F2"}
    assert quad.answer_key(reverse=True) == "C"


def always_a(request):
    return {"choice": "A"}


def always_right(request):
    return {"choice": next(k for k, v in options_of(request).items() if v.startswith("T"))}


def debiased(**changes):
    settings = paper(**changes)
    settings.information_preservation.position_debiasing = True
    return settings


def test_a_favourite_letter_scores_zero_when_debiased():
    # Whatever the key, "A" is right in at most one of the two orders (A <-> D), so no segment
    # counts: ζ_inf = 0 instead of the share of keys that happen to be A.
    result, client = run(debiased(), {**HANDLERS, "truth_choice": always_a})
    assert result.information_preservation == 0.0
    for record in result.segments:
        assert [c["order"] for c in record["choices"]] == ["seeded", "reversed"]
        assert [c["choice"] for c in record["choices"]] == ["A", "A"]
        mirrored = {"A": "D", "B": "C", "C": "B", "D": "A"}
        assert record["choices"][1]["answer_key"] == mirrored[record["choices"][0]["answer_key"]]
    # 2 segments x 2 orders: one extra request per segment and chunking
    assert len(choice_requests(client)) == 4


def test_a_model_right_in_both_orders_keeps_its_score_when_debiased():
    result, _ = run(debiased(), {**HANDLERS, "truth_choice": always_right})
    assert result.information_preservation == 1.0
    assert all(all(c["correct"] for c in r["choices"]) for r in result.segments)


def test_without_debiasing_one_choice_per_segment_as_in_eq_9():
    result, client = run(paper(), {**HANDLERS, "truth_choice": always_a})
    keys = [r["answer_key"] for r in result.segments]
    assert result.information_preservation == pytest.approx(keys.count("A") / len(keys))
    assert len(choice_requests(client)) == 2
    assert all(len(r["choices"]) == 1 for r in result.segments)


def test_robust_profile_holds_only_measures_the_benchmark_kept():
    # Position debiasing did not help on the validity benchmark (README "Validity"), so the
    # robust profile ships it off: today it equals the paper profile but for its name.
    paper_settings = load_profile("paper").model_dump()
    robust_settings = load_profile("robust").model_dump()
    assert robust_settings.pop("profile") == "robust"
    paper_settings.pop("profile")
    assert robust_settings == paper_settings


# --- judgement: support (each statement judged alone) -------------------------------------------


def support_requests(client):
    return [r for r in client.requests if prompt_of(r) == "statement_support"]


def statement_of(request):
    return next(
        line.removeprefix("Statement: ")
        for line in user_text(request).splitlines()
        if line.startswith("Statement: ")
    )


def supports_true_only(request):
    return {"verdict": "yes" if statement_of(request).startswith("T") else "no"}


def supports_everything(request):
    return {"verdict": "yes"}


def judged_alone(**changes):
    settings = paper(**changes)
    settings.information_preservation.judgement = "support"
    return settings


def test_support_counts_a_segment_when_only_its_true_statement_is_supported():
    result, client = run(judged_alone(), {**HANDLERS, "statement_support": supports_true_only})
    assert result.information_preservation == 1.0
    # 2 segments x 4 statements, each asked alone; no truth choice at all
    assert len(support_requests(client)) == 8
    assert not choice_requests(client)
    for record in result.segments:
        (judged,) = record["choices"]
        supported = [k for k, v in judged["verdicts"].items() if v == "yes"]
        assert supported == [record["answer_key"]]
        assert judged["options"][record["answer_key"]] == record["true_statement"]
        assert judged["correct"] and record["correct"]


def test_support_scores_a_judge_that_supports_everything_zero():
    # A yes-sayer supports the false statements too: no segment counts (a favourite letter in a
    # choice would still score the share of keys that happen to be that letter).
    result, _ = run(judged_alone(), {**HANDLERS, "statement_support": supports_everything})
    assert result.information_preservation == 0.0
    assert all(set(r["choices"][0]["verdicts"].values()) == {"yes"} for r in result.segments)


def test_support_counts_nothing_when_the_true_statement_is_not_supported():
    result, _ = run(judged_alone(), {**HANDLERS, "statement_support": lambda r: {"verdict": "no"}})
    assert result.information_preservation == 0.0


def test_support_plans_four_requests_a_segment_and_refuses_position_debiasing():
    from hope.core.metrics.information_preservation import planned_requests

    planned = planned_requests(judged_alone(), focus=1, passages=4, segments=5)
    assert [(r.kind, r.count) for r in planned] == [
        ("quadruple_generation", 5),
        ("statement_support", 20),
    ]
    with pytest.raises(ConfigError, match="position_debiasing"):
        load_profile(
            "paper", information_preservation={"judgement": "support", "position_debiasing": True}
        )
