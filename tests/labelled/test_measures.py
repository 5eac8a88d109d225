"""Chroma's measures on hand-built spans; every expected value is computed by hand in a comment."""

from __future__ import annotations

import math

import pytest

from hope.labelled.measures import budget_spans, question_measures
from hope.labelled.spans import covered, overlap, union


def test_union_merges_overlapping_and_touching_spans():
    assert union([(5, 10), (0, 3), (8, 12), (12, 14), (20, 20)]) == [(0, 3), (5, 14)]
    assert covered([(0, 10), (5, 15)]) == 15  # [0, 15): shared characters count once
    assert overlap([(0, 10), (20, 30)], [(5, 25)]) == 10  # 5..10 and 20..25


def test_overlapping_passages_count_each_character_once():
    # P0 [0,10), P1 [5,15), P2 [15,30); gold [8,12) (4 chars); ranking P1, P0, P2.
    spans = [(0, 10), (5, 15), (15, 30)]
    m = question_measures([(8, 12)], spans, [1, 0, 2], k=2, budget=12)
    # top-2 = P1 ∪ P0 = [0,15): 15 distinct characters (20 with the overlap twice); all 4 gold.
    assert m["recall"] == 1.0
    assert m["precision"] == pytest.approx(4 / 15)
    assert m["iou"] == pytest.approx(4 / 15)  # gold inside R: |G ∪ R| = 15
    # Holders of gold: P0 (8..10) and P1 (8..12); union [0,15).
    assert m["precision_omega"] == pytest.approx(4 / 15)
    # Budget 12: P1 whole (10 chars), then P0 cut to its first 2 characters [0,2).
    assert m["budget_recall"] == 1.0


def test_budget_cuts_the_last_passage():
    spans = [(0, 10), (5, 15), (15, 30)]
    assert budget_spans(spans, [1, 0, 2], 12) == [(5, 15), (0, 2)]
    # Budget 5: P1 cut to [5,10); gold [8,12) keeps 8..10 = 2 of 4 characters.
    m = question_measures([(8, 12)], spans, [1, 0, 2], k=1, budget=5)
    assert m["budget_recall"] == 0.5
    # The budget counts each passage's full length, overlap included: P1 (10) + P0 (10) = 20.
    assert budget_spans(spans, [1, 0, 2], 20) == [(5, 15), (0, 10)]


def test_reference_spanning_two_passages():
    # P0 [0,10), P1 [10,20), P2 [20,30); gold [7,13) (6 chars: 3 in P0, 3 in P1).
    spans = [(0, 10), (10, 20), (20, 30)]
    top1 = question_measures([(7, 13)], spans, [0, 2, 1], k=1, budget=10)
    assert top1["recall"] == 0.5  # 3 of 6
    assert top1["precision"] == pytest.approx(0.3)  # 3 of 10
    assert top1["iou"] == pytest.approx(3 / 13)  # |G ∪ R| = 6 + 10 - 3
    assert top1["precision_omega"] == pytest.approx(0.3)  # P0 ∪ P1 = 20 chars, 6 gold
    top2 = question_measures([(7, 13)], spans, [0, 2, 1], k=2, budget=15)
    assert top2["recall"] == 0.5
    assert top2["precision"] == pytest.approx(3 / 20)
    assert top2["iou"] == pytest.approx(3 / 23)
    assert top2["budget_recall"] == 0.5  # P0 whole, P2 cut to [20,25): no more gold
    full = question_measures([(7, 13)], spans, [0, 2, 1], k=3, budget=30)
    assert full["recall"] == 1.0 and full["budget_recall"] == 1.0
    assert full["precision"] == pytest.approx(0.2)  # 6 of 30


def test_multi_span_references():
    # Gold [2,4) in P0 and [25,29) in P2: 6 chars. Top-1 is P2.
    spans = [(0, 10), (10, 20), (20, 30)]
    m = question_measures([(2, 4), (25, 29)], spans, [2, 1, 0], k=1, budget=10)
    assert m["recall"] == pytest.approx(4 / 6)
    assert m["precision"] == pytest.approx(0.4)
    assert m["iou"] == pytest.approx(4 / 12)  # 6 + 10 - 4
    assert m["precision_omega"] == pytest.approx(6 / 20)  # holders P0, P2
    # Overlapping gold spans are one set of characters: [2,6) ∪ [4,8) = 6 chars.
    merged = question_measures([(2, 6), (4, 8)], spans, [0], k=1, budget=10)
    assert merged["recall"] == 1.0
    assert merged["precision"] == pytest.approx(0.6)


def test_precision_omega_is_undefined_when_no_passage_holds_gold():
    # Gold in the gap between passages (e.g. whitespace a chunker stripped).
    m = question_measures([(6, 8)], [(0, 5), (10, 15)], [0, 1], k=1, budget=5)
    assert math.isnan(m["precision_omega"])
    assert m["recall"] == 0.0 and m["precision"] == 0.0 and m["iou"] == 0.0


@pytest.mark.parametrize(
    ("gold", "k", "budget", "message"),
    [([(3, 3)], 1, 10, "non-empty gold"), ([(0, 2)], 0, 10, "k must"), ([(0, 2)], 1, 0, "budget")],
)
def test_invalid_arguments(gold, k, budget, message):
    with pytest.raises(ValueError, match=message):
        question_measures(gold, [(0, 10)], [0], k=k, budget=budget)
