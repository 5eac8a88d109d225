"""`make repro` benchmark: wall time of the default experiment, cold and warm (install excluded).

Clones the repository's committed state into a scratch folder (sharing this .venv, as a fresh
clone would after `make setup`), then runs there what `make repro` runs after its install
(`python -m hope.pipeline.repro`: `dvc repro` of every stage, then `hope-run`) twice:
  cold  a fresh clone: no DVC outputs, empty response cache, empty MLflow store;
  warm  the same command again at once: DVC skips every unchanged stage (the report lists any
        pipeline output rewritten), `hope-run` is answered from the response cache.
Writes JSON (default bench/results/repro.json) with per-step times, LLM request counts per stage
and whether the targets of issue 6 hold (cold <= 15 min, warm <= 1 min).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from hope.io import write_json_atomic

REPO = Path(__file__).resolve().parents[1]
# Summaries written by the stages that call an LLM, and the field holding their usage.
USAGE_FILES = {
    "hope": ("data/hope/summary.json", "usage"),
    "questions": ("data/questions/summary.json", "usage"),
    "rag": ("data/rag/summary.json", "usage"),
    "ragas": ("data/ragas/summary.json", "usage"),
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
    for stage, (path, field) in USAGE_FILES.items():
        file = work / path
        if not file.is_file():
            counts[stage] = None
            continue
        usage = json.loads(file.read_text()).get(field) or {}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(REPO / "bench" / "results" / "repro.json"))
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="hope-bench-repro-") as tmp:
        work = Path(tmp) / "hope"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(work)], check=True)
        (work / ".venv").symlink_to(REPO / ".venv")
        # The sample corpus path in the params is relative (../shared/corpora for the mirror); the
        # default sample experiment reads the package's own documents, so nothing else is needed.
        env = {
            **os.environ,
            "HOPE_REPO": str(work),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        env.pop("HOPE_CACHE", None)
        env.pop("MLFLOW_TRACKING_URI", None)
        started = time.perf_counter()
        cold = run_repro(work, env)
        cold_wall = time.perf_counter() - started
        cold_requests = llm_requests(work)
        pairs = json.loads((work / "data" / "hope" / "summary.json").read_text())["pairs"]
        figures = sorted(p.name for p in (work / "paper_figures").glob("*.png"))
        before = output_mtimes(work)
        started = time.perf_counter()
        warm = run_repro(work, env)
        warm_wall = time.perf_counter() - started
        after = output_mtimes(work)
        rewritten = sorted(k for k in after if before.get(k) != after[k])
    report = {
        "benchmark": "repro",
        "commit": commit,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "pairs": pairs,
        "figures": figures,
        "cold": {"wall_s": round(cold_wall, 1), "steps_s": cold, "llm_requests": cold_requests},
        # Warm: DVC skips every stage (no pipeline output rewritten, so no LLM request there);
        # hope-run scores from the response cache.
        "warm": {"wall_s": round(warm_wall, 1), "steps_s": warm, "outputs_rewritten": rewritten},
        "targets": {"cold_s": 900, "warm_s": 60},
        "met": {"cold_within_15_min": cold_wall <= 900, "warm_within_1_min": warm_wall <= 60},
    }
    write_json_atomic(args.output, report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
