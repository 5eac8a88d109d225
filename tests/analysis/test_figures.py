"""Figures 6 and 7: produced, non-empty, at paper size, also from degenerate data."""

from __future__ import annotations

import numpy as np
import pytest

from hope.analysis.figures import WIDTH_IN, figure6, figure6_by_chunker, figure7, figure_bytes
from hope.analysis.paper import INDICATORS
from hope.analysis.stats import binned_means, min_max_gains, range_fraction


def _check_outputs(fig):
    png = figure_bytes(fig, "png")
    pdf = figure_bytes(fig, "pdf")
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert pdf.startswith(b"%PDF") and len(pdf) > 5_000
    assert fig.get_figwidth() == pytest.approx(WIDTH_IN)
    return png, pdf


def _font_sizes(fig):
    fig.canvas.draw()
    return [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_fontsize"))]


def test_figure6_and_split_by_chunker(pairs):
    for fig in (figure6(pairs), figure6_by_chunker(pairs)):
        _check_outputs(fig)
        assert min(_font_sizes(fig)) >= 9
    titles = [ax.get_title() for ax in figure6(pairs).axes]
    span = range_fraction(pairs["concept_unity"])
    assert titles[1] == f"$\\zeta_{{con}}$\nn=53, range {span:.0%}\n(paper ≈10%)"


def test_figure7_prints_the_gain(pairs):
    bins = binned_means(pairs, "semantic_independence", list(INDICATORS), n_bins=5)
    gains = min_max_gains(bins)
    fig = figure7(bins, gains, pairs)
    _check_outputs(fig)
    titles = [ax.get_title() for ax in fig.axes]
    expected = f"FC: min→max {gains['factual_correctness']['gain_pct']:+.1f} % (paper +56.2 %)"
    assert titles[1] == expected
    assert min(_font_sizes(fig)) >= 9


def test_figures_render_without_defined_values(pairs):
    empty = pairs.assign(concept_unity=np.nan, hope=np.nan).head(4)
    _check_outputs(figure6(empty))
    _check_outputs(figure6_by_chunker(empty))
    bins = binned_means(empty, "semantic_independence", list(INDICATORS))
    assert bins.empty
    fig = figure7(bins, min_max_gains(bins, list(INDICATORS)), empty)
    _check_outputs(fig)
    assert "gain n/a (fewer than two populated bins)" in fig.axes[0].get_title()
