"""`make repro` benchmark: wall time of the default pipeline, cold and warm (install excluded).

Copies the repository's pipeline files into a scratch folder (sharing .venv), then runs
`dvc repro table1 hope bleu` there twice:
  cold  an empty response cache and no DVC outputs: every stage and every LLM call runs;
  warm  the DVC outputs removed (`--force`) but the response cache kept: every stage reruns and
        the HOPE stage is answered from the cache (0 LLM requests).
Writes JSON (default bench/results/repro.json). Targets (issue 6): cold <= 15 min, warm <= 1 min.
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

from hope.io import write_json_atomic

REPO = Path(__file__).resolve().parents[1]
COPIED = ["dvc.yaml", "params.yaml", ".dvcignore", "conf", "src"]
TARGETS = ["table1", "hope", "bleu"]


def repro(work: Path, env: dict[str, str], *extra: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(work / ".venv" / "bin" / "dvc"), "repro", *extra, *TARGETS],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(REPO / "bench" / "results" / "repro.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in COPIED:
            source = REPO / name
            if source.is_dir():
                shutil.copytree(source, work / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, work / name)
        (work / ".venv").symlink_to(REPO / ".venv")
        cache = work / "cache.sqlite"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HOPE_CACHE": str(cache)}
        params = (
            (work / "params.yaml")
            .read_text()
            .replace("cache: .cache/hope/cache.sqlite", f"cache: {cache}")
        )
        (work / "params.yaml").write_text(params)
        subprocess.run(
            [str(work / ".venv" / "bin" / "dvc"), "init", "--no-scm", "-q"], cwd=work, check=True
        )
        cold = repro(work, env)
        summary = json.loads((work / "data" / "hope" / "summary.json").read_text())
        warm = repro(work, env, "--force")
        warm_summary = json.loads((work / "data" / "hope" / "summary.json").read_text())
    report = {
        "benchmark": "repro",
        "targets_run": TARGETS,
        "pairs": summary["pairs"],
        "cold": {"wall_s": round(cold, 1), "llm_requests": summary["usage"]["requests"]},
        "warm": {"wall_s": round(warm, 1), "llm_requests": warm_summary["usage"]["requests"]},
        "met": {"cold_within_15_min": cold <= 900, "warm_within_1_min": warm <= 60},
    }
    write_json_atomic(args.output, report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
