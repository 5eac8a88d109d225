"""The one provenance block of every benchmark record, and repeated timings as median and spread.

Every file in bench/results/ starts with the same block under the key ``provenance``::

    "provenance": {
        "commit": "<40 hex>",          # the commit checked out when the run started
        "dirty": false,                # whether tracked or untracked files differed from it
        "changed_files": 0,            # how many (bench/results/ apart: results are not code)
        "machine": {"cpu": ..., "cores": ..., "cores_usable": ..., "ram_gib": ..., "os": ...,
                    "python": ...},
        "load_at_start": [1.2, 0.9, 0.7],   # 1, 5 and 15 minute load averages at the start
        "started_utc": "2026-01-01T12:00:00Z",
        "finished_utc": "2026-01-01T12:10:00Z",  # when this file was written
        "command": "python bench/bench_engine.py --runs 5",
        "missing": []                  # the fields above that the run did not record (null)
    }

A benchmark calls :func:`start` before it measures anything (so that a later edit of the tree
cannot relabel the run) and writes with :meth:`Run.write_record`, which fills ``finished_utc``
(a record written after every step, as bench_repro.py does, has the time of that write). The
block at the top describes the run that measured the record's own figures. Where a record keeps
parts measured by other runs (one entry per model, merged by :meth:`Run.merge_entry`; a size
kept by ``bench_scale.py --merge``; a section another benchmark adds with
:meth:`Run.merge_section`), each such part carries its own ``provenance`` block of the same
shape. Records written before this block existed were converted without inventing anything: what
the run did not record is null and named in ``missing``.
"""

from __future__ import annotations

import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hope.core.io import write_json_atomic
from hope.core.result import nan_to_none

REPO = Path(__file__).resolve().parents[1]
RESULTS = "bench/results/"
MIN_RUNS = 5
MACHINE_KEYS = ("cpu", "cores", "cores_usable", "ram_gib", "os", "python")
PROVENANCE_KEYS = (
    "commit",
    "dirty",
    "changed_files",
    "machine",
    "load_at_start",
    "started_utc",
    "finished_utc",
    "command",
    "missing",
)
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


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
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "ram_gib": _ram_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def load_average() -> list[float] | None:
    """The run queue's 1, 5 and 15 minute averages: on a shared machine, what else was running."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def utc_now() -> str:
    return time.strftime(UTC_FORMAT, time.gmtime())


def command_line(argv: Sequence[str] | None = None, repo: Path = REPO) -> str:
    """The command as run, ``python bench/bench_x.py --args``: the script's path relative to the
    repository (no machine's own paths), the arguments quoted for a shell."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]) if argv else Path("?")
    if script.resolve().is_relative_to(repo.resolve()):
        script = script.resolve().relative_to(repo.resolve())
    return shlex.join(["python", str(script), *argv[1:]])


def provenance_block(**fields: Any) -> dict[str, Any]:
    """The block with its keys in order: each field given, the others null; ``missing`` names the
    null ones (a machine field as ``machine.<name>``)."""
    unknown = set(fields) - set(PROVENANCE_KEYS) - {"missing"}
    if unknown:
        raise ValueError(f"not provenance fields: {sorted(unknown)}")
    given_machine = fields.get("machine") or {}
    extra = set(given_machine) - set(MACHINE_KEYS)
    if extra:
        raise ValueError(f"not machine fields: {sorted(extra)}")
    block: dict[str, Any] = {key: fields.get(key) for key in PROVENANCE_KEYS[:-1]}
    block["machine"] = {key: given_machine.get(key) for key in MACHINE_KEYS}
    missing = [key for key in PROVENANCE_KEYS[:-1] if key != "machine" and block[key] is None]
    missing += [f"machine.{key}" for key in MACHINE_KEYS if block["machine"][key] is None]
    block["missing"] = sorted(missing, key=_field_order)
    return block


def _field_order(name: str) -> int:
    names = [*PROVENANCE_KEYS, *(f"machine.{key}" for key in MACHINE_KEYS)]
    return names.index(name)


def check_block(block: Any) -> list[str]:
    """What is wrong with a provenance block: [] when it has exactly the keys and types above."""
    if not isinstance(block, dict):
        return [f"not an object: {block!r}"]
    errors = []
    if list(block) != list(PROVENANCE_KEYS):
        errors.append(f"keys {list(block)}, expected {list(PROVENANCE_KEYS)}")
    commit = block.get("commit")
    if commit is not None and not (
        isinstance(commit, str) and len(commit) == 40 and set(commit) <= set("0123456789abcdef")
    ):
        errors.append(f"commit {commit!r} is not 40 hexadecimal digits")
    types = {
        "dirty": bool,
        "changed_files": int,
        "started_utc": str,
        "finished_utc": str,
        "command": str,
    }
    for key, kind in types.items():
        value = block.get(key)
        if value is not None and (
            not isinstance(value, kind) or isinstance(value, bool) != (kind is bool)
        ):
            errors.append(f"{key} {value!r} is not {kind.__name__} or null")
    for key in ("started_utc", "finished_utc"):
        value = block.get(key)
        if isinstance(value, str):
            try:
                time.strptime(value, UTC_FORMAT)
            except ValueError:
                errors.append(f"{key} {value!r} is not {UTC_FORMAT}")
    load = block.get("load_at_start")
    if load is not None and not (
        isinstance(load, list) and len(load) == 3 and all(isinstance(x, int | float) for x in load)
    ):
        errors.append(f"load_at_start {load!r} is not three numbers or null")
    found = block.get("machine")
    if not isinstance(found, dict) or list(found) != list(MACHINE_KEYS):
        errors.append(f"machine {found!r} does not have exactly the keys {list(MACHINE_KEYS)}")
        found = {}
    missing = block.get("missing")
    nulls = [k for k in PROVENANCE_KEYS[:-1] if k != "machine" and block.get(k) is None]
    nulls += [f"machine.{k}" for k in MACHINE_KEYS if found.get(k) is None]
    if not isinstance(missing, list) or sorted(missing) != sorted(nulls):
        errors.append(f"missing {missing!r}, but the null fields are {nulls}")
    return errors


class Run:
    """One benchmark run: what it measures (commit, tree, machine, load, command), taken when it
    starts, and the records it writes."""

    def __init__(self, argv: Sequence[str] | None = None, repo: Path = REPO):
        self.git = git_state(repo)
        self.machine = machine()
        self.load_at_start = load_average()
        self.started_utc = utc_now()
        self.command = command_line(argv, repo)

    def provenance(self) -> dict[str, Any]:
        """The block, ``finished_utc`` now."""
        return provenance_block(
            **self.git,
            machine=self.machine,
            load_at_start=self.load_at_start,
            started_utc=self.started_utc,
            finished_utc=utc_now(),
            command=self.command,
        )

    def record(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` under this run's block (a ``provenance`` key in ``body`` is replaced)."""
        return {
            "provenance": self.provenance(),
            **{k: v for k, v in body.items() if k != "provenance"},
        }

    def write_record(self, path: Path | str, body: dict[str, Any]) -> dict[str, Any]:
        """Write ``body`` under this run's block to ``path`` (JSON, atomically, NaN as null)."""
        record = nan_to_none(self.record(body))
        write_json_atomic(path, record)
        return record

    def merge_entry(
        self, path: Path | str, header: dict[str, Any], label: str, entry: dict[str, Any]
    ) -> dict[str, Any]:
        """Rewrite the record at ``path`` with ``header``'s keys and ``entry`` as
        ``models[label]``, keeping the other models' entries (one model per run, several models
        per record). The entry carries this run's block; so does the record, whose header this
        run wrote last."""
        import json

        path = Path(path)
        report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        report.pop("provenance", None)
        report.update(header)
        report.setdefault("models", {})[label] = {"provenance": self.provenance(), **entry}
        return self.write_record(path, report)

    def merge_section(self, path: Path | str, key: str, section: dict[str, Any]) -> dict[str, Any]:
        """Add ``section`` under ``key`` to the record at ``path`` (another benchmark's record:
        its own figures and block stay), with this run's block in the section. A new file gets
        this run's block at the top too."""
        import json

        path = Path(path)
        report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        report[key] = {"provenance": self.provenance(), **section}
        if "provenance" not in report:
            return self.write_record(path, report)
        record = nan_to_none(report)
        write_json_atomic(path, record)
        return record


def start(argv: Sequence[str] | None = None, repo: Path = REPO) -> Run:
    """The run, recorded now: call it before measuring anything."""
    return Run(argv, repo)


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
