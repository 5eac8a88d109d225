"""Kill and resume, for real (issue #13): ``hope score`` and the ``hope`` DVC stage's module run as
subprocesses against the simulated server (in a thread of this process, so its counts can be read
while they run), get SIGKILLed mid-run and are run again. The rerun gives the scores of an
uninterrupted run, sends no request whose answer had arrived before the kill (only those in
flight at the kill are sent again), and a killed run leaves no partial output file.

The server answers a share of requests with text that is not JSON, so answers that fail
validation (and are retried with a derived seed) are part of what must survive the kill.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from hope.testing import SimulatedServer

pytestmark = pytest.mark.slow

LATENCY_S = 0.6
INVALID_RATE = 0.15
SCORES = ("hope", "concept_unity", "semantic_independence", "information_preservation")


def environment(repo: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(repo / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("HOPE_CACHE", None)
    return env


def model_overrides(base_url: str) -> list[str]:
    return [
        "llm=llamacpp_server",
        f"llm.base_url={base_url}",
        "llm.concurrency=4",
        "llm.max_retries=4",
        "embedder=hashing",
    ]


def run_to_the_end(command: list[str], env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def kill_mid_run(
    server: SimulatedServer, command: list[str], env: dict[str, str], cwd: Path, after: int
) -> int:
    """Start ``command``, SIGKILL it once ``after`` answers were served and none arrived in the
    last 40 % of a latency (so that none is between the server and the cache); return how many
    requests were in flight at the kill."""
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert process.poll() is None, "finished before it could be killed"
            quiet = time.monotonic() - server.last_completed_at
            if server.completed >= after and quiet >= 0.4 * LATENCY_S:
                in_flight = server.in_flight
                os.kill(process.pid, signal.SIGKILL)
                break
            time.sleep(0.005)
        else:
            raise AssertionError("the run never reached the kill point")
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
    time.sleep(LATENCY_S + 0.2)  # the requests in flight at the kill finish on the server
    return in_flight


def check_resume(
    make_command, outputs: list[Path], tmp_path: Path, repo: Path, read_scores
) -> dict[str, int]:
    env = environment(repo)
    with SimulatedServer(latency_s=LATENCY_S, invalid_rate=INVALID_RATE) as server:
        run_to_the_end(make_command(server.base_url, tmp_path / "clean"), env, tmp_path)
        uninterrupted = server.requests
        reference = read_scores(tmp_path / "clean")
    assert uninterrupted > 40

    with SimulatedServer(latency_s=LATENCY_S, invalid_rate=INVALID_RATE) as server:
        command = make_command(server.base_url, tmp_path / "killed")
        in_flight = kill_mid_run(server, command, env, tmp_path, after=uninterrupted // 2)
        before = server.requests
        for output in outputs:  # no partial output, not even a temporary file beside it
            path = tmp_path / "killed" / output
            assert not path.exists()
            if path.parent.exists():
                assert list(path.parent.iterdir()) == []
        run_to_the_end(command, env, tmp_path)
        rerun = server.requests - before
    assert read_scores(tmp_path / "killed") == reference
    # every answer that had arrived before the kill came from the cache; only the requests in
    # flight at the kill were sent again
    assert before + rerun <= uninterrupted + in_flight, (before, rerun, uninterrupted, in_flight)
    assert rerun >= uninterrupted - before  # (the rerun did not skip work either)
    return {
        "uninterrupted": uninterrupted,
        "before": before,
        "rerun": rerun,
        "in_flight": in_flight,
    }


def test_hope_score_killed_mid_run_resumes(tmp_path, repo_root):
    examples = repo_root / "examples"

    def command(base_url: str, folder: Path) -> list[str]:
        folder.mkdir(parents=True, exist_ok=True)
        return [
            str(Path(sys.executable).parent / "hope"),
            "score",
            "--document",
            str(examples / "sample_document.txt"),
            "--passages",
            str(examples / "sample_passages.jsonl"),
            "--output",
            str(folder / "out" / "result.json"),
            *model_overrides(base_url),
            f"cache.path={folder / 'cache.sqlite'}",
            "hope.progress=false",
        ]

    def scores(folder: Path) -> dict:
        result = json.loads((folder / "out" / "result.json").read_text())
        return {
            **{name: result[name] for name in SCORES},
            "passages": result["passages"],
            "segments": result["segments"],
            "failures": result["failures"],
        }

    counts = check_resume(command, [Path("out/result.json")], tmp_path, repo_root, scores)
    print(counts)


def test_hope_stage_killed_mid_run_resumes(tmp_path, repo_root):
    """``python -m hope.stages.score_stage``, as dvc.yaml's ``hope`` stage runs it."""
    examples = repo_root / "examples"
    text = (examples / "sample_document.txt").read_text(encoding="utf-8")
    given = [json.loads(line) for line in (examples / "sample_passages.jsonl").open()]
    halves = [text[: len(text) // 2], text[len(text) // 2 :]]
    passages = [
        {"passage_id": f"ex::given::{i:04d}", "text": p["text"], "index": i}
        for i, p in enumerate(given)
    ] + [
        {"passage_id": f"ex::halves::{i:04d}", "text": t, "index": i} for i, t in enumerate(halves)
    ]
    for record in passages:
        record.update(doc_id="ex", domain="news", chunker=record["passage_id"].split("::")[1])

    def command(base_url: str, folder: Path) -> list[str]:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "documents.jsonl").write_text(
            json.dumps({"doc_id": "ex", "domain": "news", "text": text}) + "\n"
        )
        (folder / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
        params = {
            "hope": {
                "profile": "paper",
                "llm": "llamacpp_server",
                "embedder": "hashing",
                "cache": str(folder / "cache.sqlite"),
                "parallel_pairs": 2,
                "overrides": model_overrides(base_url)[1:],
            },
            "tracking": {"enabled": False},
        }
        (folder / "params.yaml").write_text(yaml.safe_dump(params))
        return [
            sys.executable,
            "-m",
            "hope.stages.score_stage",
            "--documents",
            str(folder / "documents.jsonl"),
            "--passages",
            str(folder / "passages.jsonl"),
            "--params",
            str(folder / "params.yaml"),
            "--out-dir",
            str(folder / "hope"),
        ]

    def scores(folder: Path) -> list:
        evidence = [json.loads(line) for line in (folder / "hope" / "evidence.jsonl").open()]
        return [
            {k: e[k] for k in ("doc_id", "chunker", *SCORES, "passages", "segments", "failures")}
            for e in evidence
        ]

    outputs = [
        Path("hope") / name
        for name in ("scores.csv", "evidence.jsonl", "summary.json", "metrics.json")
    ]
    counts = check_resume(command, outputs, tmp_path, repo_root, scores)
    print(counts)
