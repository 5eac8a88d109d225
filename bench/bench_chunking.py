"""Chunking benchmark: CPU seconds each chunker of the scale benchmark takes over its documents.

The scale benchmark chunks every document inside its timed window (as ``hope-run`` does), so a
warm rerun whose results all come from the cache is mostly chunking. This measures where that time
goes: the first ``--docs`` documents of the scale benchmark's mirror selection (the same seeded
shuffle), each of its 8 chunkers over all of them, ``--runs`` times. Reported per chunker: process
CPU seconds (median and spread), passages and characters. Results: bench/results/chunking.json
(``make bench-chunking``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import harness
from harness import MIN_RUNS, REPO, check_runs, spread
from hope.pipeline.chunk_step import chunk_pair
from workloads import chunkers, mirror_documents, select


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--runs", type=int, default=MIN_RUNS)
    parser.add_argument("--work-dir", default=".cache/bench-scale", help="prepared mirror")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "chunking.json")
    args = parser.parse_args()
    check_runs(args.runs)
    bench_run = harness.start()
    documents = select(mirror_documents(Path(args.work_dir).resolve()), args.docs)
    found = chunkers()
    times: dict[str, list[float]] = {chunker.name: [] for chunker in found}
    passages: dict[str, int] = {}
    for run in range(args.runs):
        for chunker in found:
            started = time.process_time()
            count = sum(len(chunk_pair(chunker, document)) for document in documents)
            times[chunker.name].append(time.process_time() - started)
            passages[chunker.name] = count
        print(f"run {run + 1}/{args.runs}: {json.dumps({k: v[-1] for k, v in times.items()})}")
    record = {
        "benchmark": "chunking",
        "workload": {
            "documents": len(documents),
            "document_chars": sum(len(d["text"]) for d in documents),
            "selection": "workloads.select: the offline mirror, seeded shuffle (seed 15)",
        },
        "chunkers": {
            name: {"cpu_s": spread(values), "passages": passages[name]}
            for name, values in times.items()
        },
        "total_cpu_s_median_sum": round(
            sum(spread(values)["median"] for values in times.values()), 3
        ),
    }
    bench_run.write_record(args.out, record)
    print(json.dumps(record["chunkers"], indent=1))


if __name__ == "__main__":
    main()
