"""Correlations, bootstrap intervals, t-intervals, bins and gains against scipy and by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hope.analysis.stats import (
    _rowwise_ranks,
    binned_means,
    bootstrap_correlations,
    bootstrap_mean_ci,
    correlation_cell,
    correlation_table,
    mean_ci,
    min_max_gains,
    percentile_ci,
    range_fraction,
)


def test_pearson_of_a_hand_checkable_case():
    # dx = -2..2, dy = (-2, 0, 1, 0, 1): sum dx*dy = 6, sum dx^2 = 10, sum dy^2 = 6.
    cell = correlation_cell([1, 2, 3, 4, 5], [2, 4, 5, 4, 5], min_n=3, n_boot=0)
    assert cell["pearson_r"] == pytest.approx(6 / math.sqrt(60))
    assert cell["n"] == 5
    assert cell["reason"] == ""
    # Ranks of y with ties: (1, 2.5, 4.5, 2.5, 4.5); rho by the same formula on ranks.
    rx = np.arange(1, 6, dtype=float)
    ry = np.array([1, 2.5, 4.5, 2.5, 4.5])
    expected_rho = np.corrcoef(rx, ry)[0, 1]
    assert cell["spearman_rho"] == pytest.approx(expected_rho)


def test_matches_scipy_on_data_with_ties_and_missing_values():
    rng = np.random.default_rng(7)
    x = rng.normal(size=200)
    y = 0.3 * x + rng.normal(size=200)
    x[::17] = np.nan
    y[::23] = np.nan
    y[5:40] = np.round(y[5:40], 1)  # ties for Spearman
    cell = correlation_cell(x, y, n_boot=0)
    keep = np.isfinite(x) & np.isfinite(y)
    pearson = stats.pearsonr(x[keep], y[keep])
    spearman = stats.spearmanr(x[keep], y[keep])
    assert cell["n"] == int(keep.sum())
    assert cell["pearson_r"] == pytest.approx(pearson.statistic, abs=1e-12)
    assert cell["pearson_p"] == pytest.approx(pearson.pvalue, rel=1e-9)
    assert cell["spearman_rho"] == pytest.approx(spearman.statistic, abs=1e-12)
    assert cell["spearman_p"] == pytest.approx(spearman.pvalue, rel=1e-9)


def test_bootstrap_equals_an_explicit_loop_over_the_same_resamples():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 6, size=40).astype(float)  # many ties
    y = x + rng.normal(size=40)
    n_boot = 700  # more than one block of resamples
    boot_r, boot_rho = bootstrap_correlations(x, y, n_boot=n_boot, seed=11)
    draw = np.random.default_rng(11)
    expected_r, expected_rho = [], []
    for start in range(0, n_boot, 512):
        idx = draw.integers(0, len(x), size=(min(512, n_boot - start), len(x)))
        for row in idx:
            expected_r.append(stats.pearsonr(x[row], y[row]).statistic)
            expected_rho.append(stats.spearmanr(x[row], y[row]).statistic)
    np.testing.assert_allclose(boot_r, expected_r, atol=1e-12)
    np.testing.assert_allclose(boot_rho, expected_rho, atol=1e-12)
    cell = correlation_cell(x, y, n_boot=n_boot, seed=11)
    low, high = np.percentile(expected_r, [2.5, 97.5])
    assert (cell["pearson_ci_low"], cell["pearson_ci_high"]) == pytest.approx((low, high))
    low, high = np.percentile(expected_rho, [2.5, 97.5])
    assert (cell["spearman_ci_low"], cell["spearman_ci_high"]) == pytest.approx((low, high))


def test_bootstrap_interval_agrees_with_scipy_bootstrap():
    rng = np.random.default_rng(5)
    x = rng.normal(size=150)
    y = 0.5 * x + rng.normal(size=150)
    cell = correlation_cell(x, y, n_boot=4000, seed=2)
    ref = stats.bootstrap(
        (x, y),
        lambda a, b, axis=-1: stats.pearsonr(a, b, axis=axis).statistic,
        paired=True,
        vectorized=True,
        n_resamples=4000,
        method="percentile",
        random_state=np.random.default_rng(3),
    ).confidence_interval
    assert cell["pearson_ci_low"] == pytest.approx(ref.low, abs=0.03)
    assert cell["pearson_ci_high"] == pytest.approx(ref.high, abs=0.03)
    assert cell["pearson_ci_low"] < cell["pearson_r"] < cell["pearson_ci_high"]


def test_bootstrap_is_seeded():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=30), rng.normal(size=30)
    a = correlation_cell(x, y, n_boot=300, seed=4)
    b = correlation_cell(x, y, n_boot=300, seed=4)
    c = correlation_cell(x, y, n_boot=300, seed=5)
    assert a["pearson_ci_low"] == b["pearson_ci_low"]
    assert a["pearson_ci_low"] != c["pearson_ci_low"]


def test_too_few_pairs_give_nan_with_n():
    x = [0.1, 0.2, np.nan, 0.4, 0.5, 0.6]
    y = [1.0, 2.0, 3.0, np.nan, 5.0, 4.0]
    cell = correlation_cell(x, y, min_n=5, n_boot=100)
    assert cell["n"] == 4
    assert math.isnan(cell["pearson_r"]) and math.isnan(cell["pearson_p"])
    assert math.isnan(cell["pearson_ci_low"]) and math.isnan(cell["spearman_rho"])
    assert cell["reason"] == "n=4 < min_n=5"


def test_constant_column_gives_nan_with_reason():
    cell = correlation_cell([0.5] * 12, np.arange(12), min_n=3, x_name="ζ_con", n_boot=50)
    assert math.isnan(cell["pearson_r"])
    assert cell["reason"] == "constant ζ_con"
    assert cell["n"] == 12


def test_min_n_below_three_is_refused():
    with pytest.raises(ValueError, match="min_n"):
        correlation_cell([1, 2], [2, 1], min_n=2)


def test_degenerate_resamples_are_dropped_not_counted_as_zero():
    # Four pairs: about 1 in 64 resamples repeats a single pair and has no correlation.
    cell = correlation_cell([0, 1, 2, 3], [0, 1, 3, 2], min_n=3, n_boot=3000, seed=0)
    assert 0 < cell["n_boot_valid"] < 3000
    assert math.isfinite(cell["pearson_ci_low"])


def test_correlation_table_layout_and_pairwise_n(pairs):
    table = correlation_table(pairs, ["factual_correctness"], ["bleu", "hope"], n_boot=50, min_n=10)
    assert list(zip(table["row"], table["col"], strict=True)) == [
        ("factual_correctness", "bleu"),
        ("factual_correctness", "hope"),
    ]
    assert table["n"].tolist() == [56, 53]  # three HOPE scores are undefined
    with pytest.raises(KeyError, match="nope"):
        correlation_table(pairs, ["nope"], ["hope"])


def test_rowwise_ranks_equal_scipy_rankdata():
    rng = np.random.default_rng(2)
    values = rng.integers(0, 4, size=(20, 15)).astype(float)
    levels, codes = np.unique(values, return_inverse=True)
    np.testing.assert_allclose(
        _rowwise_ranks(codes.reshape(values.shape), len(levels)),
        stats.rankdata(values, axis=1),
    )


def test_mean_ci_matches_the_t_interval():
    values = [0.2, 0.4, 0.35, 0.5, np.nan, 0.3]
    n, mean, low, high = mean_ci(values)
    finite = np.array([0.2, 0.4, 0.35, 0.5, 0.3])
    ref = stats.t.interval(0.95, 4, loc=finite.mean(), scale=stats.sem(finite))
    assert n == 5 and mean == pytest.approx(finite.mean())
    assert (low, high) == pytest.approx(ref)
    n, mean, low, high = mean_ci([0.7])
    assert (n, mean) == (1, 0.7) and math.isnan(low) and math.isnan(high)
    assert mean_ci([])[0] == 0 and math.isnan(mean_ci([])[1])
    assert mean_ci([0.3, 0.3, 0.3])[2:] == (0.3, 0.3)


@pytest.mark.parametrize("interval", [mean_ci, bootstrap_mean_ci])
def test_both_mean_intervals_answer_alike_below_two_finite_values(interval):
    assert interval([np.nan, 0.7])[:2] == (1, 0.7)
    assert all(math.isnan(v) for v in interval([0.7])[2:])
    n, *rest = interval([np.nan])
    assert n == 0 and all(math.isnan(v) for v in rest)


def test_percentile_ci_ignores_nan():
    values = np.array([np.nan, *range(101)], dtype=float)
    assert percentile_ci(values) == pytest.approx((2.5, 97.5))
    assert all(math.isnan(v) for v in percentile_ci(np.array([np.nan])))


def test_binned_means_and_gain_by_hand():
    df = pd.DataFrame(
        {
            "x": np.arange(10, dtype=float),
            "a": [1, 1, 2, 2, 3, 3, 4, 4, 5, 7],
            "b": [0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
        }
    )
    bins = binned_means(df, "x", ["a", "b"], n_bins=5, min_bin_size=2)
    a = bins[bins["y"] == "a"]
    assert a["n"].tolist() == [2, 2, 2, 2, 2]
    assert a["mean"].tolist() == [1, 2, 3, 4, 6]
    assert a["x_mean"].tolist() == [0.5, 2.5, 4.5, 6.5, 8.5]
    # Bin (4, 4): t-interval of two equal values collapses to the mean.
    assert a.iloc[3][["ci_low", "ci_high"]].tolist() == [4, 4]
    gains = min_max_gains(bins, min_pairs=2)
    assert gains["a"]["gain_pct"] == pytest.approx((6 - 1) / 1 * 100)
    assert (gains["a"]["n_bottom"], gains["a"]["n_top"]) == (2, 2)
    assert math.isnan(gains["b"]["gain_pct"])
    assert gains["b"]["reason"] == "bottom-bin mean is 0"
    # The default rule: end bins of 2 pairs are too small for a ratio.
    assert min_max_gains(bins)["a"]["reason"] == "end bin n<5"
    assert math.isnan(min_max_gains(bins)["a"]["gain_pct"])


def test_gain_needs_a_bottom_mean_away_from_zero():
    """A bottom-bin mean near 0 makes any rise a huge percentage: n/a below min_base."""
    bins = pd.DataFrame(
        {
            "y": ["rr", "rr", "ok", "ok"],
            "bin": [0, 1, 0, 1],
            "n": [6, 6, 6, 6],
            "mean": [0.02, 0.39, 0.4, 0.5],
        }
    )
    gains = min_max_gains(bins)
    assert math.isnan(gains["rr"]["gain_pct"]) and gains["rr"]["reason"] == (
        "bottom-bin mean 0.020 < 0.05"
    )
    assert gains["ok"]["gain_pct"] == pytest.approx(25.0) and gains["ok"]["reason"] == ""
    assert min_max_gains(bins, min_base=0.01)["rr"]["gain_pct"] == pytest.approx(1850.0)


def test_bins_respect_min_bin_size_and_width_binning():
    df = pd.DataFrame({"x": np.linspace(0, 1, 9), "y": np.arange(9, dtype=float)})
    # 9 pairs, at least 3 per bin on average: 3 bins even though 10 were asked for.
    bins = binned_means(df, "x", ["y"], n_bins=10, min_bin_size=3, binning="width")
    assert len(bins) == 3
    assert bins["x_low"].tolist() == pytest.approx([0, 1 / 3, 2 / 3])
    assert bins["n"].sum() == 9  # the maximum falls in the last bin
    few = binned_means(df.head(5), "x", ["y"], min_bin_size=3)
    assert few.empty
    assert min_max_gains(few, ["y"])["y"]["reason"] == "fewer than two populated bins"
    with pytest.raises(ValueError, match="binning"):
        binned_means(df, "x", ["y"], binning="log")


def test_range_fraction():
    assert range_fraction([0.8, 0.85, np.nan, 0.9]) == pytest.approx(0.1)
    assert math.isnan(range_fraction([np.nan]))
