"""docs/gen_results.py's section of the HOPE page on what HOPE tracks beyond passage length: read
off the labelled record's intervals, and "owed" where the record has no such analysis."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKER = "<!-- gen_results: what HOPE tracks beyond passage length -->"
HEADING = "## What HOPE tracks beyond passage length"


def cell(tau, low, high, **extra):
    return {"tau": tau, "low": low, "high": high, **extra}


def length_block(corpora=None):
    """Concept unity prefers long passages and tracks nothing beyond them; HOPE tracks recall
    beyond length and goes against budget recall; semantic independence does not track length
    and is undefined on IoU; information preservation prefers short passages."""
    partial = {
        "budget_recall": {
            "hope[paper]": cell(-0.5, -0.8, -0.2),
            "concept_unity[paper]": cell(0.1, -0.3, 0.4),
            "semantic_independence[paper]": cell(0.2, -0.1, 0.5),
            "information_preservation[paper]": cell(0.0, -0.4, 0.4),
        },
        "recall": {
            "hope[paper]": cell(0.6, 0.3, 0.9),
            "concept_unity[paper]": cell(0.0, -0.2, 0.3),
            "semantic_independence[paper]": cell(0.1, -0.2, 0.3),
            "information_preservation[paper]": cell(0.0, -0.4, 0.4),
        },
        "iou": {
            "hope[paper]": cell(0.1, -0.2, 0.3),
            "concept_unity[paper]": cell(-0.1, -0.4, 0.2),
            "semantic_independence[paper]": cell(None, None, None, reason="tau = 1"),
            "information_preservation[paper]": cell(0.0, -0.4, 0.4),
        },
    }
    extra = {"corpora": corpora} if corpora else {}
    with_length = {
        "bleu": cell(0.0, -0.3, 0.3, **extra),
        "hope[paper]": cell(0.7, 0.5, 0.9, **extra),
        "concept_unity[paper]": cell(0.8, 0.6, 1.0, **extra),
        "semantic_independence[paper]": cell(0.1, -0.2, 0.4, **extra),
        "information_preservation[paper]": cell(-0.6, -0.9, -0.3, **extra),
    }
    return {
        "tau_with_length": with_length,
        "targets_with_length": {
            t: cell(v, v - 0.2, v + 0.2, **extra)
            for t, v in {"budget_recall": -0.3, "recall": 0.5, "iou": -0.6}.items()
        },
        "partial_tau_given_length": partial,
    }


def record(with_analysis: bool) -> dict:
    corpus = {"chunkers": {}, "validity": {}}
    out = {
        "provenance": {"commit": "0123456789abcdef", "dirty": False},
        "settings": {"profiles_requested": ["paper"]},
        "chunkers": ["a", "b", "c", "d"],
        "corpora": {"one": corpus},
        "pooled": {},
    }
    if with_analysis:
        corpus["passage_length"] = {"mean_chars": {"a": 500.0}, **length_block()}
        out["pooled_passage_length"] = length_block(corpora=["one"])
    return out


def hope_page(tmp_path: Path, records: dict[str, dict]) -> tuple[str, str]:
    folder = tmp_path / "records"
    folder.mkdir()
    for name, value in records.items():
        (folder / f"{name}.json").write_text(json.dumps(value), encoding="utf-8")
    out = tmp_path / "pages"
    script = REPO / "docs" / "gen_results.py"
    subprocess.run(
        [sys.executable, str(script), "--out", str(out), "--results", str(folder)], check=True
    )
    results = out / "results" / "labelled.md"
    text = results.read_text(encoding="utf-8") if results.exists() else ""
    return (out / "metric.md").read_text(encoding="utf-8"), text


def test_the_page_keeps_its_marker_for_the_build():
    page = (REPO / "docs" / "metric.md").read_text(encoding="utf-8")
    assert HEADING in page and MARKER in page


def test_the_section_is_read_off_the_intervals(tmp_path):
    page, results = hope_page(tmp_path, {"labelled": record(with_analysis=True)})
    assert MARKER not in page
    section = page.split(HEADING, 1)[1]
    assert "commit `0123456789`" in section and "4 chunkers on 1 corpus: one" in section
    assert "| τ of recall@k with length | +0.50 [+0.30, +0.70] | +0.50 [+0.30, +0.70] |" in section
    assert "| partial τ with recall@k given length | +0.60 [+0.30, +0.90] |" in section
    assert (
        "Concept unity tracks passage length: τ +0.80 [+0.60, +1.00], it prefers longer passages."
        " Its partial τ interval includes 0 on every target: no evidence that concept unity "
        "tracks retrieval beyond chunk size."
    ) in section
    assert (
        "HOPE tracks passage length: τ +0.70 [+0.50, +0.90], it prefers longer passages. Given "
        "passage length, it tracks recall@k (+0.60 [+0.30, +0.90]); it orders chunkers against "
        "budget recall (-0.50 [-0.80, -0.20]); its partial τ interval includes 0 on IoU@k "
        "(+0.10 [-0.20, +0.30])."
    ) in section
    assert (
        "No evidence that semantic independence tracks passage length: its τ interval with the "
        "mean passage length includes 0 (+0.10 [-0.20, +0.40])."
    ) in section
    assert "the partial τ is undefined on IoU@k (tau = 1)." in section
    assert "it prefers shorter passages" in section  # information preservation
    # The results page carries the tables per corpus and pooled.
    assert "### Kendall τ with the mean passage length (95 % bootstrap interval)" in results
    assert "### Partial τ with `recall` given the mean passage length" in results


def test_a_record_without_the_analysis_says_the_figures_are_owed(tmp_path):
    page, _ = hope_page(tmp_path, {"labelled": record(with_analysis=False)})
    section = page.split(HEADING, 1)[1]
    assert '!!! warning "Figures owed"' in section
    assert "`bench/results/labelled.json` (commit `0123456789`) predates this analysis" in section


def test_no_record_says_the_figures_are_owed(tmp_path):
    page, _ = hope_page(tmp_path, {})
    assert "there is no `bench/results/labelled.json`" in page.split(HEADING, 1)[1]
