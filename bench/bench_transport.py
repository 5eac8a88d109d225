"""Transport benchmark: the client's CPU per chat request over httpx's pool and over aiohttp's.

The openai client sends every request of a run; at the scale benchmark's 64 requests in flight
its HTTP layer is a large part of the client's CPU, and a client that needs more CPU per request
than latency / concurrency cannot keep the server busy. Both transports are driven the same way:
the openai client's ``post`` of one JSON-schema chat request per call (distinct prompts of about
2,400 characters) against the simulated server in a child process, ``--concurrency`` at a time.
Runs alternate between the transports; each run is ``--requests`` requests after a warm-up of 200.
Reported per transport: process CPU ms per request and wall time, median and spread of ``--runs``
runs. Results: bench/results/transport.json (``make bench-transport``).

  httpx    ``openai.DefaultAsyncHttpxClient()``: the openai client's default
  aiohttp  the transport hope uses (``hope.models.openai_client.aiohttp_transport``)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import openai
from openai.types.chat import ChatCompletion

import harness
from harness import MIN_RUNS, REPO, check_runs, spread
from hope.models.openai_client import aiohttp_transport
from workloads import simulated_server

TRANSPORTS = ("httpx", "aiohttp")
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 200}},
    "required": ["answer"],
    "additionalProperties": False,
}


def http_client(transport: str) -> openai.DefaultAsyncHttpxClient:
    if transport == "httpx":
        return openai.DefaultAsyncHttpxClient()
    return openai.DefaultAsyncHttpxClient(transport=aiohttp_transport())


async def one_run(base_url: str, transport: str, requests: int, concurrency: int) -> dict:
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="not-needed", max_retries=2, http_client=http_client(transport)
    )
    gate = asyncio.Semaphore(concurrency)

    async def ask(i: int) -> None:
        body = {
            "model": "simulated",
            "messages": [{"role": "user", "content": f"Question {i}: " + "lorem ipsum " * 200}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
            },
            "max_tokens": 100,
            "seed": i,
        }
        async with gate:
            reply = await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
            json.loads(reply.choices[0].message.content)

    try:
        await asyncio.gather(*(ask(i) for i in range(200)))
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(ask(i) for i in range(requests)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        await client.close()
    return {"cpu_ms_per_request": 1000 * cpu / requests, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=MIN_RUNS)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "transport.json")
    args = parser.parse_args()
    check_runs(args.runs)
    bench_run = harness.start()
    runs: dict[str, list[dict]] = {name: [] for name in TRANSPORTS}
    with simulated_server(args.latency, wait_s=60) as (base_url, _stats):
        for i in range(args.runs):
            for name in TRANSPORTS:
                result = asyncio.run(one_run(base_url, name, args.requests, args.concurrency))
                runs[name].append(result)
                print(f"run {i + 1}/{args.runs} {name}: {json.dumps(result)}", flush=True)
    record = {
        "benchmark": "transport",
        "workload": {
            "requests_per_run": args.requests,
            "latency_s": args.latency,
            "concurrency": args.concurrency,
            "bound_s": args.requests * args.latency / args.concurrency,
            "client_cpu_budget_ms": 1000 * args.latency / args.concurrency,
        },
        "transports": {
            name: {
                "cpu_ms_per_request": spread([r["cpu_ms_per_request"] for r in rows]),
                "wall_s": spread([r["wall_s"] for r in rows]),
            }
            for name, rows in runs.items()
        },
    }
    bench_run.write_record(args.out, record)
    print(json.dumps(record["transports"], indent=1))


if __name__ == "__main__":
    main()
