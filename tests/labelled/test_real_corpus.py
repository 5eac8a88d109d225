"""Labelled retrieval on a real slice of Chroma's general evaluation set, with the real MiniLM and
the project's chunkers (slow: loads sentence-transformers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hope.chunking import load_chunker
from hope.labelled import ChunkPassage, LabelledSettings, evaluate_chunking
from hope.labelled.labelled_files import read_questions

DATA = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "chroma-general-eval"
SLICE_CHARS = 6000  # the first 6,000 characters hold every span of 12 questions


@pytest.fixture(scope="module")
def state_of_the_union_slice(tmp_path_factory):
    if not DATA.is_dir():
        pytest.skip(f"benchmark data not found at {DATA}")
    corpus = (DATA / "corpora" / "state_of_the_union.md").read_text(encoding="utf-8")
    text = corpus[:SLICE_CHARS]
    kept = []
    for line in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["corpus"] == "state_of_the_union" and all(
            r["end"] <= SLICE_CHARS for r in record["references"]
        ):
            kept.append(line)
    path = tmp_path_factory.mktemp("slice") / "questions.jsonl"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    questions, _ = read_questions(path, text, "state_of_the_union")
    return text, questions


@pytest.mark.slow
def test_minilm_retrieval_on_a_real_slice(state_of_the_union_slice):
    from hope.models.factory import build_embedder

    text, questions = state_of_the_union_slice
    assert len(questions) == 12
    embedder = build_embedder(model="minilm")
    results = {}
    for name in ("fixed_500_o0", "recursive_500", "fixed_2000_o0"):
        passages = [
            ChunkPassage(p.text, p.start, p.end)
            for p in load_chunker(name).chunk(text, "state_of_the_union")
        ]
        results[name] = evaluate_chunking(
            text, questions, passages, embedder, LabelledSettings(k=2, budget=1000)
        )
    for name, result in results.items():
        assert result["status"] == "ok", name
        for measure, cell in result["summary"].items():
            assert 0.0 <= cell["low"] <= cell["mean"] <= cell["high"] <= 1.0, (name, measure)
    # Three 2,000-character passages: k=2 retrieves two thirds of the text, so recall@2 is high
    # and precision low; 1,000 characters of budget read half a passage.
    big = results["fixed_2000_o0"]["summary"]
    small = results["fixed_500_o0"]["summary"]
    assert big["recall"]["mean"] > small["recall"]["mean"]
    assert big["precision"]["mean"] < small["precision"]["mean"]
    # Retrieval must beat chance: a random 2 of 12 passages of 500 characters would find about
    # 1/6 of the gold characters.
    assert small["recall"]["mean"] > 0.3
