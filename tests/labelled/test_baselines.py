"""The cheap label-free baselines with hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hope.baselines import (
    CARDS,
    compute_baselines,
    context_windows,
    contextual_coherence,
    intra_chunk_cohesion,
    size_compliance,
)
from tests.unit.fakes import TableEmbedder


def test_size_compliance_counts_passages_inside_the_range_inclusive():
    score, items = size_compliance([50, 100, 500, 1100, 1200], 100, 1100)
    assert score == pytest.approx(3 / 5)
    assert items == [0.0, 1.0, 1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="empty"):
        size_compliance([10], 20, 10)


def test_intra_chunk_cohesion_by_hand():
    passages = np.array([[1.0, 0.0], [0.0, 1.0]])
    sentences = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0]])]
    score, items = intra_chunk_cohesion(passages, sentences)
    assert items == [0.5, 1.0]  # (1 + 0) / 2 and 1
    assert score == pytest.approx(0.75)


def test_context_windows_join_the_neighbours():
    assert context_windows(["a", "b", "c"]) == ["b", "a\nc", "b"]
    assert context_windows(["alone"]) == [None]


def test_contextual_coherence_by_hand():
    passages = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    windows = [np.array([0.0, 1.0]), np.array([0.6, 0.8]), np.array([0.0, 1.0])]
    score, items = contextual_coherence(passages, windows)
    assert items == pytest.approx([0.0, 0.8, 0.0])
    assert score == pytest.approx(0.8 / 3)
    single, _ = contextual_coherence(np.array([[1.0, 0.0]]), [None])
    assert math.isnan(single)


def test_compute_baselines_with_a_table_embedder():
    first, second = "Cats purr. Dogs bark.", "Birds sing."
    embedder = TableEmbedder(
        {
            first: [1.0, 0.0],
            "Cats purr.": [1.0, 0.0],
            "Dogs bark.": [0.0, 1.0],
            second: [0.6, 0.8],
        }
    )
    result = compute_baselines([first, second], embedder, min_chars=10, max_chars=15)
    assert result["size_compliance"]["score"] == 0.5  # 21 characters out, 11 in
    # first: sentences (1,0) and (0,1) against (1,0): (1 + 0) / 2; second: itself, 1.
    assert result["intra_chunk_cohesion"]["score"] == pytest.approx(0.75)
    # Each passage's window is the other one: cosine 0.6 both ways.
    assert result["contextual_coherence"]["score"] == pytest.approx(0.6)
    assert result["passage_count"]["score"] == 2.0
    assert len(embedder.calls) == 1  # every distinct text embedded once, in one batch


def test_every_baseline_has_a_card():
    assert set(CARDS) == {
        "size_compliance",
        "intra_chunk_cohesion",
        "contextual_coherence",
        "passage_count",
    }
    for card in CARDS.values():
        assert card.range and card.direction and card.source and card.procedure
