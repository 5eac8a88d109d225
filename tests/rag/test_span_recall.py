"""Reference-span recall (hope.rag.span_recall): hand-computed values, its NaN reasons, and its
place in the ragas stage's rows and tables."""

from __future__ import annotations

import asyncio
import doctest
import math

import pytest

from hope.pipeline.ragas_step import attach_contexts
from hope.rag import span_recall
from hope.rag.ragas_scoring import aggregate, failure_summary, score_all
from hope.rag.span_recall import reference_span_recall

EXTRACTIVE = {
    "question_id": "q1",
    "doc_id": "d1",
    "domain": "news",
    "question": "Which words fill the gap?",
    "reference": "4,000 daily",
    "reference_span": [550, 561],
    "generator": "extractive",
}
ABSTRACTIVE = {**EXTRACTIVE, "question_id": "q2", "generator": "ragas", "reference_span": None}


def test_card_examples_hold():
    outcome = doctest.testmod(span_recall, report=True)
    assert outcome.attempted >= 4 and outcome.failed == 0


def test_answer_cut_between_two_retrieved_passages_is_whole():
    # 550..561 is cut at 555 by a fixed-size chunker; both halves retrieved.
    assert reference_span_recall((550, 561), "d1", [("d1", 500, 555), ("d1", 555, 610)]) == 1.0


def test_one_half_retrieved_counts_its_characters():
    # 5 of the 11 answer characters (550..555) lie in the retrieved passage.
    assert reference_span_recall((550, 561), "d1", [("d1", 500, 555)]) == pytest.approx(5 / 11)


def test_overlapping_passages_count_a_character_once():
    # (548, 556) and (552, 558) cover 550..558: 8 of 11 characters.
    got = reference_span_recall((550, 561), "d1", [("d1", 548, 556), ("d1", 552, 558)])
    assert got == pytest.approx(8 / 11)


def test_passages_of_another_document_hold_nothing_of_the_answer():
    assert reference_span_recall((550, 561), "d1", [("d2", 0, 10_000)]) == 0.0


def test_an_empty_or_reversed_reference_span_is_an_error():
    with pytest.raises(ValueError, match="reference span"):
        reference_span_recall((10, 10), "d1", [("d1", 0, 20)])
    with pytest.raises(ValueError, match="reference span"):
        reference_span_recall((-1, 5), "d1", [("d1", 0, 20)])


def test_undefined_cases_are_nan_with_their_reason():
    value, reason = span_recall.score(ABSTRACTIVE, [("d1", 500, 600)])
    assert math.isnan(value) and reason.startswith("no reference span")
    value, reason = span_recall.score(EXTRACTIVE, [("d1", None, None)])
    assert math.isnan(value) and reason == "a retrieved passage has no character offsets"
    # A passage of another document without offsets does not matter: it cannot hold the answer.
    assert span_recall.score(EXTRACTIVE, [("d2", None, None), ("d1", 540, 560)]) == (10 / 11, None)


def test_the_stage_attaches_spans_and_scores_them_beside_the_judged_indicators():
    passages = [
        {"passage_id": "p0", "doc_id": "d1", "text": "x" * 55, "start": 500, "end": 555},
        {"passage_id": "p1", "doc_id": "d1", "text": "y" * 55, "start": 555, "end": 610},
        {"passage_id": "p2", "doc_id": "d2", "text": "z", "start": 0, "end": 1},
    ]
    answers = [
        {"question_id": "q1", "chunker": "good", "answer": "a", "retrieved_passage_ids": ["p1"]},
        {"question_id": "q1", "chunker": "bad", "answer": "a", "retrieved_passage_ids": ["p2"]},
        {"question_id": "q2", "chunker": "good", "answer": "a", "retrieved_passage_ids": ["p0"]},
    ]
    items = attach_contexts(answers, passages)
    assert items[0]["retrieved_spans"] == [("d1", 555, 610)]
    questions = {"q1": EXTRACTIVE, "q2": {**ABSTRACTIVE, "doc_id": "d1"}}
    rows = asyncio.run(score_all(items, questions, {}, timeout_s=1.0))
    assert [r["reference_span_recall"] for r in rows[:2]] == [pytest.approx(6 / 11), 0.0]
    assert math.isnan(rows[2]["reference_span_recall"])
    table = {r["chunker"]: r for r in aggregate(rows)}
    assert table["good"]["reference_span_recall"] == pytest.approx(6 / 11)
    assert table["good"]["reference_span_recall_n"] == 2
    assert table["good"]["reference_span_recall_n_failed"] == 1
    assert failure_summary(rows)["failed_per_metric"] == {"reference_span_recall": 1}


def test_items_without_spans_get_no_such_column():
    item = {"question_id": "q1", "chunker": "c", "answer": "a", "retrieved_contexts": ["t"]}
    (row,) = asyncio.run(score_all([item], {"q1": EXTRACTIVE}, {}, timeout_s=1.0))
    assert "reference_span_recall" not in row
