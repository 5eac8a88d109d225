"""`make repro` benchmark: wall time of the default experiment, cold and warm (install excluded).

Clones the repository's committed state into a scratch folder (sharing this .venv, as a fresh
clone would after `make setup`), then runs there what `make repro` runs after its install
(`python -m hope.pipeline.repro`: `dvc repro` of every stage, then `hope-run`) twice:
  cold  a fresh clone: no DVC outputs, empty response cache, empty MLflow store;
  warm  the same command again at once: DVC skips every unchanged stage (the report lists any
        pipeline output rewritten), `hope-run` is answered from the response cache.
Repeats that in --runs fresh clones (at least 5) and writes JSON (default
bench/results/repro.json) with the median and spread of the cold and warm wall times, per-step
times, LLM request counts per stage, whether each clone's dvc.lock gives every output the
committed lock's hash, whether `git status` in the clone is clean after the runs, the commit
measured and the machine (bench/harness.py), and whether the targets of issue 6 hold (cold <=
15 min, warm <= 1 min, on the medians). Every --other-cpu-every-th clone (default: every second)
runs as another x86 CPU would (hope.testing.OTHER_CPU_ENV); each run records its CPU (issue #35).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from harness import MIN_RUNS, REPO, check_runs, machine, spread
from hope.pipeline.lock import lock_differences, lock_outputs
from hope.testing import OTHER_CPU_ENV

# Summaries written by the stages that call an LLM; each holds its LLM usage under "usage".
USAGE_FILES = {
    "hope": "data/hope/summary.json",
    "questions": "data/questions/summary.json",
    "rag": "data/rag/summary.json",
    "ragas": "data/ragas/summary.json",
    "labelled": "data/labelled/metrics.json",
}


def run_repro(work: Path, env: dict[str, str]) -> dict[str, float]:
    timings_file = work / ".bench_timings.json"
    subprocess.run(
        [
            str(REPO / ".venv" / "bin" / "python"),
            "-m",
            "hope.pipeline.repro",
            "--repo",
            str(work),
            "--bin-dir",
            str(REPO / ".venv" / "bin"),
            "--timings",
            str(timings_file),
        ],
        cwd=work,
        env=env,
        check=True,
    )
    return json.loads(timings_file.read_text())


def llm_requests(work: Path) -> dict[str, Any]:
    counts: dict[str, Any] = {}
    for stage, path in USAGE_FILES.items():
        file = work / path
        if not file.is_file():
            counts[stage] = None
            continue
        usage = json.loads(file.read_text()).get("usage") or {}
        if "requests" not in usage:  # one usage block per LLM role (questions, answer, judge)
            usage = {
                "requests": sum(u.get("requests", 0) for u in usage.values() if isinstance(u, dict))
            }
        counts[stage] = usage.get("requests")
    return counts


def output_mtimes(work: Path) -> dict[str, float]:
    return {
        str(path.relative_to(work)): path.stat().st_mtime
        for folder in ("data", "paper_figures")
        for path in (work / folder).rglob("*")
        if path.is_file()
    }


def git_status(work: Path) -> list[str]:
    """``git status --porcelain`` of the clone: what the run left modified or untracked."""
    return subprocess.run(
        ["git", "status", "--porcelain"], cwd=work, capture_output=True, text=True, check=True
    ).stdout.splitlines()


def compare_lock(committed: Path, produced: Path) -> dict[str, Any]:
    """Does the run's dvc.lock give every output the committed lock's hash?"""
    if not committed.is_file():
        return {"equal": None, "reason": "no committed dvc.lock", "differences": []}
    differences = lock_differences(lock_outputs(committed), lock_outputs(produced))
    return {"equal": not differences, "differences": differences}


def one_run(work: Path, env: dict[str, str]) -> dict[str, Any]:
    """A cold `make repro` (after the install) in the fresh clone ``work``, then a warm one."""
    committed_lock = work / ".bench_committed_dvc.lock"
    if (work / "dvc.lock").is_file():
        shutil.copy2(work / "dvc.lock", committed_lock)
    started = time.perf_counter()
    cold = run_repro(work, env)
    cold_wall = time.perf_counter() - started
    lock = compare_lock(committed_lock, work / "dvc.lock")
    committed_lock.unlink(missing_ok=True)
    (work / ".bench_timings.json").unlink(missing_ok=True)
    status = git_status(work)
    requests = llm_requests(work)
    pairs = json.loads((work / "data" / "hope" / "summary.json").read_text())["pairs"]
    before = output_mtimes(work)
    started = time.perf_counter()
    warm = run_repro(work, env)
    warm_wall = time.perf_counter() - started
    (work / ".bench_timings.json").unlink(missing_ok=True)
    after = output_mtimes(work)
    return {
        "cold_wall_s": cold_wall,
        "cold_steps_s": cold,
        "llm_requests": requests,
        "pairs": pairs,
        "lock": lock,
        "git_status_after_cold": status,
        "warm_wall_s": warm_wall,
        "warm_steps_s": warm,
        "warm_outputs_rewritten": sorted(k for k in after if before.get(k) != after[k]),
        "git_status_after_warm": git_status(work),
    }


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    cold, warm = (
        spread([r["cold_wall_s"] for r in runs], digits=1),
        spread([r["warm_wall_s"] for r in runs], digits=1),
    )
    locks = [r["lock"]["equal"] for r in runs]
    clean = [not r["git_status_after_cold"] and not r["git_status_after_warm"] for r in runs]
    return {
        "benchmark": "repro",
        "runs": len(runs),
        "pairs": runs[0]["pairs"],
        "cold": {
            "wall_s": cold,
            "steps_s_each": [r["cold_steps_s"] for r in runs],
            "llm_requests_each": [r["llm_requests"] for r in runs],
        },
        # Warm: DVC skips every stage (no pipeline output rewritten, so no LLM request there).
        "warm": {
            "wall_s": warm,
            "steps_s_each": [r["warm_steps_s"] for r in runs],
            "outputs_rewritten_each": [r["warm_outputs_rewritten"] for r in runs],
        },
        # The fresh clone's dvc.lock against the committed one (output hashes only), and what
        # `git status` shows in the clone after the cold and after the warm run.
        "lock_equals_committed_each": locks,
        # The processor of each clone's run, and the kernel switches it ran under, if any.
        "cpu_each": [r["cpu"] for r in runs],
        "cpu_emulated_each": [r["cpu_emulated"] for r in runs],
        "lock_differences_first_run": runs[0]["lock"]["differences"],
        "git_status_clean_each": clean,
        "git_status_first_run": {
            "after_cold": runs[0]["git_status_after_cold"],
            "after_warm": runs[0]["git_status_after_warm"],
        },
        "targets": {"cold_s": 900, "warm_s": 60},
        "met": {
            "cold_within_15_min": cold["median"] <= 900,
            "warm_within_1_min": warm["median"] <= 60,
            "lock_equals_committed": all(lock is True for lock in locks),
            "git_status_clean": all(clean),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(REPO / "bench" / "results" / "repro.json"))
    parser.add_argument("--runs", type=int, default=MIN_RUNS, help="fresh clones, cold + warm")
    parser.add_argument(
        "--other-cpu-every",
        type=int,
        default=2,
        help="run every Nth clone as another x86 CPU would (hope.testing.OTHER_CPU_ENV); 0: none",
    )
    args = parser.parse_args()
    check_runs(args.runs)
    bench_run = harness.start()
    if bench_run.git["dirty"]:
        print("bench_repro: the working tree differs from HEAD; the clones measure HEAD only")
    runs = []
    for number in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="hope-bench-repro-") as tmp:
            work = Path(tmp) / "hope"
            subprocess.run(["git", "clone", "--quiet", str(REPO), str(work)], check=True)
            (work / ".venv").symlink_to(REPO / ".venv")
            # The sample corpus path in the params is relative (../shared/corpora for the
            # mirror); the default sample experiment reads the package's own documents.
            env = {
                **os.environ,
                "HOPE_REPO": str(work),
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }
            for name in ("HOPE_CACHE", "MLFLOW_TRACKING_URI"):
                env.pop(name, None)
            # The clone's own code, not the editable install's (this checkout's working tree).
            env["PYTHONPATH"] = str(work / "src")
            # The lock must not depend on the processor (issue #35): some clones run with the
            # kernels of an x86-64-v2 machine with one core instead of this CPU's own.
            emulated = bool(args.other_cpu_every) and (number + 1) % args.other_cpu_every == 0
            if emulated:
                env.update(OTHER_CPU_ENV)
            run = one_run(work, env)
            run["cpu"] = machine()["cpu"]
            run["cpu_emulated"] = OTHER_CPU_ENV if emulated else None
            runs.append(run)
        print(f"bench_repro: run {number + 1}/{args.runs}: cold {runs[-1]['cold_wall_s']:.1f} s")
        # Written after every clone: a run stopped early leaves the clones it finished, marked.
        report = {**summarise(runs), "runs_planned": args.runs}
        report["complete"] = len(runs) == args.runs
        report = bench_run.write_record(args.output, report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
