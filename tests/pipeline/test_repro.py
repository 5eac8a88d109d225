"""`make repro`'s driver (hope.pipeline.repro): its steps, their order, timings and failures."""

from __future__ import annotations

import json
import stat

from hope.pipeline.repro import main


def fake_bin(tmp_path, fail: str | None = None):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for program in ("dvc", "hope-run"):
        script = bin_dir / program
        code = 3 if program == fail else 0
        script.write_text(f'#!/bin/sh\necho "{program} $* in $(pwd)" >> {log}\nexit {code}\n')
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir, log


def test_runs_dvc_repro_alone_in_the_repo_and_writes_timings(tmp_path):
    # The hope stage logs its MLflow run itself: no second HOPE scoring (hope-run) afterwards.
    repo = tmp_path / "repo"
    repo.mkdir()
    bin_dir, log = fake_bin(tmp_path)
    timings = tmp_path / "t.json"
    argv = ["--repo", str(repo), "--bin-dir", str(bin_dir), "--timings", str(timings)]
    assert main(argv) == 0
    assert log.read_text().splitlines() == [f"dvc repro in {repo}"]
    written = json.loads(timings.read_text())
    assert list(written) == ["dvc_repro", "total"]
    assert written["total"] == written["dvc_repro"]


def test_a_failing_step_stops_the_run_with_its_exit_status(tmp_path):
    bin_dir, log = fake_bin(tmp_path, fail="dvc")
    timings = tmp_path / "t.json"
    argv = ["--repo", str(tmp_path), "--bin-dir", str(bin_dir), "--timings", str(timings)]
    assert main(argv) == 3
    assert len(log.read_text().splitlines()) == 1
    assert not timings.exists()
