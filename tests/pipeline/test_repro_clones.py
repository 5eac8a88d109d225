"""Two clones of one commit, in two different folders, give the same `dvc.lock` output hashes.

The working tree (uncommitted changes included) becomes a scratch git repository, as in
test_dvc_e2e.py; it is cloned twice at different depths and `dvc repro` runs in both at once,
each with its own response cache and MLflow store and its own `src` on PYTHONPATH, against the
same simulated LLM server (whose answers are a pure function of the request). Every output of
every stage must hash the same: no absolute path, time stamp, host name, or run-dependent
counter may reach a DVC output (issue #13).

The second clone also runs as another processor would (issue #35): torch's kernels at the
``default`` capability instead of AVX-512, MKL limited to SSE4.2, OpenBLAS's Nehalem kernels,
numpy's SIMD dispatch off and one thread, where the first clone uses everything this CPU has. Both
run the real MiniLM (float64, snapped to the grid) for HOPE, RAG, the labelled slice and the
semantic chunker, so every embedding and similarity behind the outputs is computed by other
kernels in the two clones; their outputs must still be byte for byte the same.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from hope.pipeline.lock import lock_differences, lock_outputs
from hope.testing import OTHER_CPU_ENV, SimulatedServer
from tests.pipeline.test_dvc_e2e import scratch_repo

pytestmark = pytest.mark.slow


IDENTITY = {
    "GIT_AUTHOR_NAME": "hope",
    "GIT_AUTHOR_EMAIL": "hope@localhost",
    "GIT_COMMITTER_NAME": "hope",
    "GIT_COMMITTER_EMAIL": "hope@localhost",
}


def git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def origin_repo(repo_root: Path, origin: Path, base_url: str, env: dict[str, str]) -> None:
    """The working tree as a committed scratch repository with DVC initialised."""
    origin.mkdir()
    scratch_repo(repo_root, origin, base_url)
    params = yaml.safe_load((origin / "params.yaml").read_text())
    params["hope"]["cache"] = "cache.sqlite"  # relative: each clone has its own
    # The real embedder wherever one is used, and the semantic chunker that embeds sentences.
    params["chunkers"] = [*params["chunkers"], "semantic_minilm"]
    params["hope"]["embedder"] = "minilm"
    params["rag"]["embedder"] = {"backend": "sentence_transformers", "model": "minilm"}
    params["labelled"]["embedder"] = "minilm"
    (origin / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (origin / ".venv").unlink()  # each clone links the environment itself
    (origin / ".gitignore").write_text(".venv\ncache.sqlite\nmlflow.db\nmlruns/\n")
    git(origin, "init", "-q", env=env)
    subprocess.run(
        [str(repo_root / ".venv" / "bin" / "dvc"), "init", "-q"], cwd=origin, env=env, check=True
    )
    shutil.copy2(repo_root / ".dvc" / "config", origin / ".dvc" / "config")
    git(origin, "add", "-A", env=env)
    git(origin, "commit", "-qm", "scratch", env=env)


def test_two_clones_in_different_folders_and_cpus_hash_every_output_the_same(repo_root, tmp_path):
    env = {**os.environ, **IDENTITY, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"}
    origin = tmp_path / "origin"
    clones = [tmp_path / "one", tmp_path / "two" / "nested" / "deeper"]
    with SimulatedServer(latency_s=0.0) as server:
        origin_repo(repo_root, origin, server.base_url, env)
        runs = []
        for clone, cpu in zip(clones, ({}, OTHER_CPU_ENV), strict=True):
            clone.parent.mkdir(parents=True, exist_ok=True)
            git(tmp_path, "clone", "-q", str(origin), str(clone), env=env)
            (clone / ".venv").symlink_to(repo_root / ".venv")
            clone_env = {
                **env,
                "PYTHONPATH": str(clone / "src"),
                "HOPE_CACHE": str(clone / "cache.sqlite"),
                "MLFLOW_TRACKING_URI": f"sqlite:///{clone / 'mlflow.db'}",
                **cpu,
            }
            runs.append(
                subprocess.Popen(
                    [str(clone / ".venv" / "bin" / "dvc"), "repro"],
                    cwd=clone,
                    env=clone_env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            )
        for clone, run in zip(clones, runs, strict=True):
            out, _ = run.communicate(timeout=1200)
            assert run.returncode == 0, f"{clone}: {out[-4000:]}"
    first, second = (lock_outputs(clone / "dvc.lock") for clone in clones)
    assert len(first) >= 30, sorted(first)  # every stage's outs, metrics and plots
    assert "paper_figures/notebooks/paper_outputs.ipynb" in first
    assert lock_differences(first, second) == []
