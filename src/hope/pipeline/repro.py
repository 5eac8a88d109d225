"""What ``make repro`` runs after the install: the whole default experiment, timed.

``dvc repro``: every stage of dvc.yaml (corpora → Table 1 → chunks → HOPE → BLEU → questions →
RAG → RAGAS → Tables 1–2, Figures 6–7 and the leaderboard in paper_figures/, and the labelled
benchmark at the experiment's size); stages whose inputs did not change are skipped. The ``hope``
stage logs its own MLflow run (config, seeds, git commit, data hashes, sub-metrics per corpus,
domain and pair, prompts, usage, evidence) and
``paper_outputs`` logs paper_figures/, so HOPE is scored once and nothing runs after DVC. Then
``dvc metrics show`` and ``dvc plots show`` read what the stages wrote.

Prints the wall time of each step and writes it to ``--timings`` (JSON), which the benchmark
``bench/bench_repro.py`` reads.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from hope.core.io import write_json_atomic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path.cwd())
    parser.add_argument(
        "--bin-dir",
        type=Path,
        default=Path(sys.executable).parent,
        help="folder holding dvc (default: this interpreter's)",
    )
    parser.add_argument("--timings", type=Path, help="write the step timings here (JSON)")
    args = parser.parse_args(argv)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print("make repro: dvc repro", file=sys.stderr, flush=True)
    started = time.perf_counter()
    try:
        command = [str(args.bin_dir / "dvc"), "repro"]
        subprocess.run(command, cwd=args.repo.resolve(), env=env, check=True)
    except subprocess.CalledProcessError as exc:
        print(f"make repro: {' '.join(exc.cmd)} failed (exit {exc.returncode})", file=sys.stderr)
        return exc.returncode or 1
    seconds = round(time.perf_counter() - started, 1)
    timings = {"dvc_repro": seconds, "total": seconds}
    if args.timings:
        write_json_atomic(args.timings, timings)
    summary = ", ".join(f"{name} {seconds:g} s" for name, seconds in timings.items())
    print(
        f"make repro: done ({summary}); paper_figures/, `dvc metrics show`, `dvc plots show` and "
        "`make ui` (the MLflow UI on mlflow.db, with links that open on the chunker runs)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
