"""The `hope` DVC stage end to end against the simulated server (fast, no real model)."""

import csv
import json

import pytest
import yaml

from hope.core.stage_records import group_passages
from hope.pipeline.config_schema import HopeStageParams
from hope.stages.score_stage import main
from hope.testing import SimulatedServer

DOCS = [
    {
        "doc_id": "d1",
        "domain": "news",
        "text": "The mill opened in 1901. It ground wheat. "
        "It closed in 1950. A museum opened there in 1990.",
    },
    {
        "doc_id": "d2",
        "domain": "wiki",
        "text": "Glaciers move slowly. They carve valleys. "
        "Some glaciers are retreating. Meltwater feeds rivers.",
    },
]


def passages_for(doc, chunker, size):
    text = doc["text"]
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        {
            "passage_id": f"{doc['doc_id']}::{chunker}::{i:04d}",
            "doc_id": doc["doc_id"],
            "chunker": chunker,
            "index": i,
            "text": t,
            "domain": doc["domain"],
        }
        for i, t in enumerate(pieces)
    ]


def write_inputs(tmp_path, base_url):
    docs = tmp_path / "documents.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    passages = [
        p for d in DOCS for c, n in (("small", 40), ("large", 80)) for p in passages_for(d, c, n)
    ]
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    params = {
        "hope": {
            "profile": "paper",
            "llm": "llamacpp_server",
            "embedder": "hashing",
            "cache": str(tmp_path / "cache.sqlite"),
            "overrides": [f"llm.base_url={base_url}", "hope.information_preservation.n_segments=2"],
        }
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    return passages


def run_stage(tmp_path):
    return main(
        [
            "--documents",
            str(tmp_path / "documents.jsonl"),
            "--passages",
            str(tmp_path / "passages.jsonl"),
            "--params",
            str(tmp_path / "params.yaml"),
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )


def test_stage_scores_every_pair_and_reruns_from_cache(tmp_path):
    with SimulatedServer(latency_s=0.0) as server:
        write_inputs(tmp_path, server.base_url)
        assert run_stage(tmp_path) == 0
        first_requests = server.requests
        rows = list(csv.DictReader((tmp_path / "out" / "scores.csv").open()))
        assert {(r["doc_id"], r["chunker"]) for r in rows} == {
            ("d1", "small"),
            ("d1", "large"),
            ("d2", "small"),
            ("d2", "large"),
        }
        assert all(r["domain"] in {"news", "wiki"} for r in rows)
        evidence = [json.loads(line) for line in (tmp_path / "out" / "evidence.jsonl").open()]
        assert len(evidence) == 4 and all("passages" in e for e in evidence)
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["usage"]["requests"] == first_requests
        scores_before = (tmp_path / "out" / "scores.csv").read_text()
        assert run_stage(tmp_path) == 0
        assert server.requests == first_requests  # warm: no request at all
        assert (tmp_path / "out" / "scores.csv").read_text() == scores_before


def test_stage_where_every_item_failed_exits_3_and_writes_nothing(tmp_path, capsys, monkeypatch):
    """Issue #35: every item of every pair failed (a server that answers 500 to everything, the
    preflight off), so every score would be null: the stage stops instead, and no output (not
    even the evidence streamed as pairs finished) is left behind."""
    from hope.models.preflight import BACKEND_EXIT_CODE

    monkeypatch.setenv("HOPE_PREFLIGHT", "0")
    with SimulatedServer(latency_s=0.0, status=500) as server:
        write_inputs(tmp_path, server.base_url)
        params = yaml.safe_load((tmp_path / "params.yaml").read_text())
        params["hope"]["overrides"].append("llm.max_retries=0")
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
        code = run_stage(tmp_path)
        assert server.requests > 0
    err = capsys.readouterr().err
    assert code == BACKEND_EXIT_CODE, err
    assert "nothing could be scored" in err and "of the 4 (document, chunker) pairs" in err
    assert "HTTP 500" in err
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == []


def test_per_pair_usage_is_its_own_even_when_pairs_run_concurrently(tmp_path):
    """Each pair's evidence counts the calls its evaluation made, whichever pair happened to
    send a request both needed (issue #35); the run's total holds what was sent."""
    with SimulatedServer(latency_s=0.01) as server:
        write_inputs(tmp_path, server.base_url)
        run_stage(tmp_path)
        evidence = [json.loads(line) for line in (tmp_path / "out" / "evidence.jsonl").open()]
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        per_pair = sum(e["usage"]["llm"]["calls"] for e in evidence)
        assert summary["usage"]["requests"] == server.requests
        assert per_pair == summary["usage"]["requests"] + summary["usage"]["cache_hits"]
        assert all(set(e["usage"]["llm"]) == {"calls", "failures"} for e in evidence)


def test_overrides_and_grouping():
    params = HopeStageParams(profile="reference", seed=3, overrides=["a=b"])
    assert params.score_overrides() == [
        "hope=reference",
        "llm=embedded",
        "embedder=minilm",
        "hope.progress=false",
        "hope.seed=3",
        "a=b",
    ]
    grouped = group_passages(passages_for(DOCS[0], "small", 40)[::-1], {"d1"})
    assert [p["index"] for p in grouped[("d1", "small")]] == [0, 1, 2]


def test_on_result_sees_each_pair_as_it_finishes_and_replaces_its_result(tmp_path):
    import asyncio

    from hope.core.evaluator import HopeEvaluator
    from hope.core.packaged_configs import compose_config
    from hope.models.factory import build_from_config
    from hope.pipeline.score_step import score_pairs

    with SimulatedServer(latency_s=0.0) as server:
        passages = write_inputs(tmp_path, server.base_url)
        cfg = compose_config(
            [
                "llm=llamacpp_server",
                f"llm.base_url={server.base_url}",
                "embedder=hashing",
                f"cache.path={tmp_path / 'cache.sqlite'}",
                "hope.progress=false",
                "hope.information_preservation.n_segments=2",
            ]
        )
        settings, llm, embedder = build_from_config(cfg)
        seen = []

        def keep_row(document, chunker, result):
            seen.append((document["doc_id"], chunker, result.hope))
            return (document["doc_id"], chunker)

        kept = asyncio.run(
            score_pairs(
                HopeEvaluator(llm, embedder, settings),
                DOCS,
                passages,
                progress=False,
                on_result=keep_row,
            )
        )
    pairs = {(d["doc_id"], c) for d in DOCS for c in ("small", "large")}
    assert sorted(kept) == sorted(pairs)  # the callback's values, not the results
    assert {(d, c) for d, c, _ in seen} == pairs and len(seen) == 4


def _result(n_passages):
    from hope.core.result import Failure, HopeResult, MetricCount

    return HopeResult(
        hope=0.5,
        concept_unity=0.4,
        semantic_independence=0.6,
        information_preservation=float("nan"),
        passages=[{"passage_id": f"p{i}", "text": "x" * 1000} for i in range(n_passages)],
        segments=[{"text": "y" * 1000}],
        failures=[Failure("concept_unity", "p0", "invalid")],
        counts={"concept_unity": MetricCount(2, 1, 1)},
        usage={},
        prompts={},
        settings={},
        models={},
    )


def test_evidence_stream_writes_full_results_and_keeps_slim_ones(tmp_path):
    from hope.pipeline.score_step import EvidenceStream

    path = tmp_path / "evidence.jsonl"
    path.write_text("old\n")
    with EvidenceStream(path) as stream:
        kept = [stream(DOCS[0], "small", _result(3)), stream(DOCS[1], "large", _result(2))]
        assert path.read_text() == "old\n"  # replaced only when the block ends
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["doc_id"], e["chunker"], len(e["passages"])) for e in lines] == [
        ("d1", "small", 3),
        ("d2", "large", 2),
    ]
    assert lines[0]["passages"][0]["text"] == "x" * 1000 and lines[0]["segments"]
    assert lines[0]["information_preservation"] is None
    _, _, slim = kept[0]
    assert slim.passages == [{"passage_id": f"p{i}"} for i in range(3)] and slim.segments == []
    assert slim.hope == 0.5 and slim.failures and slim.counts["concept_unity"].failed == 1

    with pytest.raises(RuntimeError), EvidenceStream(path) as stream:
        stream(DOCS[0], "small", _result(1))
        raise RuntimeError("scoring broke")
    assert len(path.read_text().splitlines()) == 2  # the previous evidence stays


def _counted(scored: int, failed: int, reasons: list[str]):
    import math

    from hope.core.result import Failure, HopeResult, MetricCount

    value = 0.5 if scored else math.nan
    return HopeResult(
        hope=value,
        concept_unity=value,
        semantic_independence=math.nan,
        information_preservation=math.nan,
        passages=[],
        segments=[],
        failures=[Failure("concept_unity", f"passage {i}", r) for i, r in enumerate(reasons)],
        counts={
            "concept_unity": MetricCount(scored + failed, scored, failed),
            "semantic_independence": MetricCount(2, 0, 2),
            "information_preservation": MetricCount(0, 0, 0),
        },
        usage={},
        prompts={},
        settings={},
        models={},
    )


def test_only_a_run_that_scored_nothing_at_all_is_fatal():
    from hope.core.result import NothingScoredError, check_something_scored

    dead = _counted(0, 3, ["HTTP 500: down", "HTTP 500: down", "HTTP 400: too long"])
    # a pair where every item failed beside a pair with one item scored: recorded, not fatal
    check_something_scored([dead, _counted(1, 2, ["HTTP 500: down"] * 2)])
    check_something_scored([])  # nothing to score is not a failure to score
    with pytest.raises(NothingScoredError) as info:
        check_something_scored([dead, dead], " of the 2 pairs")
    assert str(info.value) == (
        "nothing could be scored: all 10 LLM items of the 2 pairs failed (concept_unity 6, "
        "semantic_independence 4, information_preservation 0); the most common reason (4 of 6 "
        "failures): HTTP 500: down"
    )


def _evidence_with_finish_order(tmp_path, base_url, delays):
    """Score the four pairs with each pair's finish held back by ``delays[(doc_id, chunker)]``
    seconds; the evidence's bytes and the order in which the pairs finished."""
    import asyncio

    from hope.core.evaluator import HopeEvaluator
    from hope.core.packaged_configs import compose_config
    from hope.models.factory import build_from_config
    from hope.pipeline.score_step import EvidenceStream, score_pairs

    tmp_path.mkdir()
    passages = write_inputs(tmp_path, base_url)
    cfg = compose_config(
        [
            "llm=llamacpp_server",
            f"llm.base_url={base_url}",
            "embedder=hashing",
            f"cache.path={tmp_path / 'cache.sqlite'}",
            "hope.progress=false",
            "hope.information_preservation.n_segments=2",
        ]
    )
    settings, llm, embedder = build_from_config(cfg)
    evaluator = HopeEvaluator(llm, embedder, settings)
    finished = []
    score = evaluator.aevaluate
    by_text = {d["text"]: d["doc_id"] for d in DOCS}

    async def held_back(text, passages, passage_ids):
        result = await score(text, passages, passage_ids)
        key = (by_text[text], passage_ids[0].split("::")[1])
        await asyncio.sleep(delays[key])
        finished.append(key)
        return result

    evaluator.aevaluate = held_back
    with EvidenceStream(tmp_path / "evidence.jsonl") as stream:
        asyncio.run(score_pairs(evaluator, DOCS, passages, progress=False, on_result=stream))
    return (tmp_path / "evidence.jsonl").read_bytes(), finished


def test_evidence_is_in_pair_order_whatever_order_the_pairs_finish(tmp_path):
    pairs = [(d["doc_id"], c) for d in DOCS for c in ("large", "small")]
    with SimulatedServer(latency_s=0.0) as server:
        first, first_order = _evidence_with_finish_order(
            tmp_path / "a", server.base_url, {p: 0.3 * i for i, p in enumerate(pairs)}
        )
        second, second_order = _evidence_with_finish_order(
            tmp_path / "b", server.base_url, {p: 0.3 * i for i, p in enumerate(pairs[::-1])}
        )
    assert first_order != second_order  # the scheduling really differed
    assert first == second
    keys = [(e["doc_id"], e["chunker"]) for e in map(json.loads, first.decode().splitlines())]
    assert keys == sorted(pairs)


def test_evidence_stream_refuses_a_pair_scored_twice(tmp_path):
    from hope.pipeline.score_step import EvidenceStream

    with pytest.raises(ValueError, match="scored twice"), EvidenceStream(tmp_path / "e") as stream:
        stream(DOCS[0], "small", _result(1))
        stream(DOCS[0], "small", _result(1))
    assert not (tmp_path / "e").exists()
