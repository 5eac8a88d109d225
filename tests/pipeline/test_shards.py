"""Shards (``shard.count`` / ``shard.index``): the split, the merge, and a sharded multirun through
submitit's local executor that equals a single-process run."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from hope.cli.hope_command import main as hope_cli
from hope.pipeline.shards import ShardError, ShardSettings, merge_shards, select_shard

from .conftest import SENTENCES, small_overrides

DOCS = [
    {"doc_id": f"d{i}", "domain": domain, "text": "x"}
    for i, domain in enumerate(["news", "wiki", "news", "arxiv", "tos"])
]
CHUNKERS = [SimpleNamespace(name=n) for n in ("c0", "c1", "c2")]


def split(by, count):
    parts = []
    for index in range(count):
        settings = ShardSettings(index=index, count=count, by=by)
        docs, chunkers = select_shard(settings, DOCS, CHUNKERS)
        parts.append(([d["doc_id"] for d in docs], [c.name for c in chunkers]))
    return parts


def test_shards_split_the_pairs_without_overlap_or_gap():
    assert split("document", 2) == [
        (["d0", "d1"], ["c0", "c1", "c2"]),
        (["d2", "d3", "d4"], ["c0", "c1", "c2"]),
    ]
    # domains sorted (arxiv, news, tos, wiki), dealt round-robin
    assert split("domain", 2) == [
        (["d3", "d4"], ["c0", "c1", "c2"]),  # arxiv, tos
        (["d0", "d1", "d2"], ["c0", "c1", "c2"]),  # news, wiki
    ]
    assert split("chunker", 2) == [
        ([d["doc_id"] for d in DOCS], ["c0", "c2"]),
        ([d["doc_id"] for d in DOCS], ["c1"]),
    ]
    for by, count in (("document", 3), ("domain", 3), ("chunker", 3), ("document", 5)):
        pairs = [(d, c) for docs, chunkers in split(by, count) for d in docs for c in chunkers]
        assert len(pairs) == len(set(pairs)) == len(DOCS) * len(CHUNKERS)
    unsharded = select_shard(ShardSettings(), DOCS, CHUNKERS)
    assert unsharded == (DOCS, CHUNKERS)


def test_bad_shard_settings_are_named_errors():
    with pytest.raises(ValueError, match=r"shard\.index is required"):
        ShardSettings(count=2)
    with pytest.raises(ValueError, match=r"not below shard\.count"):
        ShardSettings(index=2, count=2)
    with pytest.raises(ShardError, match="gets no chunkers: there are only 3"):
        select_shard(ShardSettings(index=3, count=4, by="chunker"), DOCS, CHUNKERS)


def fake_shard(root: Path, index: int, count: int, rows: list[tuple[str, float]], digest="abc"):
    folder = root / str(index)
    folder.mkdir(parents=True)
    header = "doc_id,chunker,hope\n"
    (folder / "scores.csv").write_text(header + "".join(f"{d},c,{v}\n" for d, v in rows))
    (folder / "evidence.jsonl").write_text(
        "".join(json.dumps({"doc_id": d, "chunker": "c", "hope": v}) + "\n" for d, v in rows)
    )
    (folder / "summary.json").write_text(
        json.dumps({"pairs": len(rows), "usage": {"requests": 10 * len(rows)}, "chunkers": ["c"]})
    )
    info = {"index": index, "count": count, "by": "document", "config_sha256": digest}
    (folder / "shard.json").write_text(json.dumps({**info, "doc_ids": [], "chunkers": ["c"]}))
    return folder


def test_merge_orders_rows_like_one_job_and_sums_usage(tmp_path: Path):
    fake_shard(tmp_path / "sweep", 1, 2, [("b", 0.5), ("a2", None)])
    fake_shard(tmp_path / "sweep", 0, 2, [("a", 0.25)])
    assert hope_cli(["merge-shards", str(tmp_path / "sweep"), "--output", str(tmp_path / "m")]) == 0
    scores = (tmp_path / "m" / "scores.csv").read_text()
    assert scores == "doc_id,chunker,hope\na,c,0.25\na2,c,None\nb,c,0.5\n"
    evidence = (tmp_path / "m" / "evidence.jsonl").read_text().splitlines()
    assert [json.loads(line)["doc_id"] for line in evidence] == ["a", "a2", "b"]
    summary = json.loads((tmp_path / "m" / "summary.json").read_text())
    assert summary["pairs"] == 3 and summary["usage"]["requests"] == 30


def test_merge_refuses_an_incomplete_or_mixed_set(tmp_path: Path, capsys):
    one = fake_shard(tmp_path / "s", 0, 3, [("a", 0.1)])
    two = fake_shard(tmp_path / "s", 1, 3, [("b", 0.1)])
    with pytest.raises(ShardError, match=r"missing \[2\]"):
        merge_shards([one, two], tmp_path / "out")
    other = fake_shard(tmp_path / "t", 2, 3, [("c", 0.1)], digest="other")
    with pytest.raises(ShardError, match="another experiment: its config_sha256"):
        merge_shards([one, two, other], tmp_path / "out")
    assert hope_cli(["merge-shards", str(tmp_path / "nowhere"), "--output", "x"]) == 2
    assert "no such folder" in capsys.readouterr().err


@pytest.fixture()
def four_documents(tmp_path: Path) -> Path:
    path = tmp_path / "documents.jsonl"
    texts = [SENTENCES, SENTENCES[::-1], SENTENCES[2:] + SENTENCES[:2], SENTENCES[1::2] * 2]
    docs = [
        {"doc_id": f"doc-{i}", "domain": domain, "text": " ".join(text)}
        for i, (domain, text) in enumerate(zip(["news", "wiki", "news", "tos"], texts, strict=True))
    ]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def hope_run(args: list[str], env: dict[str, str]) -> None:
    result = subprocess.run(
        [str(Path(sys.executable).parent / "hope-run"), *args],
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-4000:]


def evidence(folder: Path) -> list[dict]:
    lines = (folder / "evidence.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def chat_keys(cache: Path) -> set[str]:
    with sqlite3.connect(cache) as conn:
        return {k for (k,) in conn.execute("SELECT key FROM entries WHERE namespace='chat'")}


@pytest.mark.slow
def test_two_shards_through_submitit_equal_one_process_and_share_cache_and_parent(
    tmp_path: Path, four_documents: Path, sim_server
):
    from mlflow import MlflowClient

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)
    env.pop("HOPE_CACHE", None)
    common = [
        o
        for o in small_overrides(tmp_path, four_documents, sim_server.base_url)
        if not o.startswith("cache.path=")
    ]
    single_dir = tmp_path / "single"
    hope_run(
        [*common, f"cache.path={tmp_path / 'single.sqlite'}", f"hydra.run.dir={single_dir}"], env
    )
    sweep = tmp_path / "sweep"
    hope_run(
        [
            "-m",
            *common,
            f"cache.path={tmp_path / 'shared.sqlite'}",
            "launcher=submitit_local",
            "shard.count=2",
            "shard.index=0,1",
            "shard.by=document",
            f"hydra.sweep.dir={sweep}",
        ],
        env,
    )
    # Each job ran in its own process (submitit's local executor) and wrote its part.
    jobs = sorted(sweep.glob("*/shard.json"))
    assert len(jobs) == 2
    parts = [json.loads(p.read_text()) for p in jobs]
    assert [p["doc_ids"] for p in parts] == [["doc-0", "doc-1"], ["doc-2", "doc-3"]]
    # submitit's local executor names each job's folder by the id (pid) of its process.
    results = sorted((sweep / ".submitit").glob("*/*_result.pkl"))
    pids = {p.parent.name for p in results}
    assert len(results) == len(pids) == 2 and str(os.getpid()) not in pids

    merged = tmp_path / "merged"
    assert hope_cli(["merge-shards", str(sweep), "--output", str(merged)]) == 0
    assert (merged / "scores.csv").read_text() == (single_dir / "scores.csv").read_text()
    # Evidence too, but for what was measured (latency, wall time, embedder process totals).
    merged_evidence, single_evidence = evidence(merged), evidence(single_dir)
    assert [e["doc_id"] for e in merged_evidence] == ["doc-0", "doc-1", "doc-2", "doc-3"]
    for got, want in zip(merged_evidence, single_evidence, strict=True):
        assert got["usage"]["llm"] == want["usage"]["llm"]  # its calls and failed items
        assert {k: v for k, v in got.items() if k != "usage"} == {
            k: v for k, v in want.items() if k != "usage"
        }
    assert "nan" not in (merged / "scores.csv").read_text().lower()
    single_summary = json.loads((single_dir / "summary.json").read_text())
    merged_summary = json.loads((merged / "summary.json").read_text())
    assert merged_summary["pairs"] == single_summary["pairs"] == 4
    # The two processes filled one response cache with exactly the answers one process needed.
    assert chat_keys(tmp_path / "shared.sqlite") == chat_keys(tmp_path / "single.sqlite")

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("hope").experiment_id])
    parents = [r for r in runs if r.data.tags.get("hope.kind") == "sweep"]
    assert len(parents) == 1
    # sweep -> job (a shard) -> chunker run, as any sweep nests (hope.tracking.layout).
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parents[0].info.run_id]
    assert len(children) == 2 and {c.data.tags["hope.kind"] for c in children} == {"job"}
    assert {c.data.tags["hope.shard"] for c in children} == {"0/2", "1/2"}
    # merge-shards put the merged result on the sweep's run: the per-chunker means of the
    # single-process run, and the merged files as artifacts.
    sweep_run = client.get_run(parents[0].info.run_id)
    single_rows = list(csv.DictReader(io.StringIO((single_dir / "scores.csv").read_text())))
    expected = statistics.mean(float(r["hope"]) for r in single_rows)
    chunker = single_rows[0]["chunker"]
    assert sweep_run.data.metrics["merged/pairs"] == 4
    assert sweep_run.data.metrics["merged/shards"] == 2
    assert sweep_run.data.metrics["merged/hope"] == pytest.approx(expected, rel=1e-12)
    artifacts = {a.path for a in client.list_artifacts(sweep_run.info.run_id, "merged")}
    assert artifacts == {"merged/scores.csv", "merged/summary.json", "merged/chunkers.json"}
    local = client.download_artifacts(sweep_run.info.run_id, "merged/chunkers.json", str(tmp_path))
    table = json.loads(Path(local).read_text())
    (row,) = [r for r in table["data"] if r[0] == chunker]
    # MLflow's log_table writes through pandas' to_json, which keeps 10 decimals.
    assert row[table["columns"].index("hope")] == pytest.approx(expected, abs=1e-10)
    assert sweep_run.data.tags["hope.merged_output"] == str(merged)


def test_merge_shards_without_a_sweep_run_logs_nothing(tmp_path: Path):
    from hope.pipeline.shards import sweep_run

    job = tmp_path / "sweep" / "0"
    job.mkdir(parents=True)
    (job / "shard.json").write_text("{}")
    assert sweep_run([tmp_path / "sweep"]) is None  # no .mlflow_parent_run marker
    (tmp_path / "sweep" / ".mlflow_parent_run").write_text("abc\n")
    assert sweep_run([tmp_path / "sweep"]) is None  # no composed config beside the job
    (job / ".hydra").mkdir()
    (job / ".hydra" / "config.yaml").write_text("tracking:\n  enabled: false\n")
    assert sweep_run([tmp_path / "sweep"]) is None
    (job / ".hydra" / "config.yaml").write_text("tracking:\n  uri: sqlite:///x.db\n")
    settings, run_id = sweep_run([job])
    assert (settings.uri, run_id) == ("sqlite:///x.db", "abc")
