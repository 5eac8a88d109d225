"""Probe questions on a real corpus of Chroma's set with the real MiniLM and the project's
chunkers (slow: loads sentence-transformers); no real label is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from hope.chunking import load_chunker
from hope.labelled import ChunkPassage
from hope.probe import ProbeSettings, probe_ranking

DATA = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "chroma-general-eval"
SLICE_CHARS = 20_000


@pytest.mark.slow
def test_probe_ranking_on_a_real_corpus():
    corpus_path = DATA / "corpora" / "state_of_the_union.md"
    if not corpus_path.is_file():
        pytest.skip(f"benchmark data not found at {DATA}")
    from hope.models.factory import build_embedder

    text = corpus_path.read_text(encoding="utf-8")[:SLICE_CHARS]
    chunkings = {
        name: [
            ChunkPassage(p.text, p.start, p.end)
            for p in load_chunker(name).chunk(text, "state_of_the_union")
        ]
        for name in ("fixed_500_o0", "fixed_2000_o0")
    }
    settings = ProbeSettings(k=2, budgets=(1000,), n_questions=20, n_resamples=200)
    result = probe_ranking(text, chunkings, build_embedder(model="minilm"), settings)
    probe = result["probe"]
    assert probe["written"] >= 10
    for question in probe["questions"]:
        assert all(text[r["start"] : r["end"]] == r["text"] for r in question["references"])
        assert all(question["filters"].values())
    for name in chunkings:
        for cell in result["chunkings"][name]["measures"].values():
            assert 0.0 <= cell["low"] <= cell["mean"] <= cell["high"] <= 1.0
    # Under a 1,000-character budget the 2,000-character chunks read half a passage: the real
    # questions rank 500-character chunks first on this corpus (bench/results/probe.json), and so
    # must the probe.
    assert result["rankings"]["budget_recall@1000"] == ["fixed_500_o0", "fixed_2000_o0"]
    for measure, pairs in result["pairs"].items():
        (decision,) = pairs
        assert decision["better"] in (None, *chunkings), measure
