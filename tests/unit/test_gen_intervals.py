"""The labelled page's coverage section (docs/gen_intervals.py), read off a made-up record."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))
from gen_intervals import INTERVALS_MARKER, intervals_section  # noqa: E402


def _method(coverage: float, wilson: list[float]) -> dict:
    return {"coverage": coverage, "coverage_wilson_95": wilson, "median_width": 0.5}


def _cell(tau: float, ratio: float, percentile: dict, corrected: dict) -> dict:
    return {
        "true_tau": tau,
        "se_ratio": ratio,
        "target": "noisy (labelled questions)",
        "median_estimate": tau - 0.1,
        "percentile": percentile,
        "bias_corrected": corrected,
    }


def record(cells: list[dict]) -> dict:
    return {
        "provenance": {"commit": "0123456789abcdef"},
        "settings": {
            "chunkers": 7,
            "questions": 56,
            "items": 16,
            "resamples": 1000,
            "repetitions": 400,
            "confidence": 0.95,
        },
        "cells": cells,
    }


def test_the_section_counts_the_rows_that_fall_short_and_names_the_worst():
    cells = [
        # Short only where the Wilson interval lies wholly below 0.95.
        _cell(0.43, 1.0, _method(0.96, [0.94, 0.98]), _method(0.90, [0.87, 0.93])),
        _cell(0.71, 2.0, _method(0.64, [0.59, 0.68]), _method(0.73, [0.68, 0.77])),
    ]
    lines = intervals_section(record(cells))
    text = "\n".join(lines)
    assert "(commit `0123456789`)" in text and "400 simulated corpora per row" in text
    assert (
        "| noisy | +0.43 | 1 | +0.33 | 0.960 [0.940, 0.980] | 0.900 [0.870, 0.930] | 0.50 |" in text
    )
    assert (
        "in 1 of 2 rows, the bias-corrected one in 2: the percentile interval falls short" in text
    )
    assert (
        "The percentile interval's lowest coverage is 0.640, at true τ +0.71 and se ratio 2" in text
    )
    assert "The bias-corrected interval's lowest coverage is 0.730" in text


def test_the_noise_ratio_of_a_labelled_target_by_hand():
    from gen_intervals import noise_ratio, noise_ratio_lines

    # Three chunkers, four questions; every question's mean over the chunkers is 2. Residuals:
    # a -2, 0, -2, 0 (sd 1.1547), b 0 (sd 0), c +2, 0, +2, 0 (sd 1.1547); standard errors
    # 0.5774, 0 and 0.5774, times sqrt(3 / 2): 0.7071, 0, 0.7071, median 0.7071. Means 1, 2, 3:
    # gaps 1 and 1. Ratio 0.7071.
    a, b, c = [0.0, 2.0, 0.0, 2.0], [2.0, 2.0, 2.0, 2.0], [4.0, 2.0, 4.0, 2.0]
    assert noise_ratio([a, b, c]) == pytest.approx(0.7071, abs=1e-4)
    assert noise_ratio([a, b]) is None  # fewer than 3 chunkers
    chunkers = {
        name: {"per_question": {"recall": v}} for name, v in zip("abc", (a, b, c), strict=True)
    }
    labelled = {
        "provenance": {"commit": "abcdef0123456"},
        "corpora": {"one": {"chunkers": chunkers}},
    }
    text = "\n".join(noise_ratio_lines(labelled))
    assert "(commit `abcdef0123`)" in text
    assert "| one | – | 0.71 | – |" in text  # no budget recall or IoU values: no ratio


def test_a_tie_and_a_missing_record():
    cell = _cell(0.14, 0.5, _method(1.0, [0.99, 1.0]), _method(0.97, [0.95, 0.98]))
    assert "both fall short in as many rows" in "\n".join(intervals_section(record([cell])))
    owed = "\n".join(intervals_section(None))
    assert "Figures owed" in owed and "make bench-tau-intervals" in owed
    assert INTERVALS_MARKER in (ROOT / "docs" / "labelled.md").read_text(encoding="utf-8")
