"""The probe stage's work: domain corpora, shifted passages, pooling, rows; and the stage itself."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from hope.labelled import ChunkPassage
from hope.pipeline.probe_step import (
    domain_chunkings,
    domain_corpora,
    pooled_result,
    primary_measure,
    probe_rows,
)
from hope.probe import ProbeSettings

DOCS = [
    {"doc_id": "b1", "domain": "news", "text": "Alpha beta."},
    {"doc_id": "a1", "domain": "arxiv", "text": "Gamma."},
    {"doc_id": "b2", "domain": "news", "text": "Delta epsilon zeta."},
]


def test_a_domain_is_its_documents_in_file_order_with_their_offsets():
    arxiv, news = domain_corpora(DOCS)
    assert (arxiv.domain, arxiv.text, dict(arxiv.offsets)) == ("arxiv", "Gamma.", {"a1": 0})
    # "Alpha beta." is 11 characters, then the blank line: b2 starts at 13.
    assert news.text == "Alpha beta.\n\nDelta epsilon zeta."
    assert dict(news.offsets) == {"b1": 0, "b2": 13}
    assert news.text[13:18] == "Delta"


def test_passages_move_onto_the_domain_corpus_and_other_domains_stay_out():
    _, news = domain_corpora(DOCS)
    passages = [
        {"doc_id": "b2", "chunker": "c", "text": "epsilon zeta.", "start": 6, "end": 19},
        {"doc_id": "a1", "chunker": "c", "text": "Gamma.", "start": 0, "end": 6},
        {"doc_id": "b1", "chunker": "d", "text": "Alpha"},
    ]
    chunkings = domain_chunkings(news, passages)
    assert chunkings == {
        "c": [ChunkPassage("epsilon zeta.", 19, 32)],
        "d": [ChunkPassage("Alpha")],
    }
    assert news.text[19:32] == "epsilon zeta."


def _result(values_a, values_b, n_passages=(3, 4)):
    def cell(values, n):
        return {
            "status": "ok",
            "n_passages": n,
            "measures": {},
            "per_question": {m: list(values) for m in SETTINGS.measure_names()},
        }

    return {
        "n_questions": len(values_a),
        "chunkings": {"a": cell(values_a, n_passages[0]), "b": cell(values_b, n_passages[1])},
    }


SETTINGS = ProbeSettings(k=2, budgets=(100, 300, 200), n_resamples=200, seed=1)


def test_pooling_takes_every_question_of_every_domain_once():
    results = {"x": _result([1.0, 0.5], [0.0, 0.5]), "y": _result([1.0], [0.0])}
    pooled = pooled_result(results, SETTINGS)
    assert pooled["n_questions"] == 3
    a = pooled["chunkings"]["a"]
    assert a["per_question"]["recall@2"] == [1.0, 0.5, 1.0]
    assert a["n_passages"] == 6
    # (1 + 0.5 + 1) / 3 and (0 + 0.5 + 0) / 3
    assert a["measures"]["recall@2"]["mean"] == pytest.approx(2.5 / 3)
    assert pooled["chunkings"]["b"]["measures"]["iou@2"]["mean"] == pytest.approx(0.5 / 3)
    assert pooled["rankings"]["budget_recall@200"] == ["a", "b"]
    (pair,) = pooled["pairs"]["recall@2"]
    assert pair["pair"] == ["a", "b"] and pair["difference"] == pytest.approx(2 / 3)


def test_a_chunking_not_evaluable_in_one_domain_is_left_out_of_the_pool():
    broken = _result([1.0], [0.0])
    broken["chunkings"]["b"] = {"status": "not_evaluable", "reason": "not in the corpus"}
    pooled = pooled_result({"x": _result([1.0], [0.0]), "y": broken}, SETTINGS)
    assert list(pooled["chunkings"]) == ["a"] and pooled["pairs"]["recall@2"] == []


def test_the_middle_budget_ranks_and_rows_carry_the_labelled_keys():
    assert primary_measure(SETTINGS) == "budget_recall@200"
    results = {"x": _result([1.0, 0.5], [0.0, 0.5])}
    for result in results.values():
        for cell in result["chunkings"].values():
            cell["measures"] = {
                m: {"mean": sum(v) / len(v)} for m, v in cell["per_question"].items()
            }
    report = {"domains": results, "pooled": pooled_result(results, SETTINGS)}
    rows = probe_rows(report, SETTINGS)
    assert [(r["domain"], r["chunker"]) for r in rows] == [
        ("x", "a"),
        ("x", "b"),
        ("pooled", "a"),
        ("pooled", "b"),
    ]
    assert set(rows[0]) == {
        "doc_id",
        "domain",
        "chunker",
        "n_passages",
        "recall",
        "precision",
        "iou",
        "budget_recall",
        "budget_recall_100",
        "budget_recall_300",
        "budget_recall_200",
    }
    assert rows[0]["recall"] == 0.75 and rows[1]["budget_recall"] == 0.25


def test_the_stage_writes_a_ranking_per_domain_and_pooled(tmp_path, capsys):
    from hope.stages import probe_stage

    corpus = Path(__file__).resolve().parents[2] / "src/hope/labelled/sample/corpora/chatlogs.md"
    text = corpus.read_text(encoding="utf-8")[:12000]
    halves = [text[:6000], text[6000:]]
    documents = [
        {"doc_id": f"d{i}", "domain": domain, "text": half}
        for i, (domain, half) in enumerate(zip(("chat", "logs"), halves, strict=True))
    ]
    passages = []
    for chunker, size in (("small", 300), ("large", 1500)):
        for document in documents:
            body = document["text"]
            for index, start in enumerate(range(0, len(body), size)):
                passages.append(
                    {
                        "doc_id": document["doc_id"],
                        "chunker": chunker,
                        "index": index,
                        "text": body[start : start + size],
                        "start": start,
                        "end": min(start + size, len(body)),
                    }
                )
    (tmp_path / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents))
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    params = {
        "probe": {"questions": 12, "embedder": "hashing", "resamples": 100},
        "tracking": {"enabled": False},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    argv = [
        "--params",
        str(tmp_path / "params.yaml"),
        "--documents",
        str(tmp_path / "documents.jsonl"),
        "--passages",
        str(tmp_path / "passages.jsonl"),
        "--out-dir",
        str(tmp_path / "probe"),
    ]
    assert probe_stage.main(argv) == 0, capsys.readouterr().err
    metrics = json.loads((tmp_path / "probe/metrics.json").read_text())
    assert sorted(metrics["ranking"]) == ["large", "small"] and metrics["pairs"] == 1
    report = json.loads((tmp_path / "probe/results.json").read_text())
    assert set(report["domains"]) == {"chat", "logs"}
    # the measure the rankings are read by, for readers such as the leaderboard beside HOPE
    assert report["primary_measure"] == metrics["measure"]
    assert report["primary_measure"] in report["pooled"]["rankings"]
    for result in report["domains"].values():
        for question in result["probe"]["questions"]:
            assert question["writer"] and "filters" in question
    rows = list(csv.DictReader((tmp_path / "probe/chunkers.csv").open()))
    assert {r["domain"] for r in rows} == {"chat", "logs", "pooled"}
    assert all(0 <= float(r["budget_recall"]) <= 1 for r in rows)
    assert "timings" not in json.dumps(report)  # the same inputs give the same bytes
    first = (tmp_path / "probe/results.json").read_bytes()
    assert probe_stage.main(argv) == 0
    assert (tmp_path / "probe/results.json").read_bytes() == first


def test_a_bad_probe_section_stops_the_stage_with_its_key(tmp_path, capsys):
    from hope.stages import probe_stage

    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"probe": {"k": 0}}))
    (tmp_path / "documents.jsonl").write_text(
        json.dumps({"doc_id": "d", "domain": "x", "text": "A b."}) + "\n"
    )
    (tmp_path / "passages.jsonl").write_text("")
    argv = ["--params", str(tmp_path / "params.yaml"), "--out-dir", str(tmp_path / "out")]
    argv += ["--documents", str(tmp_path / "documents.jsonl")]
    argv += ["--passages", str(tmp_path / "passages.jsonl")]
    assert probe_stage.main(argv) == 1
    assert "probe.k: Input should be greater than or equal to 1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_configured_default_writer_is_the_packages_default():
    """conf/probe/default.yaml (DVC, hope-run) and ProbeParams (hope probe) name one default:
    the writer the benchmark chose (hope.probe.DEFAULT_WRITER)."""
    from hope.pipeline import CONF_DIR
    from hope.pipeline.config_schema import ProbeParams
    from hope.probe import DEFAULT_WRITER

    conf = yaml.safe_load((CONF_DIR / "probe" / "default.yaml").read_text(encoding="utf-8"))
    assert conf["writer"] == ProbeParams().writer == DEFAULT_WRITER
    assert ProbeParams(**conf) == ProbeParams()


def test_an_unknown_writer_is_named_with_the_choices():
    from hope.pipeline.probe_step import probe_writer

    with pytest.raises(
        ValueError, match=r"probe.writer 'essay' is not one of \[.*'llm', 'llm_sentences'\]"
    ):
        probe_writer("essay")
