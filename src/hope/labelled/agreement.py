"""Does a label-free score order chunkers like labelled retrieval does? Kendall τ and pairwise
agreement across the chunkers of one corpus, with bootstrap intervals.

The interval comes from replicates the caller builds (resampled questions for the labelled side,
resampled items such as focus passages for the label-free side); this module only turns aligned
score vectors into τ and agreement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np

# One percentile interval for the whole package (bench/bench_labelled.py imports it from here).
from hope.analysis.stats import percentile_ci as percentile_interval  # noqa: F401


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's τ-b over the positions where both are finite; NaN below 3 or if one is constant."""
    from scipy.stats import kendalltau

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if a.size < 3 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    return float(kendalltau(a, b).statistic)


def pairwise_agreement(
    scores: Sequence[float],
    labelled: Sequence[float],
    significant: Sequence[tuple[int, int]],
) -> dict[str, float | int]:
    """Share of the ``significant`` pairs (i, j) that ``scores`` orders like ``labelled``.

    Only pairs whose labelled difference is significant are counted; a tie or a NaN in the
    label-free score counts as not agreeing (it fails to pick the better chunker).
    """
    agree = 0
    for i, j in significant:
        truth = np.sign(labelled[i] - labelled[j])
        guess = np.sign(scores[i] - scores[j]) if math.isfinite(scores[i] - scores[j]) else 0.0
        agree += int(truth != 0 and guess == truth)
    n = len(significant)
    return {"agreement": agree / n if n else math.nan, "agreeing": agree, "pairs": n}


def all_pairs(n: int) -> list[tuple[int, int]]:
    return list(combinations(range(n), 2))
