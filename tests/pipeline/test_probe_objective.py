"""``hope-run objective=probe``: the probe as a job's objective (no LLM call), alone and as an
Optuna sweep's objective (conf/sweep/optuna_probe.yaml)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import compose, small_overrides

# Nothing listens here: a job that called the LLM would fail.
NO_SERVER = "http://127.0.0.1:9/v1"
PROBE = ["objective=probe", "probe.embedder=hashing", "probe.questions=6", "probe.resamples=50"]


def test_a_probe_job_needs_no_llm_and_returns_its_pooled_recall(tmp_path, documents_file):
    from hope.pipeline.run import run

    overrides = [
        *(o for o in small_overrides(tmp_path, documents_file, NO_SERVER) if "tracking" not in o),
        *PROBE,
        "tracking=none",
    ]
    objective = run(compose(overrides), output_dir=tmp_path / "job")
    metrics = json.loads((tmp_path / "job" / "metrics.json").read_text())
    assert metrics["ranking"] == ["fixed_500_o0"] and metrics["questions"] >= 2
    assert objective == pytest.approx(metrics["budget_recall"]["fixed_500_o0"])
    assert 0 <= objective <= 1
    report = json.loads((tmp_path / "job" / "results.json").read_text())
    assert set(report["domains"]) == {"news", "wiki"}
    assert (tmp_path / "job" / "passages.jsonl").stat().st_size > 0
    assert not (tmp_path / "job" / "scores.csv").exists()  # HOPE was not scored


@pytest.mark.slow
def test_optuna_tunes_a_chunker_by_the_probe(tmp_path: Path, documents_file: Path):
    overrides = small_overrides(tmp_path, documents_file, NO_SERVER)
    overrides = [o for o in overrides if not o.startswith(("chunker=", "chunker."))]
    sweep_dir = tmp_path / "sweep"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)
    result = subprocess.run(
        [
            Path(sys.executable).parent / "hope-run",
            "-m",
            "+sweep=optuna_probe",
            "hydra.sweeper.n_trials=3",
            f"hydra.sweep.dir={sweep_dir}",
            *overrides,
            *PROBE[1:],
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    best = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    assert 0 <= best["best_value"] <= 1
    assert set(best["best_params"]) == {"chunker.chunk_size", "chunker.chunk_overlap"}
    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("hope").experiment_id])
    jobs = [r for r in runs if r.data.tags.get("hope.kind") == "job"]
    assert len(jobs) == 3
    assert {r.data.tags.get("hope.stage") for r in jobs} == {"probe"}
    assert all(0 <= r.data.metrics["objective"] <= 1 for r in jobs)
