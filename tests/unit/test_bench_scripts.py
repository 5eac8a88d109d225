"""The benchmark scripts stay runnable: each one imports and prints its help, and the RAG
benchmarks' config (the stages' ``rag:`` section with their overrides) validates against the
committed params.yaml. A refactor of the code they call once broke two of them unnoticed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (REPO / "bench").glob("bench_*.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_bench_script_prints_its_help(script):
    done = subprocess.run(
        [sys.executable, f"bench/{script}", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_rag_benchmarks_compose_the_committed_params_with_their_overrides(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    from workloads import rag_config

    config, profile = rag_config(
        REPO / "params.yaml",
        {"seed": 7, "questions": {"generator": "extractive", "extractive_writer": "llm"}},
    )
    assert profile == "sample"
    assert config.seed == 7
    assert config.questions.generator == "extractive"
    assert config.questions.extractive_writer == "llm"
    control, _ = rag_config(REPO / "params.yaml", {"ragas": {"metrics": ["context_recall"]}})
    assert control.ragas.metrics == ["context_recall"]
    assert control.questions == rag_config(REPO / "params.yaml")[0].questions
