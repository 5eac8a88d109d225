"""Server-pool benchmark: HOPE's scoring spread over 1-4 simulated OpenAI-compatible servers.

Each server runs in its own process with a fixed latency; the client keeps ``--concurrency``
requests in flight per server (``llm.base_url`` a list, hope.models.server_pool). Every size is
run ``--repeats`` times on a fresh cache, the sizes taking turns. Writes JSON (default
bench/results/servers.json): per number of servers the median, min and max wall time and
throughput, the ideal bound (calls x latency / (servers x concurrency)), the speed-up over one
server, how the requests were spread ([requests, faults] per server and run), and whether the
scores equal the one-server run's; and a control, one server without the pool at the largest
size's total concurrency (the pool at most as slow: it costs nothing). Target (issue 15):
throughput scales with the servers at fixed per-server concurrency: speed-up >= 0.8 x servers.

The embedder is the lexical HashingEmbedder: the measurement is the LLM orchestration.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import harness
from workloads import simulated_evaluator, simulated_server, workload


def run_once(urls: list[str], cache_path: Path, document, passages, concurrency: int):
    llm, evaluator = simulated_evaluator(urls, cache_path, concurrency)
    started, cpu_started = time.perf_counter(), time.process_time()
    result = evaluator.evaluate(document, passages)
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    pool = llm.server_pool
    # Requests sent to each server, and faults seen (none expected: the servers inject none).
    spread = (
        [(s["requests"], s["failures"]) for s in pool.stats()]
        if pool is not None
        else [(result.usage["llm"]["requests"], result.usage["llm"]["failures"])]
    )
    return result, wall, spread, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8, help="per server")
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 2, 3, 4])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", default="bench/results/servers.json")
    args = parser.parse_args()
    bench_run = harness.start()

    document, passages = workload(args.passages)
    sizes: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        tmp = Path(tmp)
        urls = [
            stack.enter_context(simulated_server(args.latency))[0] for _ in range(max(args.servers))
        ]
        # Warm the interpreter (lazy imports, the sentence splitter) on other text.
        run_once(urls[:1], tmp / "warmup.sqlite", *workload(2), args.concurrency)
        # Rounds of every size in turn, so that load from other processes on the machine
        # falls on every size alike rather than on whichever size ran while it lasted.
        # The control: one server (no pool) at the largest size's total concurrency. Where the
        # pool is as fast, the pool costs nothing and any shortfall from n-fold is this machine.
        most = max(args.servers)
        runs: dict[int, list] = {n: [] for n in args.servers}
        control: list = []
        for repeat in range(args.repeats):
            for n in args.servers:
                path = tmp / f"s{n}-{repeat}.sqlite"
                runs[n].append(run_once(urls[:n], path, document, passages, args.concurrency))
                print(f"round {repeat}: {n} server(s) {runs[n][-1][1]:.2f} s", flush=True)
            path = tmp / f"control-{repeat}.sqlite"
            control.append(run_once(urls[:1], path, document, passages, most * args.concurrency))
            print(f"round {repeat}: control {control[-1][1]:.2f} s", flush=True)
        reference = runs[args.servers[0]][0][0].scores
        for n in args.servers:
            walls = [wall for _, wall, _, _ in runs[n]]
            cpus = [cpu for _, _, _, cpu in runs[n]]
            calls = [result.usage["llm"]["requests"] for result, _, _, _ in runs[n]]
            median = statistics.median(walls)
            ideal = calls[0] * args.latency / (n * args.concurrency)
            sizes[str(n)] = {
                "servers": n,
                "calls": calls[0],
                "wall_s_median": round(median, 3),
                "wall_s_min": round(min(walls), 3),
                "wall_s_max": round(max(walls), 3),
                "wall_s_each": [round(w, 3) for w in walls],
                "throughput_rps_median": round(calls[0] / median, 1),
                "ideal_bound_s": round(ideal, 3),
                "ratio_to_ideal": round(median / ideal, 3),
                "requests_per_server_each": [spread for _, _, spread, _ in runs[n]],
                # CPU time of the client process (HOPE + the pool): near the wall time means the
                # client, not the servers, set the pace.
                "client_cpu_s_each": [round(c, 3) for c in cpus],
                "client_cpu_s_median": round(statistics.median(cpus), 3),
                "scores_equal_one_server": len(set(calls)) == 1
                and all(result.scores == reference for result, _, _, _ in runs[n]),
            }
            print(f"{n} server(s): median {median:.2f} s ({calls[0]} calls, bound {ideal:.2f} s)")

    base = sizes[str(min(args.servers))]
    for entry in sizes.values():
        entry["speedup_vs_fewest"] = round(base["wall_s_median"] / entry["wall_s_median"], 2)
        entry["scaling_efficiency"] = round(
            entry["speedup_vs_fewest"] * base["servers"] / entry["servers"], 3
        )
        entry["speedup_vs_fewest_best_runs"] = round(base["wall_s_min"] / entry["wall_s_min"], 2)
    report = {
        "benchmark": "servers",
        # The block has the load at the start; at the end, what else ran beside the rounds.
        "load_at_end": [round(x, 2) for x in os.getloadavg()],
        "workload": {
            "passages": len(passages),
            "document_chars": len(document),
            "profile": "paper",
            "latency_s": args.latency,
            "concurrency_per_server": args.concurrency,
            "repeats": args.repeats,
        },
        "sizes": sizes,
        "control_one_server_same_total_concurrency": {
            "servers": 1,
            "concurrency": most * args.concurrency,
            "wall_s_median": round(statistics.median(w for _, w, _, _ in control), 3),
            "wall_s_each": [round(w, 3) for _, w, _, _ in control],
            "client_cpu_s_each": [round(c, 3) for _, _, _, c in control],
            "pool_median_over_control_median": round(
                sizes[str(most)]["wall_s_median"] / statistics.median(w for _, w, _, _ in control),
                3,
            ),
        },
        "targets": {
            "speedup_at_least_0.8x_servers": all(
                e["scaling_efficiency"] >= 0.8 for e in sizes.values()
            ),
            "scores_equal_one_server": all(e["scores_equal_one_server"] for e in sizes.values()),
        },
    }
    bench_run.write_record(args.output, report)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
