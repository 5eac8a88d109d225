"""Issue #33: ``dvc plots show`` writes a page that renders offline.

DVC's own page loads Vega, Vega-Lite and vega-embed from a CDN, so offline (the default here) no
data-series plot appears. The project's page (``.dvc/plots/offline.html``, set as
``plots.html_template`` in ``.dvc/config``) loads nothing from the network and draws each plot's
data as an inline SVG. The test runs the real ``dvc plots show`` on the project's dvc.yaml and
config in a scratch copy with small data files (about a second), checks that the page names no
network resource, and, where node is installed, runs the page's scripts against a stub DOM.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

INDICATORS = ["answer_correctness", "factual_correctness", "context_recall", "response_relevancy"]
LABEL_FREE = ["hope", "size_compliance", "intra_chunk_cohesion", "contextual_coherence"]
# A 1x1 PNG: the paper's figures are image plots of the notebooks stage.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [",".join(header)] + [",".join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def page(repo_root: Path, tmp_path_factory) -> str:
    dvc = Path(sys.executable).parent / "dvc"
    if not dvc.is_file():
        pytest.skip(f"no dvc beside {sys.executable}")
    work = tmp_path_factory.mktemp("plots")
    subprocess.run([str(dvc), "init", "--no-scm", "-q"], cwd=work, check=True)
    shutil.copy(repo_root / ".dvc" / "config", work / ".dvc" / "config")
    shutil.copytree(repo_root / ".dvc" / "plots", work / ".dvc" / "plots", dirs_exist_ok=True)
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(repo_root / name, work / name)
    write_csv(
        work / "paper_figures" / "pairs.csv",
        ["doc_id", "chunker", "hope", *INDICATORS],
        [[f"d{i}", "c", 0.1 * i, *(0.2 + 0.1 * i + 0.01 * k for k in range(4))] for i in range(5)],
    )
    write_csv(
        work / "paper_figures" / "figure7_series.csv",
        ["semantic_independence", "n", *INDICATORS],
        [[0.2 * i, 5, *(0.5 + 0.05 * i * k for k in range(4))] for i in range(3)],
    )
    write_csv(
        work / "data" / "labelled" / "chunkers.csv",
        ["corpus", "chunker", "budget_recall", *LABEL_FREE],
        [["c", f"k{i}", 0.3 * i, *(0.1 * i + 0.2 * k for k in range(4))] for i in range(3)],
    )
    for stage in yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"].values():
        for plot in stage.get("plots") or []:
            name = plot if isinstance(plot, str) else next(iter(plot))
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_bytes(PNG)
    shown = subprocess.run(
        [str(dvc), "plots", "show"], cwd=work, capture_output=True, text=True, timeout=300
    )
    assert shown.returncode == 0, shown.stderr[-3000:]
    return (work / "dvc_plots" / "index.html").read_text()


def test_the_plots_page_loads_nothing_from_the_network(page: str):
    # No script, stylesheet, image or frame from a URL (a spec's "$schema" names its JSON
    # schema: an identifier, nothing loads it); DVC's CDN scripts are not on the page.
    loads = re.findall(r"""(?:src|href)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)""", page)
    assert loads == [], loads
    assert "cdn.jsdelivr" not in page and "@import" not in page
    assert re.findall(r"<script[^>]*\bsrc\b", page) == []
    for plot in (
        "hope_vs_rag_indicators",
        "figure7_rag_indicators_by_semantic_independence",
        "labelled_budget_recall_vs_label_free_scores",
    ):
        assert f"vegaEmbed('#{plot}'" in page or plot in page
    # Figures 6, 6 by chunker, 7 and the probe beside HOPE, as local images
    assert page.count("<img ") == 4
    assert "paper_figures_figure_probe_vs_hope.png" in page


def test_the_page_draws_every_series_in_its_own_colour(page: str, tmp_path: Path):
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed: the page's scripts are not run")
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.S)
    harness = tmp_path / "harness.js"
    harness.write_text(
        "const targets = {};\n"
        "globalThis.document = {querySelector(selector) {\n"
        "  const id = selector.slice(1);\n"
        "  return (targets[id] = targets[id] || {className: '', innerHTML: ''});\n"
        "}};\n" + "\n;\n".join(scripts) + "\nconsole.log(JSON.stringify(targets));\n"
    )
    run = subprocess.run([node, str(harness)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-3000:]
    drawn = json.loads(run.stdout)
    expected = {
        "hope_vs_rag_indicators": (INDICATORS, False),
        "figure7_rag_indicators_by_semantic_independence": (INDICATORS, True),
        "labelled_budget_recall_vs_label_free_scores": (LABEL_FREE, False),
    }
    assert set(expected) <= set(drawn), sorted(drawn)
    for plot, (series, lines) in expected.items():
        svg = drawn[plot]["innerHTML"]
        assert svg.count("<svg") == 1, plot
        colours = set(re.findall(r'<circle class="point"[^>]*fill="(#[0-9a-f]{6})"', svg))
        assert len(colours) == len(series), (plot, colours)
        assert all(name in svg for name in series), plot
        assert (svg.count("<polyline") == len(series)) if lines else "<polyline" not in svg
