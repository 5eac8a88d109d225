"""Does a score rank the ladder as it should? Shares of wins, Kendall τ, bootstrap intervals.

Inputs are plain numbers per (document, rung); NaN marks an undefined score, which is never a win,
tie or loss but counted as undefined. Intervals are percentile bootstraps over documents (the unit
that was sampled), seeded.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

TIE_TOLERANCE = 1e-9
Scores = Mapping[str, Mapping[str, float]]  # document -> rung -> score


def outcome(best: float, degraded: float) -> str:
    """'win' when the best rung scores strictly higher, 'tie', 'loss', or 'undefined' (NaN)."""
    if math.isnan(best) or math.isnan(degraded):
        return "undefined"
    if abs(best - degraded) <= TIE_TOLERANCE:
        return "tie"
    return "win" if best > degraded else "loss"


def win_share(outcomes: Sequence[str]) -> float:
    """The share of wins among the defined outcomes (ties count as not won); NaN if none is."""
    defined = [o for o in outcomes if o != "undefined"]
    return sum(o == "win" for o in defined) / len(defined) if defined else math.nan


def _bootstrap(
    per_document: Sequence[Sequence[Any]], statistic, n_boot: int, seed: int
) -> list[float] | None:
    if not per_document:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        picks = rng.integers(0, len(per_document), size=len(per_document))
        value = statistic([x for i in picks for x in per_document[i]])
        if not math.isnan(value):
            values.append(value)
    if not values:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return [float(low), float(high)]


def comparisons(
    scores: Scores,
    best: str,
    degraded: Sequence[str],
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Per degraded rung and pooled: wins, ties, losses, undefined, the share of wins among the
    defined comparisons and its 95 % bootstrap interval over documents."""
    outcomes = {rung: [outcome(s[best], s[rung]) for s in scores.values()] for rung in degraded}
    table: dict[str, Any] = {
        rung: _summary([[o] for o in by_doc], n_boot, seed) for rung, by_doc in outcomes.items()
    }
    # Pooled, a document is resampled with its outcomes against every degraded rung.
    pooled_by_doc = [list(doc) for doc in zip(*outcomes.values(), strict=True)]
    table["pooled"] = _summary(pooled_by_doc, n_boot, seed)
    return table


def _summary(by_doc: list[list[str]], n_boot: int, seed: int) -> dict[str, Any]:
    flat = [o for doc in by_doc for o in doc]
    counts = Counter(flat)
    return {
        "wins": counts["win"],
        "ties": counts["tie"],
        "losses": counts["loss"],
        "undefined": counts["undefined"],
        "share_wins": win_share(flat),
        "share_wins_ci95": _bootstrap(by_doc, win_share, n_boot, seed),
    }


def kendall_tau(expected_order: Sequence[str], scores: Mapping[str, float]) -> float:
    """τ-b between the ladder (best first) and the scores of one document; NaN when a score is
    undefined or every score is equal (no ranking to compare)."""
    values = [scores[rung] for rung in expected_order]
    if any(math.isnan(v) for v in values) or len(set(values)) < 2:
        return math.nan
    quality = list(range(len(expected_order), 0, -1))  # higher = better, as the scores
    return float(scipy_stats.kendalltau(quality, values).statistic)


def mean_with_ci(values: Sequence[float], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Mean over documents of the defined values, with a 95 % bootstrap interval."""
    defined = [[v] for v in values if not math.isnan(v)]
    if not defined:
        return {"mean": math.nan, "n": 0, "ci95": None}
    return {
        "mean": float(np.mean([v[0] for v in defined])),
        "n": len(defined),
        "ci95": _bootstrap(defined, lambda xs: float(np.mean(xs)), n_boot, seed),
    }


def accuracy(correct_by_doc: Sequence[Sequence[bool]], *, n_boot: int = 2000, seed: int = 0):
    """Share of right answers pooled over documents, with a bootstrap interval over documents."""
    flat = [c for doc in correct_by_doc for c in doc]

    def share(xs: Sequence[bool]) -> float:
        return sum(xs) / len(xs) if xs else math.nan

    return {
        "accuracy": share(flat),
        "n": len(flat),
        "ci95": _bootstrap([list(d) for d in correct_by_doc if d], share, n_boot, seed),
    }


def letter_distribution(letters: Sequence[str]) -> dict[str, Any]:
    """Counts and shares of the chosen letters, and a χ² test against a uniform choice."""
    counts = Counter(letters)
    table = {k: counts.get(k, 0) for k in "ABCD"}
    n = sum(table.values())
    result: dict[str, Any] = {"n": n, "counts": table}
    if n:
        result["shares"] = {k: v / n for k, v in table.items()}
        result["chi2_uniform_p"] = float(scipy_stats.chisquare(list(table.values())).pvalue)
    return result
