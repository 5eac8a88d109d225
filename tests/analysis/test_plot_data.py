"""The data of Figure 7 in the wide shape `dvc plots` templates (one column per indicator)."""

import math

import numpy as np
import pandas as pd
import pytest

from hope.analysis.stats import binned_means, binned_series


def test_binned_series_by_hand():
    df = pd.DataFrame(
        {
            "x": np.arange(10, dtype=float),
            "a": [1, 1, 2, 2, 3, 3, 4, 4, 5, np.nan],
            "b": [0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
        }
    )
    # Quantile edges 0, 1.8, 3.6, 5.4, 7.2, 9: the bins hold x = {0,1} {2,3} {4,5} {6,7} {8,9}.
    bins = binned_means(df, "x", ["a", "b"], n_bins=5, min_bin_size=2)
    series = binned_series(df, "x", ["a", "b"], bins)
    assert list(series.columns) == ["bin", "x_low", "x_high", "n", "x", "a", "b"]
    assert series["bin"].tolist() == [0, 1, 2, 3, 4]
    assert series["n"].tolist() == [2, 2, 2, 2, 2]
    # x is the mean over every pair of the bin, also where an indicator is missing (x = 9) ...
    assert series["x"].tolist() == [0.5, 2.5, 4.5, 6.5, 8.5]
    # ... while a's own bin mean leaves that pair out, as in Figure 7.
    assert series["a"].tolist() == [1, 2, 3, 4, 5]
    assert series["b"].tolist() == [0, 1, 1, 1, 1]
    assert series["x_low"].tolist() == pytest.approx([0, 1.8, 3.6, 5.4, 7.2])


def test_binned_series_of_an_unbinnable_table_has_columns_and_no_row():
    df = pd.DataFrame({"x": [0.1, 0.2, 0.3], "a": [1.0, 2.0, 3.0]})
    bins = binned_means(df, "x", ["a"], min_bin_size=5)
    assert bins.empty
    series = binned_series(df, "x", ["a"], bins)
    assert series.empty and list(series.columns) == ["bin", "x_low", "x_high", "n", "x", "a"]


def test_a_bin_without_values_of_an_indicator_is_nan():
    df = pd.DataFrame({"x": np.arange(6, dtype=float), "a": [1, 1, np.nan, np.nan, 3, 3]})
    series = binned_series(df, "x", ["a"], binned_means(df, "x", ["a"], n_bins=3, min_bin_size=2))
    assert series["n"].tolist() == [2, 2, 2]
    assert series["a"].iloc[0] == 1 and math.isnan(series["a"].iloc[1]) and series["a"].iloc[2] == 3
