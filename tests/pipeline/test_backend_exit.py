"""``hope-run`` against a backend that cannot answer: exit status 3 with a message naming the base
URL and the model, and no score written (issue #13)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hope.models.preflight import BACKEND_EXIT_CODE

from .conftest import small_overrides


@pytest.mark.slow
def test_hope_run_stops_on_a_dead_backend(tmp_path: Path, documents_file: Path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    run_dir = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)
    result = subprocess.run(
        [
            Path(sys.executable).parent / "hope-run",
            f"hydra.run.dir={run_dir}",
            *small_overrides(tmp_path, documents_file, dead),
            "llm.max_retries=1",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert result.returncode == BACKEND_EXIT_CODE, result.stderr[-3000:]
    assert f"LLM backend {dead}" in result.stderr and "APIConnectionError" in result.stderr
    assert "Traceback" not in result.stderr
    assert not list(run_dir.glob("*.csv")) and not list(run_dir.glob("*.jsonl"))


def test_hope_run_where_every_item_failed_stops_and_writes_nothing(
    tmp_path: Path, documents_file: Path, monkeypatch: pytest.MonkeyPatch
):
    """Issue #35: a job whose every item failed (the preflight off, every answer a 500) raises
    instead of returning a NaN objective over files of nulls; hope-run's main turns the error
    into exit status 3, as for a backend that cannot answer."""
    from hope.core.result import NothingScoredError
    from hope.pipeline.run import run
    from hope.testing import SimulatedServer

    from .conftest import compose

    monkeypatch.setenv("HOPE_PREFLIGHT", "0")
    job = tmp_path / "job"
    with SimulatedServer(latency_s=0.0, status=500) as server:
        overrides = small_overrides(tmp_path, documents_file, server.base_url)
        cfg = compose(
            [
                *[o for o in overrides if not o.startswith("tracking.")],
                "tracking=none",
                "bleu.enabled=false",
                "llm.max_retries=0",
                "hope.information_preservation.n_segments=2",
            ]
        )
        with pytest.raises(NothingScoredError, match=r"nothing could be scored: all .* HTTP 500"):
            run(cfg, output_dir=job)
        assert server.requests > 0
    assert list(job.iterdir()) == []  # not even a temporary file


@pytest.mark.slow
def test_hope_run_exits_3_when_every_item_failed(tmp_path: Path, documents_file: Path):
    from hope.testing import SimulatedServer

    run_dir = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HOPE_PREFLIGHT": "0"}
    env.pop("MLFLOW_TRACKING_URI", None)
    with SimulatedServer(latency_s=0.0, status=500) as server:
        result = subprocess.run(
            [
                Path(sys.executable).parent / "hope-run",
                f"hydra.run.dir={run_dir}",
                *(
                    o
                    for o in small_overrides(tmp_path, documents_file, server.base_url)
                    if not o.startswith("tracking.")
                ),
                "llm.max_retries=0",
                "tracking=none",
            ],
            capture_output=True,
            text=True,
            timeout=240,
            env=env,
        )
    assert result.returncode == BACKEND_EXIT_CODE, result.stderr[-3000:]
    assert "hope-run: error: nothing could be scored" in result.stderr
    assert "HTTP 500" in result.stderr and "Traceback" not in result.stderr
    assert not list(run_dir.glob("*.csv")) and not list(run_dir.glob("*.jsonl"))
