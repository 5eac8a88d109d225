"""``hope-run -m``: one MLflow run per sweep, a child per job, whose chunker runs nest below it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient

from .conftest import small_overrides


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["local", "joblib"])
def test_multirun_is_one_parent_with_a_child_per_job(
    launcher: str, tmp_path: Path, documents_file: Path, sim_server
):
    overrides = small_overrides(tmp_path, documents_file, sim_server.base_url)
    overrides = [o for o in overrides if not o.startswith(("chunker=", "chunker."))]
    sweep_dir = tmp_path / "sweep"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)
    result = subprocess.run(
        [
            Path(sys.executable).parent / "hope-run",
            "-m",
            "chunker=fixed_500_o0,recursive_500",
            f"launcher={launcher}",
            f"hydra.sweep.dir={sweep_dir}",
            *overrides,
        ],
        capture_output=True,
        text=True,
        # 25 s alone; several times that on 2 cores shared with other jobs (two hope-run
        # processes start here, each importing torch and MLflow)
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("hope").experiment_id])
    parents = [r for r in runs if r.data.tags.get("hope.kind") == "sweep"]
    children = [r for r in runs if r.data.tags.get("hope.kind") == "job"]
    chunker_runs = [r for r in runs if r.data.tags.get("hope.kind") == "chunker"]
    assert len(runs) == 5 and len(parents) == 1 and len(children) == 2 and len(chunker_runs) == 2
    # sweep -> job -> chunker: each job's chunker run is its child, with the same metric keys.
    assert {r.data.tags["mlflow.parentRunId"] for r in chunker_runs} == {
        c.info.run_id for c in children
    }
    assert chunker_runs[0].data.metrics.keys() == chunker_runs[1].data.metrics.keys()
    parent = parents[0]
    assert parent.info.status == "FINISHED"
    assert (sweep_dir / ".mlflow_parent_run").read_text().strip() == parent.info.run_id
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert {c.data.tags["hope.chunkers"] for c in children} == {"fixed_500_o0", "recursive_500"}
    assert {c.data.tags["hope.job_num"] for c in children} == {"0", "1"}
    objectives = [c.data.metrics["objective"] for c in children]
    assert parent.data.metrics["sweep/jobs"] == 2
    assert parent.data.metrics["sweep/objective_max"] == pytest.approx(max(objectives))
    assert parent.data.tags["hope.best_child_run"] in {c.info.run_id for c in children}
