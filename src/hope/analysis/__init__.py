"""Paper outputs of the HOPE reproduction: correlations (Table 2), Table 1, Figures 6 and 7 and a
chunker leaderboard, computed from the pipeline's per-(document, chunker) tables.

The functions are pure (frames in, frames, strings and figures out);
:mod:`hope.analysis.paper_files`
reads the inputs and writes ``paper_figures/``; :mod:`hope.analysis.paper_tracking` logs it to
MLflow.
"""

from hope.analysis.figures import figure6, figure6_by_chunker, figure7, figure_bytes
from hope.analysis.leaderboard import leaderboard, recommendation
from hope.analysis.pair_table import JoinError, JoinReport, join_pairs
from hope.analysis.paper import HOPE_METRICS, INDICATORS, PAPER_TABLE2, PREDICTORS
from hope.analysis.report import AnalysisConfig, AnalysisResult, build_outputs
from hope.analysis.stats import (
    binned_means,
    bootstrap_mean_ci,
    correlation_cell,
    correlation_table,
    mean_ci,
    min_max_gains,
    range_fraction,
    wilson_ci,
)

__all__ = [
    "HOPE_METRICS",
    "INDICATORS",
    "PAPER_TABLE2",
    "PREDICTORS",
    "AnalysisConfig",
    "AnalysisResult",
    "JoinError",
    "JoinReport",
    "binned_means",
    "bootstrap_mean_ci",
    "build_outputs",
    "correlation_cell",
    "correlation_table",
    "figure6",
    "figure6_by_chunker",
    "figure7",
    "figure_bytes",
    "join_pairs",
    "leaderboard",
    "mean_ci",
    "min_max_gains",
    "range_fraction",
    "recommendation",
    "wilson_ci",
]
