"""Figures 6 and 7: produced, non-empty, at paper size, also from degenerate data."""

from __future__ import annotations

import numpy as np
import pytest

from hope.analysis.figures import WIDTH_IN, figure6, figure6_by_chunker, figure7, figure_bytes
from hope.analysis.paper import INDICATORS
from hope.analysis.stats import binned_means, min_max_gains, range_fraction


def drawn_texts(fig):
    """(text, window extent) of every text the rendered figure shows: titles, axis labels, the
    tick labels of ticks inside the view, texts, the suptitle."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from hope.analysis.figures import paper_style

    FigureCanvasAgg(fig)
    with paper_style():
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = list(fig.texts)  # the suptitle among them
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += ax.texts
        for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            low, high = min(low, high), max(low, high)
            for tick in axis.get_major_ticks():
                if tick.get_visible() and low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    texts += [t for t in (tick.label1, tick.label2) if t.get_visible()]
    return [
        (t.get_text(), t.get_window_extent(renderer))
        for t in texts
        if t.get_visible() and t.get_text().strip()
    ]


def overlapping_texts(fig):
    """Pairs of drawn texts whose boxes overlap, and texts reaching out of the figure."""
    boxes = drawn_texts(fig)
    found = [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if box_a.overlaps(box_b)
    ]
    frame = fig.bbox
    found += [
        (a, "<outside the figure>")
        for a, box in boxes
        if box.x0 < frame.x0 - 1 or box.x1 > frame.x1 + 1
    ]
    return found


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
    expected = f"FC: min→max {gains['factual_correctness']['gain_pct']:+.1f} %\n(paper +56.2 %)"
    assert titles[1] == expected
    assert min(_font_sizes(fig)) >= 9


def test_figure7_text_never_overlaps_with_defined_and_undefined_panels(pairs):
    """Paper size (7 in). The upper row carries the two longest titles side by side (before the
    fix they ran into each other): AC's gain n/a by the rule, FC with no bins at all; the lower
    row has gains. No two text boxes overlap, none leaves the figure."""
    bins = binned_means(pairs, "semantic_independence", list(INDICATORS), n_bins=5)
    no_fc = bins[bins["y"] != "factual_correctness"]
    gains = min_max_gains(no_fc, list(INDICATORS), min_pairs=1)
    gains["answer_correctness"] = {
        "gain_pct": float("nan"),
        "reason": "bottom-bin mean 0.020 < 0.05",
    }
    fig = figure7(no_fc, gains, pairs)
    assert fig.get_figwidth() == pytest.approx(WIDTH_IN)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0] == "AC: gain n/a (bottom-bin mean 0.020 < 0.05)\n(paper +21.1 %)"
    assert titles[1] == "FC: gain n/a (fewer than two populated bins)\n(paper +56.2 %)"
    assert "too few pairs to bin" in [t.get_text() for t in fig.axes[1].texts]
    assert "min→max" in titles[2] and "min→max" in titles[3]
    assert len(drawn_texts(fig)) > 20  # the checker sees ticks, labels and titles
    assert overlapping_texts(fig) == []


def test_overlap_checker_finds_overlapping_titles():
    """The checker itself: two long titles side by side do overlap, and it says so."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, 3))
    left, right = fig.subplots(1, 2)
    left.set_title("AC: min→max +1850.0 % (paper +21.1 %) and some more words here")
    right.set_title("FC: min→max +62.3 % (paper +56.2 %)")
    assert overlapping_texts(fig)


def test_figures_render_without_defined_values(pairs):
    empty = pairs.assign(concept_unity=np.nan, hope=np.nan).head(4)
    _check_outputs(figure6(empty))
    _check_outputs(figure6_by_chunker(empty))
    bins = binned_means(empty, "semantic_independence", list(INDICATORS))
    assert bins.empty
    fig = figure7(bins, min_max_gains(bins, list(INDICATORS)), empty)
    _check_outputs(fig)
    assert "gain n/a (fewer than two populated bins)" in fig.axes[0].get_title()
