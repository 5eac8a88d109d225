"""Issue #33: every printed or drawn interval of a bounded score stays in its range [0, 1].

A Student-t interval of a few documents' scores near a bound crosses it (the leaderboard printed
ζ_sem "0.700 [0.322, 1.077]", Figure 7's context-recall band rose above 1.0); the percentile
bootstrap cannot, and a share's Wilson interval cannot either.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from hope.analysis.paper import HOPE_METRICS, INDICATORS
from hope.analysis.report import AnalysisConfig, build_outputs
from hope.analysis.stats import bootstrap_mean_ci, mean_ci, wilson_ci
from tests.analysis.synthetic import make_tables


def near_the_bounds() -> dict[str, pd.DataFrame]:
    """The synthetic tables with skewed scores on few documents: ζ_sem mostly 1 with an outlier
    near 0, ζ_inf mostly 0 with one high value, context recall near 1."""
    tables = make_tables(docs_per_domain=3, chunkers=("a_chunker", "b_chunker"), seed=1)
    scores, ragas = tables["scores"], tables["ragas"]
    rng = np.random.default_rng(7)
    n = len(scores)
    # Distinct values, so that Figure 7 finds quantile bins of ζ_sem.
    pattern_sem = np.resize([1.0, 0.99, 0.1], n) - np.arange(n) / (10 * n)
    pattern_inf = np.resize([0.0, 0.0, 0.64], n)
    scores["semantic_independence"] = pattern_sem
    scores["information_preservation"] = pattern_inf
    scores["hope"] = (scores["concept_unity"] + pattern_sem + pattern_inf) / 3
    ragas["context_recall"] = np.resize([1.0, 1.0, 1.0, 0.2], len(ragas))
    ragas["answer_correctness"] = np.clip(rng.normal(0.95, 0.1, len(ragas)), 0, 1)
    return tables


def test_the_t_interval_would_leave_the_range_on_these_scores():
    # The data of the test below do make a t-interval cross 1 (the bug), not the bootstrap.
    assert mean_ci([1.0, 1.0, 0.1])[3] > 1.0
    n, mean, low, high = bootstrap_mean_ci([1.0, 1.0, 0.1])
    assert (n, mean) == (3, pytest.approx(0.7)) and 0.1 <= low <= mean <= high <= 1.0


def test_leaderboard_and_figure7_intervals_stay_in_0_1():
    tables = near_the_bounds()
    result = build_outputs(
        tables["scores"],
        tables["bleu"],
        tables["ragas"],
        config=AnalysisConfig(min_n=3, n_bins=4, min_bin_size=3),
    )
    board = result.leaderboard
    checked = 0
    for metric in HOPE_METRICS:
        for side in ("low", "high"):
            values = board[f"{metric}_ci_{side}"].dropna()
            checked += len(values)
            assert ((values >= 0) & (values <= 1)).all(), (metric, side, values.tolist())
    assert checked > 0
    # On these scores a t-interval crosses a bound in some scope (what the board printed).
    crossed = [
        metric
        for metric in HOPE_METRICS
        for _, rows in result.pairs.groupby(["domain", "chunker"])
        if (lambda t: t[2] < 0 or t[3] > 1)(mean_ci(rows[metric].to_numpy(dtype=float)))
    ]
    assert crossed
    # Every interval printed in the leaderboard's Markdown and LaTeX.
    for name in ("leaderboard.md", "leaderboard.tex"):
        printed = re.findall(r"\[\$?(-?[\d.]+)\$?, \$?(-?[\d.]+)\$?\]", result.texts[name])
        assert printed, name
        assert all(0 <= float(v) <= 1 for pair in printed for v in pair), (name, printed)
    # Figure 7's data (figure7_bins.csv) and the bands drawn.
    bins = result.bins
    assert set(bins["y"]) == set(INDICATORS) and bins["ci_high"].notna().any()
    for side in ("ci_low", "ci_high"):
        values = bins[side].dropna()
        assert ((values >= 0) & (values <= 1)).all(), (side, values.tolist())
    figure = result.figures["figure7"]
    from matplotlib.collections import PolyCollection

    bands = [c for ax in figure.axes for c in ax.collections if isinstance(c, PolyCollection)]
    drawn = [p.vertices[:, 1] for band in bands for p in band.get_paths()]
    assert drawn and all(((ys >= 0) & (ys <= 1)).all() for ys in drawn)


def test_bootstrap_interval_is_seeded_and_clips_to_bounds():
    values = [0.2, 0.9, 0.95, 1.0, 0.4]
    assert bootstrap_mean_ci(values) == bootstrap_mean_ci(values)
    assert bootstrap_mean_ci(values, seed=1) != bootstrap_mean_ci(values, seed=2)
    assert bootstrap_mean_ci([1.2, 1.3], bounds=(0.0, 1.0))[2:] == (1.0, 1.0)
    assert math.isnan(bootstrap_mean_ci([0.5])[2]) and bootstrap_mean_ci([])[0] == 0
    assert bootstrap_mean_ci([0.3, 0.3])[2:] == (0.3, 0.3)


def test_wilson_interval_of_a_share_by_hand():
    # 0 of 10: [0, z²/(n+z²)]; 10 of 10: its mirror; 5 of 10: symmetric around 0.5.
    z = 1.959963984540054
    low, high = wilson_ci(0, 10)
    assert low == 0 and high == pytest.approx(z * z / (10 + z * z))
    assert wilson_ci(10, 10) == pytest.approx((1 - high, 1.0))
    low, high = wilson_ci(5, 10)
    assert (low + high) / 2 == pytest.approx(0.5) and low == pytest.approx(0.2366, abs=1e-4)
    assert all(math.isnan(v) for v in wilson_ci(0, 0))
    with pytest.raises(ValueError):
        wilson_ci(3, 2)
