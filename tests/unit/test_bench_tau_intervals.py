"""bench/bench_tau_intervals.py: its τ-b against scipy's, its bias-corrected interval by hand, and a
small run whose coverage is known (noise far below the gap between chunkers' means)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from bench_tau_intervals import (  # noqa: E402
    bias_corrected_interval,
    kendall_tau_b_rows,
    main,
    order_with_tau,
)
from hope.analysis.stats import percentile_ci  # noqa: E402


def test_tau_b_rows_is_scipys_with_and_without_ties():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(50, 7)).astype(float)  # many ties
    y = rng.normal(size=(50, 7))
    y[::5, :2] = y[::5, 2:3]  # some ties on this side too
    ours = kendall_tau_b_rows(x, y)
    for row, value in zip(range(50), ours, strict=True):
        expected = kendalltau(x[row], y[row]).statistic
        assert value == pytest.approx(expected) or (math.isnan(value) and math.isnan(expected))
    assert math.isnan(kendall_tau_b_rows(np.ones(7), np.arange(7.0))[0])  # a constant row


def test_order_with_tau():
    order = order_with_tau(15 / 21)
    assert kendalltau(order, range(7)).statistic == pytest.approx(15 / 21)
    with pytest.raises(SystemExit, match="no order of 7 chunkers has tau 0"):
        order_with_tau(0.0)  # 21 pairs: C - D is odd, so τ = 0 cannot occur


def test_bias_corrected_interval_by_hand():
    # Replicates 0..9, point 7: 7 below and 1 tied, share (7 + 1/2) / 10 = 0.75, z0 = Φ⁻¹(0.75)
    # = 0.6745. At 80 %: Φ(2 z0 ∓ 1.2816) = Φ(0.0674) = 0.5269 and Φ(2.6306) = 0.9957, which
    # numpy's linear percentiles put at positions 4.742 and 8.962 of the sorted ten.
    low, high = bias_corrected_interval(7.0, np.arange(10.0), confidence=0.8)
    assert (low, high) == pytest.approx((4.742, 8.962), abs=1e-3)
    # Every replicate above the point 0: the share 0 is clipped to 1 / 8, z0 = -1.1503;
    # Φ(2 z0 ∓ 1.96) = 1.0e-5 and 0.3667, positions 0.00003 and 1.1000 of 1, 2, 3, 4.
    assert bias_corrected_interval(0.0, np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(
        (1.0, 2.1), abs=1e-4
    )
    # The point at the replicates' median: the percentile interval.
    values = np.arange(101.0)
    assert bias_corrected_interval(50.0, values) == pytest.approx(percentile_ci(values))
    assert all(math.isnan(v) for v in bias_corrected_interval(math.nan, values))


def test_a_run_where_noise_is_far_below_the_gaps_covers_every_time(tmp_path):
    out = tmp_path / "tau_intervals.json"
    main(
        [
            "--true-taus", "0.428571", "--se-ratios", "0.01", "--repetitions", "10",
            "--blocks", "5", "--resamples", "50", "--output", str(out),
        ]
    )  # fmt: skip
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["provenance"]["command"].startswith("python bench/bench_tau_intervals.py")
    cells = record["cells"]
    assert [c["target"].split()[0] for c in cells] == ["noisy", "exact"]
    for cell in cells:
        assert cell["true_tau"] == pytest.approx(9 / 21)
        assert cell["median_estimate"] == pytest.approx(9 / 21)
        for method in ("percentile", "bias_corrected"):
            assert cell[method]["coverage"] == 1.0
            assert cell[method]["median_width"] == 0.0
            assert cell[method]["coverage_by_block"]["n"] == 5
