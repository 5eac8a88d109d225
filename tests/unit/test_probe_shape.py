"""The gold-shape distribution of probe questions: measured from spans, drawn from deciles, and
the stored default equal to what Chroma's questions give (when the shared set is here)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hope.probe.question_shape import (
    CHROMA_SHAPE,
    QuestionShape,
    _from_deciles,
    measure_shape,
    shape_of,
)

CHROMA = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "chroma-general-eval"


def test_shape_of_hand_spans():
    # Lengths 10 | 20, 8 | 10, 10, 20; gaps 2 (adjacent) | 90, 90.
    shape = shape_of(
        [
            [(0, 10)],
            [(22, 30), (0, 20)],  # order does not matter
            [(0, 10), (100, 110), (200, 220)],
        ]
    )
    assert shape.count_shares == ((1, 0.3333), (2, 0.3333), (3, 0.3333))
    assert shape.adjacent_share == 0.3333
    assert shape.gap_deciles == (90,) * 11
    # Lengths sorted: 8, 10, 10, 10, 10, 20, 20 (numpy's linear percentiles).
    assert shape.length_deciles[0] == 8
    assert shape.length_deciles[5] == 10
    assert shape.length_deciles[10] == 20


def test_deciles_are_interpolated_linearly():
    deciles = (0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 1000)
    assert _from_deciles(deciles, 0.0) == 0
    assert _from_deciles(deciles, 0.25) == pytest.approx(25)
    assert _from_deciles(deciles, 0.95) == pytest.approx(545)
    assert _from_deciles(deciles, 1.0) == 1000


def test_draws_follow_the_shape():
    shape = QuestionShape(
        count_shares=((1, 0.0), (3, 1.0)),
        length_deciles=(100,) * 11,
        adjacent_share=1.0,
        gap_deciles=(0,) * 11,
    )
    rng = random.Random(0)
    assert {shape.draw_count(rng) for _ in range(20)} == {3}
    assert {shape.draw_length(rng) for _ in range(20)} == {100}
    assert {shape.draw_gap(rng) for _ in range(20)} == {0}
    assert shape.mean_count() == 3


def test_a_bad_shape_is_refused():
    with pytest.raises(ValueError, match="deciles"):
        QuestionShape(((1, 1.0),), (1, 2), 0.5, (0,) * 11)
    with pytest.raises(ValueError, match="adjacent_share"):
        QuestionShape(((1, 1.0),), (1,) * 11, 1.5, (0,) * 11)


def test_the_default_is_chromas_measured_shape():
    path = CHROMA / "questions.jsonl"
    if not path.is_file():
        pytest.skip(f"Chroma's evaluation set not found at {CHROMA}")
    assert measure_shape(path) == CHROMA_SHAPE
    assert CHROMA_SHAPE.mean_count() == pytest.approx(1.725, abs=0.001)
