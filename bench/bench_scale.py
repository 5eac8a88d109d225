"""Scale benchmark: the paper profile over N mirror documents x 8 chunkers, simulated LLM server.

For each size N (default 10, 30, 100) one cold run (fresh cache) and two warm reruns on its cache
(answers only, then results reused), each in its own child process so that its peak RSS is its
own. Reported per size: LLM requests,
cold wall time against the bound requests x latency / concurrency, peak RSS, the response cache's
size and lookup time, the evidence file's size, the warm rerun's time. Results:
bench/results/scale.json (``make bench-scale``).

Each cold run keeps every pair's finished result in the cache (``cache.reuse_results``, the
default), so the warm rerun reads results back; a second warm rerun with ``reuse_results`` off
recomputes every pair from the cached answers and is reported beside it.

Targets (issue 15): cold wall <= 1.2 x the bound at every size; peak RSS growing < 1.5 x from the
smallest to the largest size; a warm rerun of the largest size < 1 % of its cold time.

Documents: the offline mirror (``corpus=mirror``, prepared once into ``--work-dir``), a seeded
shuffle of which the first N are taken, so each size contains the smaller ones. Chunkers: the
paper's six fixed-size and recursive setups, and two stand-ins for its semantic setups
(``fixed_1000_o0``, ``recursive_1000``), because the semantic chunkers' sentence-transformer
models take minutes per document on a CPU and the subject here is the LLM orchestration. The
embedder is the lexical HashingEmbedder for the same reason. Each document is chunked when its
pairs' turn comes (``score_pair_stream`` reads the pairs as slots free) and the evidence is
written as pairs finish (``on_result``), one JSON line per pair: neither the corpus's passages nor
its evidence is held for the whole run.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from workloads import (
    PAPER_CHUNKERS,
    STAND_INS,
    RssSampler,
    chunkers,
    mirror_documents,
    select,
    simulated_llm,
    simulated_server,
)

# --- the child: one scoring run --------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    import asyncio

    from hope.core.chunk_cache import cached_chunks
    from hope.core.evaluator import HopeEvaluator
    from hope.core.hope_settings import load_profile
    from hope.core.io import atomic_path
    from hope.core.response_cache import ResponseCache
    from hope.models.embeddings import CachingEmbedder, HashingEmbedder
    from hope.pipeline.chunk_step import chunk_pair
    from hope.pipeline.score_step import score_pair_stream, score_row

    documents = select(Path(args.documents), args.docs)
    chunker_list = chunkers()
    # Each document is chunked when its pairs' turn comes: the run holds the passages of the
    # pairs in flight, not the corpus's.
    counted = {"passages": 0}

    def pairs():
        for document in documents:
            for chunker in chunker_list:
                # Read back from the cache in a warm rerun with results reused, as hope-run does.
                records = cached_chunks(
                    evaluator.result_cache,
                    chunker.config,
                    document,
                    lambda chunker=chunker, document=document: chunk_pair(chunker, document),
                )
                counted["passages"] += len(records)
                yield document, chunker.name, records

    cache = ResponseCache(args.cache)
    llm = simulated_llm(args.base_url, args.concurrency, cache)
    embedder = CachingEmbedder(HashingEmbedder(), cache)
    settings = load_profile("paper", progress=False)
    evaluator = HopeEvaluator(
        llm, embedder, settings, result_cache=cache if args.reuse_results == "on" else None
    )
    with atomic_path(args.evidence) as tmp, tmp.open("w", encoding="utf-8") as evidence:

        def write(document, chunker, result):
            line = {"doc_id": document["doc_id"], "chunker": chunker, **result.to_dict()}
            evidence.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")
            return score_row(document, chunker, result)

        sampler = RssSampler().start()
        started = time.perf_counter()
        rows = asyncio.run(
            score_pair_stream(
                evaluator,
                pairs(),
                parallel_pairs=args.parallel_pairs,
                progress=False,
                on_result=write,
            )
        )
        wall = time.perf_counter() - started
        sampler.stop()
    usage = llm.usage.to_dict()
    own = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "pairs": len(rows),
                "passages": counted["passages"],
                "document_chars": sum(len(d["text"]) for d in documents),
                "requests": usage["requests"],
                "cache_hits": usage["cache_hits"],
                "failures": usage["failures"],
                "reused_results": evaluator.reused_results,
                "peak_rss_mib": own.ru_maxrss / 1024,
                "cpu_s": own.ru_utime + own.ru_stime,  # whole process, chunking included
                "rss_before_scoring_mib": sampler.first_mib,
                "peak_rss_scoring_mib": sampler.peak_mib,
                "scores": [[r["doc_id"], r["chunker"], r["hope"]] for r in rows],
            }
        )
    )


# --- the parent --------------------------------------------------------------------------------


def run_child(
    args, base_url: str, docs: int, cache: Path, evidence: Path, reuse_results: bool = True
) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        "--documents",
        str(args.documents_path),
        "--docs",
        str(docs),
        "--cache",
        str(cache),
        "--evidence",
        str(evidence),
        "--base-url",
        base_url,
        "--concurrency",
        str(args.concurrency),
        "--parallel-pairs",
        str(args.parallel_pairs),
        "--reuse-results",
        "on" if reuse_results else "off",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def cache_lookup(cache_path: Path, samples: int = 2000) -> dict[str, Any]:
    """Size of the cache and the time of ``get_json`` for random keys of the chat namespace."""
    import sqlite3

    from hope.core.response_cache import ResponseCache

    conn = sqlite3.connect(cache_path)
    keys = [k for (k,) in conn.execute("SELECT key FROM entries WHERE namespace='chat'")]
    entries = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    conn.close()
    cache = ResponseCache(cache_path)
    sample = random.Random(0).sample(keys, min(samples, len(keys)))
    times = []
    for key in sample:
        started = time.perf_counter()
        cache.get_json("chat", key)
        times.append(time.perf_counter() - started)
    cache.close()
    wal = cache_path.with_name(cache_path.name + "-wal")
    return {
        "entries": entries,
        "chat_entries": len(keys),
        "bytes": cache_path.stat().st_size + (wal.stat().st_size if wal.exists() else 0),
        "lookup_us_median": round(statistics.median(times) * 1e6, 1),
        "lookup_us_p95": round(sorted(times)[int(0.95 * len(times))] * 1e6, 1),
        "lookups_timed": len(times),
    }


def spread(values: list[float]) -> dict[str, Any]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "runs": len(values),
    }


def measure(args, base_url: str, docs: int, tmp: Path) -> dict[str, Any]:
    colds = []
    for repeat in range(args.repeats if docs < max(args.sizes) else 1):
        cache = tmp / f"cache-{docs}-{repeat}.sqlite"
        evidence = tmp / f"evidence-{docs}-{repeat}.jsonl"
        cold = run_child(args, base_url, docs, cache, evidence)
        cold["evidence_bytes"] = evidence.stat().st_size
        colds.append((cold, cache))
        print(f"  {docs} docs cold #{repeat + 1}: {cold['wall_s']:.1f} s", file=sys.stderr)
    cold, cache = colds[0]
    # Warm with the answers only (cache.reuse_results=false: every pair recomputed from cached
    # answers), then warm as a user runs it (each pair's kept result read back).
    answers_only = run_child(
        args, base_url, docs, cache, tmp / f"evidence-{docs}-answers.jsonl", reuse_results=False
    )
    warm = run_child(args, base_url, docs, cache, tmp / f"evidence-{docs}-warm.jsonl")
    bound = cold["requests"] * args.latency / args.concurrency
    walls = [c["wall_s"] for c, _ in colds]
    rss = [c["peak_rss_scoring_mib"] for c, _ in colds]
    return {
        "documents": docs,
        "pairs": cold["pairs"],
        "passages": cold["passages"],
        "document_chars": cold["document_chars"],
        "requests": cold["requests"],
        "failures": cold["failures"],
        "bound_s": round(bound, 3),
        "cold_wall_s": spread(walls),
        "cold_ratio_to_bound": round(statistics.median(walls) / bound, 3),
        "cold_process_cpu_s": round(cold["cpu_s"], 1) if "cpu_s" in cold else None,
        "peak_rss_mib": spread(rss),
        "rss_before_scoring_mib": round(cold["rss_before_scoring_mib"], 1),
        "process_max_rss_mib": round(cold["peak_rss_mib"], 1),
        "evidence_bytes": cold["evidence_bytes"],
        "cache": cache_lookup(cache),
        "warm_wall_s": round(warm["wall_s"], 3),
        "warm_requests": warm["requests"],
        "warm_reused_results": warm["reused_results"],
        "warm_answers_only_wall_s": round(answers_only["wall_s"], 3),
        "warm_answers_only_requests": answers_only["requests"],
        "warm_answers_only_share_of_cold": round(
            answers_only["wall_s"] / statistics.median(walls), 4
        ),
        "warm_answers_only_scores_equal_cold": answers_only["scores"] == cold["scores"],
        "warm_peak_rss_mib": round(warm["peak_rss_scoring_mib"], 1),
        "warm_share_of_cold": round(warm["wall_s"] / statistics.median(walls), 4),
        "warm_scores_equal_cold": warm["scores"] == cold["scores"],
        "repeat_scores_equal": all(c["scores"] == cold["scores"] for c, _ in colds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 100])
    parser.add_argument("--repeats", type=int, default=1, help="cold runs of the smaller sizes")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--parallel-pairs", type=int, default=16)
    parser.add_argument("--work-dir", default=".cache/bench-scale", help="prepared mirror")
    parser.add_argument("--output", default="bench/results/scale.json")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="add these sizes to those already in --output (each size keeps its own provenance "
        "block)",
    )
    # child mode
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--documents", help=argparse.SUPPRESS)
    parser.add_argument("--docs", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--evidence", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument(
        "--reuse-results", choices=["on", "off"], default="on", help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    bench_run = harness.start()  # the code measured: before the runs
    args.documents_path = mirror_documents(Path(args.work_dir).resolve())
    sizes = sorted(args.sizes)
    results: list[dict[str, Any]] = []
    if args.merge and Path(args.output).is_file():
        earlier = json.loads(Path(args.output).read_text(encoding="utf-8"))["sizes"]
        results = [r for r in earlier if r["documents"] not in sizes]
    report: dict[str, Any] = {
        "benchmark": "scale",
        "workload": {
            "profile": "paper",
            "documents": "offline mirror (corpus=mirror), seeded shuffle (seed 15), first N",
            "chunkers": [*PAPER_CHUNKERS, *STAND_INS],
            "semantic_stand_ins": "fixed_1000_o0 and recursive_1000 replace semantic_minilm/mpnet",
            "embedder": "hashing",
            "latency_s": args.latency,
            "concurrency": args.concurrency,
            "parallel_pairs": args.parallel_pairs,
            "repeats_small_sizes": args.repeats,
            "server": "the simulated server, in a child process",
        },
        "sizes": results,
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        simulated_server(args.latency, wait_s=60) as (url, stats),
    ):
        for docs in sizes:
            print(f"scale: {docs} documents", file=sys.stderr)
            # Each size carries the block of the run that measured it: --merge keeps other runs'.
            size = measure(args, url, docs, Path(tmp))
            results.append({"provenance": bench_run.provenance(), **size})
            results.sort(key=lambda r: r["documents"])
            report["targets"] = targets(results)
            bench_run.write_record(args.output, report)  # what is measured so far survives a kill
    report["server"] = stats
    bench_run.write_record(args.output, report)
    print(json.dumps(report["targets"], indent=2))


def targets(results: list[dict[str, Any]]) -> dict[str, Any]:
    first, last = results[0], results[-1]
    return {
        "wall_within_1.2x_bound_every_size": all(r["cold_ratio_to_bound"] <= 1.2 for r in results),
        "rss_growth_smallest_to_largest": round(
            last["peak_rss_mib"]["median"] / first["peak_rss_mib"]["median"], 3
        ),
        "rss_growth_below_1.5x": last["peak_rss_mib"]["median"] / first["peak_rss_mib"]["median"]
        < 1.5,
        "warm_largest_below_1pct_of_cold": last["warm_share_of_cold"] < 0.01,
        "largest_size_reached": last["documents"],
        "sizes_measured": [r["documents"] for r in results],
    }


if __name__ == "__main__":
    main()
