"""The chunk and bleu stages end to end on a small documents.jsonl fixture."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from hope.chunking import ChunkingError, load_chunkers
from hope.stages import bleu_stage, chunk_stage

DOCUMENTS = [
    {
        "doc_id": "news-1",
        "domain": "news",
        "title": "Flood",
        "text": "Rivers rose overnight.\n\nThousands left their homes as water reached the town.",
        "source": "fixture",
        "url": "https://example.org/news-1",
        "license": "CC0-1.0",
        "n_chars": 78,
        "sha256": "0" * 64,
    },
    {
        "doc_id": "tos-1",
        "domain": "terms_of_service",
        "title": "Terms",
        "text": "You agree to these terms. We may change them.\n\nDisputes go to arbitration.",
        "source": "fixture",
        "url": "https://example.org/tos-1",
        "license": "CC0-1.0",
        "n_chars": 74,
        "sha256": "1" * 64,
    },
]


PASSAGE_FIELDS = ("passage_id", "doc_id", "chunker", "index", "text", "start", "end")


def paragraph_chunker(document_text: str, doc_id: str, chunker_name: str, min_chars: int = 1):
    """A user-defined chunker: plain strings, one per paragraph (used through _partial_)."""
    return [p for p in document_text.split("\n\n") if len(p) >= min_chars]


def skip_terms_chunker(document_text: str, doc_id: str, chunker_name: str):
    return [] if "terms" in document_text else [document_text]


@pytest.fixture
def workspace(tmp_path: Path, conf_dir: Path) -> Path:
    (tmp_path / "data" / "prepared").mkdir(parents=True)
    with (tmp_path / "data" / "prepared" / "documents.jsonl").open("w") as handle:
        for doc in DOCUMENTS:
            handle.write(json.dumps(doc) + "\n")
    conf = tmp_path / "conf" / "chunker"
    conf.mkdir(parents=True)
    for name in ("fixed_500_o125", "recursive_500"):
        (conf / f"{name}.yaml").write_text((conf_dir / f"{name}.yaml").read_text())
    (conf / "paragraphs.yaml").write_text(
        "name: paragraphs\n"
        "_target_: tests.chunking.test_stages.paragraph_chunker\n"
        "_partial_: true\n"
        "min_chars: 10\n"
    )
    (conf / "skip_terms.yaml").write_text(
        "name: skip_terms\n"
        "_target_: tests.chunking.test_stages.skip_terms_chunker\n"
        "_partial_: true\n"
    )
    return tmp_path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_chunk(workspace: Path, *args: str) -> int:
    return chunk_stage.main(
        [
            "--documents",
            str(workspace / "data/prepared/documents.jsonl"),
            "--conf-dir",
            str(workspace / "conf/chunker"),
            "--out-dir",
            str(workspace / "data/chunks"),
            "--no-progress",
            *args,
        ]
    )


def test_chunk_stage_writes_passages_and_summary(workspace: Path):
    assert run_chunk(workspace, "--chunkers", "fixed_500_o125", "paragraphs") == 0
    records = read_jsonl(workspace / "data/chunks/passages.jsonl")
    texts = {d["doc_id"]: d["text"] for d in DOCUMENTS}
    # Both fixture documents are shorter than 500 characters: one window each.
    fixed = [r for r in records if r["chunker"] == "fixed_500_o125"]
    assert [(r["doc_id"], r["text"], r["start"]) for r in fixed] == [
        ("news-1", texts["news-1"], 0),
        ("tos-1", texts["tos-1"], 0),
    ]
    # The user-defined chunker shows up like a built-in one, with located spans and ids.
    paragraphs = [r for r in records if r["chunker"] == "paragraphs"]
    assert [r["passage_id"] for r in paragraphs] == [
        "news-1::paragraphs::0000",
        "news-1::paragraphs::0001",
        "tos-1::paragraphs::0000",
        "tos-1::paragraphs::0001",
    ]
    for r in records:
        assert set(r) == {
            "passage_id",
            "doc_id",
            "chunker",
            "index",
            "text",
            "start",
            "end",
            "domain",
        }
        assert texts[r["doc_id"]][r["start"] : r["end"]] == r["text"]
    assert {r["domain"] for r in records if r["doc_id"] == "tos-1"} == {"terms_of_service"}

    summary = json.loads((workspace / "data/chunks/summary.json").read_text())
    assert list(summary) == ["fixed_500_o125", "paragraphs"]
    lengths = [len(r["text"]) for r in paragraphs]
    assert summary["paragraphs"]["passages"] == 4 and summary["paragraphs"]["documents"] == 2
    assert summary["paragraphs"]["median_chars"] == statistics.median(lengths)
    assert summary["paragraphs"]["mean_chars"] == round(statistics.fmean(lengths), 2)
    assert summary["paragraphs"]["config"]["min_chars"] == 10
    assert summary["fixed_500_o125"]["config"]["chunk_overlap"] == 125


def test_chunk_stage_reads_the_chunker_list_from_params(workspace: Path):
    params = workspace / "params.yaml"
    params.write_text("chunkers:\n  - recursive_500\n  - paragraphs\nother: 1\n")
    assert run_chunk(workspace, "--params", str(params)) == 0
    records = read_jsonl(workspace / "data/chunks/passages.jsonl")
    assert records[0]["chunker"] == "recursive_500"
    assert {r["chunker"] for r in records} == {"recursive_500", "paragraphs"}


def test_empty_result_names_chunker_and_document_and_writes_nothing(workspace: Path, capsys):
    assert run_chunk(workspace, "--chunkers", "paragraphs", "skip_terms") == 1
    error = capsys.readouterr().err
    assert "chunker 'skip_terms' returned no passages for document 'tos-1'" in error
    assert not (workspace / "data/chunks").exists()


def test_chunk_documents_raises_for_empty_output(workspace: Path):
    chunkers = load_chunkers(["skip_terms"], workspace / "conf/chunker")
    with pytest.raises(
        ChunkingError, match="'skip_terms' returned no passages for document 'tos-1'"
    ):
        chunk_stage.chunk_documents(DOCUMENTS, chunkers)


def test_bad_config_stops_the_stage_before_chunking(workspace: Path, capsys):
    (workspace / "conf/chunker/broken.yaml").write_text(
        "name: broken\n_target_: hope.chunking.FixedSizeChunker\n"
        "chunk_size: 100\nchunk_overlap: 100\n"
    )
    assert run_chunk(workspace, "--chunkers", "recursive_500", "broken") == 1
    assert "chunk_overlap (100) must be smaller than chunk_size (100)" in capsys.readouterr().err
    assert not (workspace / "data/chunks").exists()


def test_bleu_stage_scores_every_pair(workspace: Path):
    assert run_chunk(workspace, "--chunkers", "fixed_500_o125", "paragraphs") == 0
    output = workspace / "data/bleu/bleu.jsonl"
    assert (
        bleu_stage.main(
            [
                "--documents",
                str(workspace / "data/prepared/documents.jsonl"),
                "--passages",
                str(workspace / "data/chunks/passages.jsonl"),
                "--output",
                str(output),
            ]
        )
        == 0
    )
    rows = read_jsonl(output)
    assert [(r["chunker"], r["doc_id"]) for r in rows] == [
        ("fixed_500_o125", "news-1"),
        ("fixed_500_o125", "tos-1"),
        ("paragraphs", "news-1"),
        ("paragraphs", "tos-1"),
    ]
    # Whole-document windows and all-paragraph splits both rebuild the text exactly.
    assert all(r["bleu"] == pytest.approx(100.0) for r in rows)
    assert all("tok:13a" in r["signature"] for r in rows)


def test_bleu_scores_orders_passages_and_reports_gaps():
    document = {"doc_id": "d", "domain": "x", "text": "a b c d e"}
    passages = [
        {"passage_id": "d::c::0001", "doc_id": "d", "chunker": "c", "index": 1, "text": "c d"},
        {"passage_id": "d::c::0000", "doc_id": "d", "chunker": "c", "index": 0, "text": "a b"},
    ]
    (row,) = bleu_stage.bleu_scores([document], passages)
    # In index order the hypothesis is "a b c d" (see test_bleu: exp(-0.25)).
    assert row["bleu"] == pytest.approx(77.8800783, abs=1e-6)
    other = {"doc_id": "e", "domain": "x", "text": "f g"}
    with pytest.raises(ValueError, match="chunker 'c' has no passages for document 'e'"):
        bleu_stage.bleu_scores([document, other], passages)
    stray = {**passages[0], "doc_id": "zzz", "passage_id": "zzz::c::0000"}
    with pytest.raises(ValueError, match="unknown document 'zzz'"):
        bleu_stage.bleu_scores([document], [stray])


def test_bleu_stage_takes_tokenisation_from_params(workspace: Path, capsys):
    assert run_chunk(workspace, "--chunkers", "paragraphs") == 0
    params = workspace / "params.yaml"
    params.write_text("bleu:\n  tokenize: char\n  joiner: ''\n")
    common = [
        "--documents",
        str(workspace / "data/prepared/documents.jsonl"),
        "--passages",
        str(workspace / "data/chunks/passages.jsonl"),
        "--output",
        str(workspace / "data/bleu/bleu.jsonl"),
        "--params",
        str(params),
    ]
    assert bleu_stage.main(common) == 0
    rows = read_jsonl(workspace / "data/bleu/bleu.jsonl")
    assert all("tok:char" in r["signature"] for r in rows)
    # The flag wins over the params file.
    assert bleu_stage.main([*common, "--tokenize", "intl"]) == 0
    assert all("tok:intl" in r["signature"] for r in read_jsonl(workspace / "data/bleu/bleu.jsonl"))
    params.write_text("bleu:\n  tokenise: char\n")
    assert bleu_stage.main(common) == 1
    assert "bleu.tokenise: unknown setting" in capsys.readouterr().err
