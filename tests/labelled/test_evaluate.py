"""Labelled retrieval of a chunking end to end with a table embedder, placing passages without
spans, the bootstrap, and the agreement statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hope.labelled import (
    ChunkPassage,
    GoldReference,
    LabelledQuestion,
    LabelledSettings,
    evaluate_chunking,
    locate_passages,
)
from hope.labelled.agreement import kendall_tau, pairwise_agreement
from hope.labelled.bootstrap import mean_interval, paired_difference
from hope.labelled.dense_retrieval import rank_by_cosine
from tests.unit.fakes import TableEmbedder

CORPUS = "Cats purr softly. Dogs bark loudly. Birds sing at dawn."
# Spans: "Cats purr softly." [0,17), "Dogs bark loudly." [18,35), "Birds sing at dawn." [36,55)


def _question(text: str, start: int, end: int) -> LabelledQuestion:
    return LabelledQuestion(text, (GoldReference(start, end, CORPUS[start:end]),))


def test_evaluate_chunking_retrieves_by_cosine_and_scores_each_question():
    passages = [ChunkPassage(CORPUS[0:17], 0, 17), ChunkPassage(CORPUS[18:55], 18, 55)]
    questions = [_question("what purrs?", 5, 9), _question("who sings?", 42, 46)]
    embedder = TableEmbedder(
        {
            passages[0].text: [1.0, 0.0],
            passages[1].text: [0.0, 1.0],
            "what purrs?": [0.9, 0.1],
            "who sings?": [0.2, 0.8],
        }
    )
    result = evaluate_chunking(
        CORPUS, questions, passages, embedder, LabelledSettings(k=1, budget=17, n_resamples=50)
    )
    assert result["status"] == "ok"
    first, second = result["per_question"]
    assert first["top_k"] == [0] and second["top_k"] == [1]
    # "purr" [5,9) inside passage 0 (17 chars): recall 1, precision 4/17.
    assert first["recall"] == 1.0 and first["precision"] == pytest.approx(4 / 17)
    # "sing" [42,46) inside passage 1 (37 chars); the budget of 17 keeps [18,35): no gold.
    assert second["precision"] == pytest.approx(4 / 37)
    assert second["budget_recall"] == 0.0
    assert result["summary"]["recall"]["mean"] == 1.0
    assert result["summary"]["budget_recall"]["mean"] == 0.5
    assert result["summary"]["budget_recall"]["n"] == 2


def test_passages_without_spans_are_placed_by_exact_search():
    passages = [ChunkPassage("Dogs bark loudly."), ChunkPassage("Cats purr softly.")]
    spans, reason = locate_passages(CORPUS, passages)
    assert reason is None
    assert spans == [(18, 35), (0, 17)]


def test_repeated_text_is_placed_in_reading_order():
    corpus = "ab ab ab"
    spans, _ = locate_passages(corpus, [ChunkPassage("ab"), ChunkPassage("ab"), ChunkPassage("ab")])
    assert spans == [(0, 2), (3, 5), (6, 8)]


def test_a_rewritten_passage_makes_the_chunking_not_evaluable():
    passages = [ChunkPassage("Cats purr softly."), ChunkPassage("Dogs are loud barkers.")]
    embedder = TableEmbedder({})
    result = evaluate_chunking(CORPUS, [_question("what purrs?", 5, 9)], passages, embedder)
    assert result["status"] == "not_evaluable"
    assert "1 of 2 passages" in result["reason"] and "passages 1" in result["reason"]
    assert "summary" not in result
    assert embedder.calls == []  # nothing was retrieved or scored


def test_rank_by_cosine_breaks_ties_by_passage_order():
    ranking = rank_by_cosine(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]))
    assert ranking.tolist() == [[1, 2, 0]]


def test_bootstrap_is_seeded_and_exact_for_constant_values():
    constant = mean_interval([0.25] * 10, n_resamples=100, seed=3)
    assert constant == {"mean": 0.25, "low": 0.25, "high": 0.25, "n": 10}
    values = [0.1, 0.9, 0.4, math.nan, 0.7]
    assert mean_interval(values, seed=1) == mean_interval(values, seed=1)
    assert mean_interval(values, seed=1)["n"] == 4
    assert mean_interval(values)["mean"] == pytest.approx(0.525)


def test_paired_difference_significance():
    better = [0.9, 0.8, 1.0, 0.85, 0.95, 0.9, 0.88, 0.92]
    worse = [v - 0.5 for v in better]
    assert paired_difference(better, worse)["significant"] is True
    assert paired_difference(better, better)["significant"] is False
    noisy = paired_difference([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1])
    assert noisy["significant"] is False


def test_kendall_tau_by_hand():
    # Pairs of [1,2,3] vs [1,3,2]: (0,1) concordant, (0,2) concordant, (1,2) discordant.
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))  # a constant score orders nothing
    assert math.isnan(kendall_tau([1, 2], [1, 2]))


def test_pairwise_agreement_counts_only_significant_pairs():
    labelled = [0.9, 0.5, 0.1]
    scores = [3.0, 1.0, 2.0]  # orders (0,1) and (0,2) right, (1,2) wrong
    assert pairwise_agreement(scores, labelled, [(0, 1), (1, 2)]) == {
        "agreement": 0.5,
        "agreeing": 1,
        "pairs": 2,
    }
    tie = pairwise_agreement([1.0, 1.0, 0.0], labelled, [(0, 1)])
    assert tie["agreement"] == 0.0  # a tie does not pick the better chunker
    assert math.isnan(pairwise_agreement(scores, labelled, [])["agreement"])
