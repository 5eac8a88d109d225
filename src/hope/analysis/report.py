"""Every paper output from the pipeline's tables, in memory (hope.analysis.paper_files reads and
writes).

:func:`build_outputs` joins the inputs and computes Table 2, the leaderboard, the Figure 7 bins
and gains, and the figures; :meth:`AnalysisResult.files` renders them to the bytes of each file
of ``paper_figures/``. Nothing here reads or writes files.
"""

from __future__ import annotations

import io
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from hope.analysis.figures import figure6, figure6_by_chunker, figure7, figure_bytes
from hope.analysis.leaderboard import OVERALL, leaderboard
from hope.analysis.pair_table import JoinReport, join_pairs
from hope.analysis.paper import (
    HOPE_METRICS,
    INDICATORS,
    PAPER_GAINS_PCT,
    PREDICTORS,
    SIGNIFICANCE_LEVEL,
)
from hope.analysis.probe_board import probe_table, with_probe
from hope.analysis.probe_figure import figure_probe_vs_hope
from hope.analysis.stats import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_MIN_N,
    binned_means,
    binned_series,
    correlation_table,
    finite_or_none,
    min_max_gains,
    range_fraction,
)
from hope.analysis.tables import (
    leaderboard_latex,
    leaderboard_markdown,
    table1_latex,
    table1_markdown,
    table2_frame,
    table2_latex,
    table2_markdown,
)

FIGURE_FORMATS = ("png", "pdf")


@dataclass(frozen=True)
class AnalysisConfig:
    seed: int = 2025
    n_boot: int = DEFAULT_BOOTSTRAP
    min_n: int = DEFAULT_MIN_N
    n_bins: int = 10
    min_bin_size: int = 5
    binning: str = "quantile"
    confidence: float = DEFAULT_CONFIDENCE
    allow_missing: tuple[str, ...] = ("ragas",)


@dataclass
class AnalysisResult:
    config: AnalysisConfig
    pairs: pd.DataFrame
    join: JoinReport
    table2: pd.DataFrame
    leaderboard: pd.DataFrame
    bins: pd.DataFrame
    gains: dict[str, dict[str, Any]]
    range_fractions: dict[str, float]
    figures: dict[str, Figure]
    texts: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)

    def files(self, formats: Collection[str] = FIGURE_FORMATS) -> dict[str, bytes]:
        """File name (relative to the output folder) -> content, for every output."""
        out = {name: text.encode("utf-8") for name, text in self.texts.items()}
        for name, fig in self.figures.items():
            for fmt in formats:
                out[f"{name}.{fmt}"] = figure_bytes(fig, fmt)
        out["metrics.json"] = (
            json.dumps(self.metrics, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        ).encode("utf-8")
        return out


def _csv(df: pd.DataFrame) -> str:
    buf = io.StringIO()
    df.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


def headline_metrics(result: AnalysisResult) -> dict[str, Any]:
    """The numbers ``dvc metrics show`` lists: population, significant Table 2 cells, gains,
    ranges, leaderboard.

    ``dvc metrics show`` prints one table with a column per key of every metrics file, so Table
    2's cells (table2.csv) and the settings (the stage's params) stay out; the paper's constants
    stay out too (they are in table2.csv and figure7_gains.csv), so that ``dvc metrics diff``
    shows only what a rerun can change.
    """
    pairs = result.pairs
    significant = int((result.table2["pearson_p"] < SIGNIFICANCE_LEVEL).sum())
    overall = result.leaderboard[result.leaderboard["scope"] == OVERALL]
    board = {row["chunker"]: row["hope"] for _, row in overall.iterrows()}
    best = overall[overall["rank"] == 1]
    metrics = {
        "pairs": len(pairs),
        "documents": int(pairs["doc_id"].nunique()),
        "chunkers": int(pairs["chunker"].nunique()),
        "missing_pairs": {name: len(keys) for name, keys in result.join.missing.items()},
        "table2_significant_cells": significant,
        "figure7_gain_pct": {INDICATORS[y]: g["gain_pct"] for y, g in result.gains.items()},
        "range_fraction": {name: result.range_fractions[name] for name in HOPE_METRICS},
        "leaderboard_overall_hope": board,
        "best_chunker": best["chunker"].iloc[0] if len(best) else None,
        "best_chunker_hope": best["hope"].iloc[0] if len(best) else None,
    }
    if "probe_rank" in overall.columns:
        first = overall[overall["probe_rank"] == 1]
        metrics["probe_best_chunker"] = first["chunker"].iloc[0] if len(first) else None
    return finite_or_none(metrics)


def build_outputs(
    scores: pd.DataFrame,
    bleu: pd.DataFrame,
    ragas: pd.DataFrame,
    table1: pd.DataFrame | None = None,
    config: AnalysisConfig | None = None,
    probe: Mapping[str, Any] | None = None,
) -> AnalysisResult:
    """Join the three per-pair tables and compute every table, figure and headline number;
    with ``probe`` (the probe stage's report), its retrieval ranking beside HOPE on the
    leaderboard and in ``figure_probe_vs_hope``."""
    config = config or AnalysisConfig()
    pairs, report = join_pairs(scores, bleu, ragas, allow_missing=config.allow_missing)
    correlations = correlation_table(
        pairs,
        list(INDICATORS),
        list(PREDICTORS),
        min_n=config.min_n,
        n_boot=config.n_boot,
        seed=config.seed,
        confidence=config.confidence,
    )
    if report.not_run:
        unused = correlations["row"].isin(report.not_run)
        correlations.loc[unused, "reason"] = "not run (ragas.metrics)"
    table2 = table2_frame(correlations)
    board = leaderboard(pairs, confidence=config.confidence, n_boot=config.n_boot, seed=config.seed)
    if probe is not None:
        board = with_probe(board, probe_table(probe))
    bins = binned_means(
        pairs,
        "semantic_independence",
        list(INDICATORS),
        n_bins=config.n_bins,
        min_bin_size=config.min_bin_size,
        binning=config.binning,
        confidence=config.confidence,
        n_boot=config.n_boot,
        seed=config.seed,
    )
    gains = min_max_gains(bins, list(INDICATORS))
    fractions = {m: range_fraction(pairs[m].to_numpy(dtype=float)) for m in HOPE_METRICS}
    order = list(dict.fromkeys(pairs["chunker"]))
    figures = {
        "figure6": figure6(pairs),
        "figure6_by_chunker": figure6_by_chunker(pairs, order=order),
        "figure7": figure7(bins, gains, pairs),
    }
    if probe is not None:
        figures["figure_probe_vs_hope"] = figure_probe_vs_hope(board)
    result = AnalysisResult(
        config=config,
        pairs=pairs,
        join=report,
        table2=table2,
        leaderboard=board,
        bins=bins,
        gains=gains,
        range_fractions=fractions,
        figures=figures,
    )
    settings = {"min_n": config.min_n, "n_boot": config.n_boot, "seed": config.seed}
    gains_frame = pd.DataFrame.from_records(
        [{"indicator": INDICATORS[y], "column": y, **g} for y, g in gains.items()]
    )
    gains_frame["paper_gain_pct"] = [PAPER_GAINS_PCT.get(y) for y in gains]
    result.texts = {
        "pairs.csv": _csv(pairs),
        "table2.csv": _csv(table2),
        "table2.md": table2_markdown(table2, **settings),
        "table2.tex": table2_latex(table2, n_boot=config.n_boot),
        "leaderboard.csv": _csv(board),
        "leaderboard.md": leaderboard_markdown(board),
        "leaderboard.tex": leaderboard_latex(board),
        "figure7_bins.csv": _csv(bins),
        "figure7_series.csv": _csv(
            binned_series(pairs, "semantic_independence", list(INDICATORS), bins)
        ),
        "figure7_gains.csv": _csv(gains_frame),
    }
    if table1 is not None:
        result.texts.update(
            {
                "table1.csv": _csv(table1),
                "table1.md": table1_markdown(table1),
                "table1.tex": table1_latex(table1),
            }
        )
    result.metrics = headline_metrics(result)
    return result
