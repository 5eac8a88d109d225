"""HOPE against the probe's retrieval measure, per chunker and scope: the figure that sets the
label-free retrieval ranking beside HOPE (issue #32), in the style of Figures 6 and 7.

One panel per scope (``overall`` first, then each domain): each chunker is a point at its mean
HOPE (x) and its mean probe measure (y), with both 95 % intervals as error bars, one colour per
chunker across panels. Where HOPE and the probe agree, the chunkers lie on a rising line; a
chunker far right and low is one HOPE favours and retrieval does not.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from hope.analysis.figures import PALETTE, WIDTH_IN, paper_style
from hope.analysis.leaderboard import OVERALL
from hope.analysis.paper import MATH_LABELS

COLUMNS = 4


def _error(row: pd.Series, column: str) -> list[list[float]]:
    """Asymmetric error bar lengths from the interval columns (0 where no interval)."""
    low, high = row[f"{column}_ci_low"], row[f"{column}_ci_high"]
    if math.isnan(low) or math.isnan(high):
        return [[0.0], [0.0]]
    return [[row[column] - low], [high - row[column]]]


def figure_probe_vs_hope(board: pd.DataFrame) -> Figure:
    """``board``: the leaderboard with the probe's columns (``hope.analysis.probe_board``)."""
    scopes = list(dict.fromkeys(board["scope"]))
    scopes = [OVERALL, *(s for s in scopes if s != OVERALL)] if OVERALL in scopes else scopes
    chunkers = sorted(board["chunker"].unique())
    colours = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(chunkers)}
    measured = board[board["probe_rank"].notna()]
    measure = measured["probe_measure"].iloc[0] if len(measured) else "probe"
    rows = max(1, math.ceil(len(scopes) / COLUMNS))
    with paper_style():
        fig = Figure(figsize=(WIDTH_IN, 1.9 * rows + 0.9), layout="constrained")
        axes = np.atleast_1d(fig.subplots(rows, COLUMNS, squeeze=False).ravel())
        for ax, scope in zip(axes, scopes, strict=False):
            here = board[(board["scope"] == scope) & board["hope"].notna() & board["probe"].notna()]
            ax.set_title(scope)
            if here.empty:
                ax.text(
                    0.5,
                    0.5,
                    "no chunker with both",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                )
                ax.set_xticks([])
                ax.set_yticks([])
                continue
            for _, row in here.iterrows():
                ax.errorbar(
                    row["hope"],
                    row["probe"],
                    xerr=_error(row, "hope"),
                    yerr=_error(row, "probe"),
                    fmt="o",
                    markersize=4,
                    capsize=2,
                    linewidth=0.8,
                    color=colours[row["chunker"]],
                    label=row["chunker"],
                )
            # A chunker scored on one document has no interval; keep its point off the frame.
            ax.margins(x=0.2, y=0.15)
            ax.set_xlabel(MATH_LABELS.get("hope", "HOPE"))
            ax.set_ylabel(measure if ax.get_subplotspec().is_first_col() else "")
        for ax in axes[len(scopes) :]:
            ax.set_visible(False)
        handles = [
            Line2D([], [], marker="o", markersize=4, linestyle="", color=colours[c])
            for c in chunkers
        ]
        fig.legend(handles=handles, labels=chunkers, loc="outside lower center", ncols=4)
        fig.suptitle(f"HOPE against the retrieval probe ({measure}), per chunker")
    return fig


__all__ = ["figure_probe_vs_hope"]
