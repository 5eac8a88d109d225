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
            sys.executable,
            "-m",
            "hope.pipeline.app",
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
