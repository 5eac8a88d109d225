"""Figures 6 and 7 of the paper, sized for a printed page (7 in wide, 9 pt text and larger).

The functions return matplotlib figures and never touch files; :func:`figure_bytes` renders one
to PNG or PDF for whoever writes it. Figures are built as bare :class:`~matplotlib.figure.Figure`
objects, outside pyplot: no backend or display is needed, and nothing stays registered in pyplot
after a stage has written its files.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from hope.analysis.paper import (
    HOPE_METRICS,
    INDICATORS,
    MATH_LABELS,
    PAPER_CONCEPT_UNITY_RANGE,
    PAPER_GAINS_PCT,
)
from hope.analysis.stats import range_fraction

WIDTH_IN = 7.0
PNG_DPI = 300
PAPER_RC: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "figure.titlesize": 10,
    # TrueType fonts in the PDF, so the text stays editable and searchable.
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
PALETTE = sns.color_palette("colorblind")


@contextmanager
def paper_style():
    with sns.axes_style("whitegrid"), plt.rc_context(PAPER_RC):
        yield


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """The figure rendered as ``png`` (300 dpi) or ``pdf``, with stable PDF metadata."""
    buf = io.BytesIO()
    # No creation date: the PDF stays identical across reruns of the same data.
    metadata = {"CreationDate": None} if fmt == "pdf" else None
    # The font type of the PDF is read at save time, so the style applies here too.
    with paper_style():
        fig.savefig(buf, format=fmt, dpi=PNG_DPI, bbox_inches="tight", metadata=metadata)
    return buf.getvalue()


def _empty_panel(ax, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def figure6(df: pd.DataFrame, metrics: Sequence[str] = tuple(HOPE_METRICS)) -> Figure:
    """Distributions of HOPE and its sub-metrics over all (document, chunker) pairs.

    Each panel states n and the share of the [0, 1] range the values span (section 5.1 reads
    about 10 % for concept unity).
    """
    with paper_style():
        fig = Figure(figsize=(WIDTH_IN, 2.7), layout="constrained")
        axes = fig.subplots(1, len(metrics), squeeze=False)[0]
        for ax, metric, color in zip(axes, metrics, PALETTE, strict=False):
            values = df[metric].to_numpy(dtype=float)
            values = values[np.isfinite(values)]
            label = MATH_LABELS.get(metric, metric)
            if values.size == 0:
                _empty_panel(ax, "no defined values")
                ax.set_title(label)
                continue
            # A density estimate of a handful of points, or of one value, would be invented shape.
            kde = values.size >= 5 and np.ptp(values) > 0
            sns.histplot(
                x=values, ax=ax, bins=np.linspace(0, 1, 21), kde=kde, color=color, stat="count"
            )
            ax.set_xlim(0, 1)
            # Short tick labels: "1.0" and the next panel's "0.0" would run together.
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
            ax.set_xlabel(label)
            ax.set_ylabel("pairs" if ax is axes[0] else "")
            title = f"{label}\nn={values.size}, range {range_fraction(values):.0%}"
            if metric == "concept_unity":
                title += f"\n(paper ≈{PAPER_CONCEPT_UNITY_RANGE:.0%})"
            ax.set_title(title)
        fig.suptitle(f"Distributions over {len(df)} document–chunker pairs")
    return fig


def figure6_by_chunker(
    df: pd.DataFrame,
    metrics: Sequence[str] = tuple(HOPE_METRICS),
    order: Sequence[str] | None = None,
) -> Figure:
    """The distributions of Figure 6 split by chunker: a box and the pairs of each chunker."""
    order = list(order) if order is not None else sorted(df["chunker"].unique())
    height = max(3.5, 1.2 + 0.3 * len(order) * 2)
    with paper_style():
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        axes = fig.subplots(2, 2, sharey=True)
        for ax, metric in zip(axes.flat, metrics, strict=False):
            data = df[["chunker", metric]].dropna()
            label = MATH_LABELS.get(metric, metric)
            if data.empty:
                _empty_panel(ax, "no defined values")
                ax.set_title(label)
                continue
            sns.boxplot(
                data=data,
                x=metric,
                y="chunker",
                order=order,
                ax=ax,
                color="0.85",
                fliersize=0,
                linewidth=0.8,
            )
            # seaborn's stripplot jitters with numpy's global generator, so its output changes
            # from run to run; a seeded jitter keeps the figure reproducible.
            position = data["chunker"].map({name: i for i, name in enumerate(order)})
            jitter = np.random.default_rng(0).uniform(-0.2, 0.2, size=len(data))
            ax.scatter(
                data[metric],
                position + jitter,
                s=6,
                alpha=0.6,
                color=PALETTE[0],
                linewidths=0,
                zorder=3,
            )
            ax.set_xlim(-0.02, 1.02)
            ax.set_xlabel(label)
            ax.set_ylabel("")
            ax.set_title(f"{label} by chunker")
        for ax in list(axes.flat)[len(metrics) :]:
            ax.set_visible(False)
    return fig


# Characters per line of a Figure 7 panel title: a panel is half the 7 in page at 9 pt, about 50
# characters; wrapped shorter so that a title never reaches into the next panel.
TITLE_CHARS = 40


def _gain_text(gain: Mapping[str, Any] | None, indicator: str) -> str:
    """``ours`` then, on its own line, the paper's gain: wrapped to the panel's width."""
    if gain is None or gain.get("gain_pct") is None or math.isnan(gain["gain_pct"]):
        ours = "gain n/a" + (f" ({gain['reason']})" if gain and gain.get("reason") else "")
    else:
        ours = f"min→max {gain['gain_pct']:+.1f} %"
    paper = PAPER_GAINS_PCT.get(indicator)
    lines = textwrap.wrap(ours, TITLE_CHARS)
    if paper is not None:
        lines.append(f"(paper +{paper:.1f} %)")
    return "\n".join(lines)


def figure7(
    bins: pd.DataFrame,
    gains: Mapping[str, Mapping[str, Any]],
    pairs: pd.DataFrame | None = None,
    *,
    x: str = "semantic_independence",
    indicators: Sequence[str] = tuple(INDICATORS),
) -> Figure:
    """Each RAG indicator against semantic independence: bin means with 95 % percentile-bootstrap
    bands (which stay within the indicators' range).

    ``bins`` comes from :func:`hope.analysis.stats.binned_means`, ``gains`` from
    :func:`hope.analysis.stats.min_max_gains`; the panel title prints the min-to-max gain, or
    "n/a" with the reason where the rule of ``min_max_gains`` finds the ratio meaningless, wrapped
    to the panel's width with the paper's gain on a line of its own. With
    ``pairs`` the individual pairs are drawn faintly behind, so thin bins are visible as such.
    """
    xlabel = MATH_LABELS.get(x, x)
    with paper_style():
        fig = Figure(figsize=(WIDTH_IN, 5.2), layout="constrained")
        axes = fig.subplots(2, 2, sharex=True)
        for ax, indicator, color in zip(axes.flat, indicators, PALETTE, strict=False):
            name = INDICATORS.get(indicator, indicator)
            if pairs is not None:
                dots = pairs[[x, indicator]].dropna()
                ax.scatter(dots[x], dots[indicator], s=4, color="0.6", alpha=0.35, linewidths=0)
            rows = bins[(bins["y"] == indicator) & (bins["n"] > 0)].sort_values("bin")
            if rows.empty:
                ax.text(
                    0.5,
                    0.5,
                    "too few pairs to bin",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                )
            else:
                ax.plot(rows["x_mean"], rows["mean"], marker="o", ms=3.5, color=color, lw=1.4)
                band = rows.dropna(subset=["ci_low", "ci_high"])
                ax.fill_between(
                    band["x_mean"], band["ci_low"], band["ci_high"], color=color, alpha=0.25, lw=0
                )
            ax.set_title(f"{name}: {_gain_text(gains.get(indicator), indicator)}")
            ax.set_ylabel(name)
            # The panels share x, so only the bottom row is labelled.
            ax.set_xlabel(xlabel if ax in axes[-1] else "")
        fig.suptitle(f"RAG indicators against {xlabel} (bin means, 95 % CI)")
    return fig
