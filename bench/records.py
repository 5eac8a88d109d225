"""What every benchmark record holds besides its numbers: the code measured, the machine, and
repeated timings summarised as a median with their spread.

One helper for bench_engine.py, bench_repro.py, bench_validity.py and bench_labelled.py, so that
each file in bench/results/ names the commit (and whether the working tree differed from it),
the CPU, core count, memory, OS and Python it ran on, and never reports a best-of-N alone.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MIN_RUNS = 5
RESULTS = "bench/results/"


def git_state(repo: Path = REPO) -> dict[str, Any]:
    """The commit checked out in ``repo`` and whether tracked or untracked files differ from it."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)

    head = git("rev-parse", "HEAD")
    if head.returncode != 0:
        raise RuntimeError(f"{repo} is not a git checkout: {head.stderr.strip()}")
    # Benchmark results are what is written, not the code measured: a run after another one
    # (whose result is not committed yet) still measures a clean tree.
    status = [
        line
        for line in git("status", "--porcelain", "--untracked-files=all").stdout.splitlines()
        if not line[3:].strip('"').startswith(RESULTS)
    ]
    return {"commit": head.stdout.strip(), "dirty": bool(status), "changed_files": len(status)}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    """CPU model, logical cores (and those this process may use), RAM, OS and Python."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    # The run queue when the benchmark started: on a shared machine, what else was running.
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "ram_gib": _ram_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "load_average_1_5_15_min": load,
    }


def spread(values: Sequence[float], *, digits: int = 4, higher_is_better: bool = False):
    """Median, min, max, interquartile range and median absolute deviation of repeated runs.

    ``best_of_n`` is the minimum (a time), or the maximum with ``higher_is_better`` (a
    speed-up), labelled as such beside the median, which is the number to quote.
    """
    runs = [float(v) for v in values]
    if not runs:
        raise ValueError("spread() needs at least one measured run")
    median = statistics.median(runs)
    if len(runs) >= 2:
        q1, _, q3 = statistics.quantiles(runs, n=4, method="inclusive")
    else:
        q1 = q3 = runs[0]
    mad = statistics.median(abs(v - median) for v in runs)
    return {
        "n": len(runs),
        "median": round(median, digits),
        "min": round(min(runs), digits),
        "max": round(max(runs), digits),
        "iqr": round(q3 - q1, digits),
        "mad": round(mad, digits),
        "best_of_n": round(max(runs) if higher_is_better else min(runs), digits),
        "runs": [round(v, digits) for v in runs],
    }


def check_runs(runs: int) -> int:
    """``runs`` if it is at least MIN_RUNS, else a clear error (a median of fewer is noise)."""
    if runs < MIN_RUNS:
        raise ValueError(f"--runs {runs}: at least {MIN_RUNS} runs are needed for a median")
    return runs


def provenance(repo: Path = REPO) -> dict[str, Any]:
    """The ``code`` and ``machine`` blocks of a benchmark record."""
    return {"code": git_state(repo), "machine": machine()}


def merge_model_entry(path: Path, header: dict[str, Any], label: str, entry: dict[str, Any]):
    """Rewrite the record at ``path`` with ``header``'s keys and ``entry`` as ``models[label]``,
    keeping the other models' entries (one model per run, several models per record)."""
    import json

    from hope.core.io import write_json_atomic
    from hope.core.result import _nan_to_none

    report = json.loads(path.read_text()) if path.is_file() else {}
    report.update(header)
    report.setdefault("models", {})[label] = entry
    write_json_atomic(path, _nan_to_none(report))
