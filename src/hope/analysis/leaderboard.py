"""Chunker leaderboard: HOPE and its sub-metrics per chunker, per domain and overall.

Every document is scored under every chunker, so chunkers are compared on the same documents:
beside each chunker's mean and percentile-bootstrap interval (which stays within the scores'
range [0, 1]), the board gives its paired HOPE difference to the top-ranked chunker of the scope
and a paired t-test p-value, which says whether the lead is distinguishable from noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from hope.analysis.paper import HOPE_METRICS, SIGNIFICANCE_LEVEL
from hope.analysis.stats import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE, bootstrap_mean_ci

OVERALL = "overall"


def _paired_gap(df: pd.DataFrame, chunker: str, best: str, metric: str) -> tuple[int, float, float]:
    """(n, mean difference chunker - best, paired t-test p) over documents both have scored."""
    wide = df.pivot(index="doc_id", columns="chunker", values=metric)
    if chunker == best:
        return int(wide[chunker].notna().sum()), 0.0, math.nan
    both = wide[[chunker, best]].dropna()
    n = len(both)
    if n == 0:
        return 0, math.nan, math.nan
    diff = (both[chunker] - both[best]).to_numpy()
    gap = float(diff.mean())
    if n < 2 or np.ptp(diff) == 0:
        # Without spread the t statistic is undefined; report the gap and no p-value.
        return n, gap, math.nan
    return n, gap, float(stats.ttest_rel(both[chunker], both[best]).pvalue)


def _scope_board(
    df: pd.DataFrame,
    scope: str,
    metrics: Sequence[str],
    confidence: float,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> list[dict[str, Any]]:
    rows = []
    for chunker, group in df.groupby("chunker", sort=True):
        row: dict[str, Any] = {
            "scope": scope,
            "chunker": chunker,
            "documents": group["doc_id"].nunique(),
        }
        for metric in metrics:
            n, mean, low, high = bootstrap_mean_ci(
                group[metric].to_numpy(dtype=float), confidence, n_boot=n_boot, seed=seed
            )
            row.update(
                {f"{metric}_n": n, metric: mean, f"{metric}_ci_low": low, f"{metric}_ci_high": high}
            )
        rows.append(row)
    primary = metrics[0]
    # NaN means sort last, ties keep the chunker's name order so the board is deterministic.
    rows.sort(
        key=lambda r: (math.isnan(r[primary]), -(r[primary] if not math.isnan(r[primary]) else 0))
    )
    best = rows[0]["chunker"] if rows and not math.isnan(rows[0][primary]) else None
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank if not math.isnan(row[primary]) else math.nan
        if best is None:
            row.update(gap_n=0, gap_to_best=math.nan, p_vs_best=math.nan)
        else:
            n, gap, p = _paired_gap(df, row["chunker"], best, primary)
            row.update(gap_n=n, gap_to_best=gap, p_vs_best=p)
    return rows


def leaderboard(
    df: pd.DataFrame,
    *,
    metrics: Sequence[str] = tuple(HOPE_METRICS),
    by: str = "domain",
    confidence: float = DEFAULT_CONFIDENCE,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> pd.DataFrame:
    """Per scope (each value of ``by``, then ``overall``) every chunker ranked by ``metrics[0]``.

    Columns: scope, rank, chunker, documents, and per metric its mean, ``_ci_low``/``_ci_high``
    (seeded percentile bootstrap over documents, within the scores' range; NaN below two
    documents) and ``_n``; then ``gap_to_best`` (mean paired difference of the first metric to
    the scope's top chunker over ``gap_n`` shared documents) and
    ``p_vs_best`` (paired t-test; NaN for the top chunker itself and below two shared documents).
    The overall scope pools all pairs, so large domains weigh more, as in the paper's pooled
    analysis.
    """
    rows: list[dict[str, Any]] = []
    for scope, group in df.groupby(by, sort=True):
        rows.extend(_scope_board(group, str(scope), metrics, confidence, n_boot, seed))
    rows.extend(_scope_board(df, OVERALL, metrics, confidence, n_boot, seed))
    columns = ["scope", "rank", "chunker", "documents"]
    for metric in metrics:
        columns += [metric, f"{metric}_ci_low", f"{metric}_ci_high", f"{metric}_n"]
    columns += ["gap_to_best", "gap_n", "p_vs_best"]
    return pd.DataFrame.from_records(rows, columns=columns)


def recommendation(
    board: pd.DataFrame, scope: str = OVERALL, metrics: Sequence[str] = tuple(HOPE_METRICS)
) -> str:
    """One sentence per scope: which chunker to pick, what it is strong at, and who is tied."""
    rows = board[board["scope"] == scope]
    primary = metrics[0]
    ranked = rows[rows["rank"].notna()].sort_values("rank")
    if ranked.empty:
        return f"{scope}: no chunker has a defined HOPE score."
    top = ranked.iloc[0]
    ci = (
        f" [{top[f'{primary}_ci_low']:.3f}, {top[f'{primary}_ci_high']:.3f}]"
        if not math.isnan(top[f"{primary}_ci_low"])
        else f" (no interval: {int(top[f'{primary}_n'])} document(s))"
    )
    label = HOPE_METRICS.get(primary, primary)
    text = f"{scope}: pick **{top['chunker']}** ({label} {top[primary]:.3f}{ci})"
    subs = [m for m in metrics[1:] if m in rows.columns]
    # The sub-metric where the winner stands furthest above the field explains the pick.
    leads = {m: top[m] - rows[m].mean() for m in subs if not math.isnan(top[m])}
    if leads:
        strongest = max(leads, key=lambda m: leads[m])
        name = HOPE_METRICS.get(strongest, strongest)
        text += f"; its largest lead over the field's mean is {name} ({leads[strongest]:+.3f})"
    others = ranked.iloc[1:]
    untestable = others[others["p_vs_best"].isna()]["chunker"].tolist()
    tied = others[others["p_vs_best"] >= SIGNIFICANCE_LEVEL]["chunker"].tolist()
    worse = others[others["p_vs_best"] < SIGNIFICANCE_LEVEL]["chunker"].tolist()
    if others.empty:
        pass
    elif len(untestable) == len(others):
        text += "; too few shared documents to test the lead (paired t-test needs n ≥ 2)"
    elif not worse:
        text += "; no other chunker is significantly worse (paired t-test, p < 0.05)"
    elif tied or untestable:
        text += f"; significantly better than {', '.join(worse)} (paired t-test, p < 0.05)"
        if tied:
            text += f", not than {', '.join(tied)}"
        if untestable:
            text += f"; untested against {', '.join(untestable)} (n < 2 or no spread)"
    else:
        text += "; significantly better than every other chunker (paired t-test, p < 0.05)"
    return text + "."
