"""Chunker leaderboard: means, intervals, ranks and paired comparisons against scipy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hope.analysis.leaderboard import leaderboard, recommendation
from hope.analysis.stats import bootstrap_mean_ci

HOPE = {
    # chunker: HOPE per document d0..d3 (domain A: d0, d1; domain B: d2, d3)
    "good": [0.80, 0.70, 0.75, 0.72],
    "close": [0.78, 0.69, 0.74, 0.73],
    "bad": [0.40, 0.35, 0.50, np.nan],
}


@pytest.fixture
def small() -> pd.DataFrame:
    rows = []
    for chunker, values in HOPE.items():
        for d, value in enumerate(values):
            rows.append(
                {
                    "doc_id": f"d{d}",
                    "domain": "A" if d < 2 else "B",
                    "chunker": chunker,
                    "hope": value,
                    "concept_unity": 0.8,
                    "semantic_independence": value - 0.1,
                    "information_preservation": 0.5 + d / 10,
                }
            )
    return pd.DataFrame(rows)


def test_overall_ranks_means_and_intervals(small):
    board = leaderboard(small)
    overall = board[board["scope"] == "overall"].set_index("chunker")
    assert overall["rank"].tolist() == [1, 2, 3]
    assert list(overall.index) == ["good", "close", "bad"]
    n, mean, low, high = bootstrap_mean_ci(HOPE["good"])
    assert overall.loc["good", ["hope", "hope_ci_low", "hope_ci_high", "hope_n"]].tolist() == [
        pytest.approx(mean),
        pytest.approx(low),
        pytest.approx(high),
        n,
    ]
    assert overall.loc["bad", "hope_n"] == 3
    # Paired over the documents both scored.
    p = stats.ttest_rel(HOPE["close"], HOPE["good"]).pvalue
    assert overall.loc["close", "p_vs_best"] == pytest.approx(p)
    assert overall.loc["close", "gap_to_best"] == pytest.approx(
        np.mean(np.subtract(HOPE["close"], HOPE["good"]))
    )
    assert overall.loc["bad", "gap_n"] == 3
    assert overall.loc["good", "gap_to_best"] == 0 and math.isnan(overall.loc["good", "p_vs_best"])


def test_domains_with_one_document_have_no_interval(small):
    board = leaderboard(small)
    assert set(board["scope"]) == {"A", "B", "overall"}
    b = board[board["scope"] == "B"].set_index("chunker")
    assert b.loc["bad", "hope_n"] == 1
    assert math.isnan(b.loc["bad", "hope_ci_low"])
    assert b.loc["bad", "rank"] == 3


def test_recommendation_names_the_pick_and_the_ties(small):
    text = recommendation(leaderboard(small))
    assert text.startswith("overall: pick **good** (HOPE 0.742 [")
    assert "not than close" in text
    assert "significantly better than bad" in text


def test_undefined_scores_rank_last(small):
    small.loc[small["chunker"] == "bad", "hope"] = np.nan
    board = leaderboard(small)
    overall = board[board["scope"] == "overall"].set_index("chunker")
    assert math.isnan(overall.loc["bad", "rank"])
    assert list(overall.index)[-1] == "bad"
    assert "NaN" not in recommendation(board)
