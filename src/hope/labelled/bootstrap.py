"""Seeded bootstrap over questions: means with percentile intervals, and paired differences.

Every chunking of a corpus is resampled with the same question indices (same seed, same number of
questions), so differences between chunkings are paired.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from hope.analysis.stats import percentile_ci

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


def resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, n)`` indices drawn with replacement from ``range(n)``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_resamples, n))


def mean_interval(
    values: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """Mean over the finite values, its bootstrap interval and how many values were finite."""
    array = np.asarray(values, dtype=float)
    n = int(np.isfinite(array).sum())
    if n == 0:
        return {"mean": math.nan, "low": math.nan, "high": math.nan, "n": 0}
    indices = resample_indices(len(array), n_resamples, seed)
    with warnings.catch_warnings():
        # A resample that drew only NaNs has no mean; the interval skips it.
        warnings.simplefilter("ignore", RuntimeWarning)
        replicates = np.nanmean(array[indices], axis=1)
    low, high = percentile_ci(replicates, confidence)
    return {"mean": float(np.nanmean(array)), "low": low, "high": high, "n": n}


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """Mean of ``a - b`` over questions where both are finite, its interval, and whether the
    interval excludes 0 (``significant``)."""
    left, right = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if left.shape != right.shape:
        raise ValueError(f"paired values of different lengths: {left.shape} vs {right.shape}")
    diff = left - right
    result = mean_interval(diff, n_resamples=n_resamples, seed=seed, confidence=confidence)
    result["significant"] = bool(
        math.isfinite(result["low"]) and (result["low"] > 0 or result["high"] < 0)
    )
    return result
