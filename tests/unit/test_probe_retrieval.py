"""Probe retrieval on hand-computed spans: measures at one k and several budgets, the ranking, the
significant pairwise decisions, and the whole probe on a small corpus without any label."""

from __future__ import annotations

import math

import pytest

from hope.labelled import ChunkPassage, GoldReference, LabelledQuestion
from hope.models.embeddings import HashingEmbedder
from hope.probe import ProbeSettings, measure_chunkings, probe_ranking
from hope.probe.probe_retrieval import pairwise_decisions, ranking
from tests.unit.fakes import TableEmbedder

CORPUS = "aaaa bbbb cccc dddd"
R2 = 1 / math.sqrt(2)
TABLE = {
    "aaaa": [1, 0, 0, 0],
    "bbbb": [0, 1, 0, 0],
    "cccc": [0, 0, 1, 0],
    "dddd": [0, 0, 0, 1],
    "aaaa bbbb": [R2, R2, 0, 0],
    "cccc dddd": [0, 0, R2, R2],
    "qa": [1, 0, 0, 0],
    "qd": [0, 0, 0, 1],
}
CHUNKINGS = {
    "small": [ChunkPassage(t, 5 * i, 5 * i + 4) for i, t in enumerate(CORPUS.split())],
    "big": ["aaaa bbbb", "cccc dddd"],  # plain strings: located in the corpus
}
QUESTIONS = [
    LabelledQuestion("qa", (GoldReference(0, 4, "aaaa"),)),
    LabelledQuestion("qd", (GoldReference(15, 19, "dddd"),)),
]
SETTINGS = ProbeSettings(k=1, budgets=(4, 9), n_resamples=200)


def test_measures_at_k_and_every_budget():
    result = measure_chunkings(CORPUS, QUESTIONS, CHUNKINGS, TableEmbedder(TABLE), SETTINGS)
    small, big = result["chunkings"]["small"], result["chunkings"]["big"]
    assert small["per_question"]["recall@1"] == [1.0, 1.0]
    assert small["per_question"]["iou@1"] == [1.0, 1.0]
    assert small["per_question"]["budget_recall@4"] == [1.0, 1.0]
    # "big" retrieves a 9-character passage holding the 4 gold characters.
    assert big["per_question"]["recall@1"] == [1.0, 1.0]
    assert big["per_question"]["iou@1"] == pytest.approx([4 / 9, 4 / 9])
    assert big["per_question"]["precision@1"] == pytest.approx([4 / 9, 4 / 9])
    # Within 4 characters "big" reads "cccc" of "cccc dddd": none of qd's gold.
    assert big["per_question"]["budget_recall@4"] == [1.0, 0.0]
    assert big["per_question"]["budget_recall@9"] == [1.0, 1.0]
    assert big["measures"]["budget_recall@4"]["mean"] == 0.5
    assert result["rankings"]["iou@1"] == ["small", "big"]
    assert result["rankings"]["recall@1"] == ["small", "big"]  # a tie keeps the given order
    (iou_pair,) = result["pairs"]["iou@1"]
    assert iou_pair["pair"] == ["small", "big"]
    assert iou_pair["difference"] == pytest.approx(5 / 9)
    assert iou_pair["significant"] and iou_pair["better"] == "small"
    (recall_pair,) = result["pairs"]["recall@1"]
    assert not recall_pair["significant"] and recall_pair["better"] is None


def test_a_chunking_that_is_not_in_the_corpus_is_not_ranked():
    chunkings = {**CHUNKINGS, "rewritten": ["AAAA", "BBBB"]}
    result = measure_chunkings(CORPUS, QUESTIONS, chunkings, TableEmbedder(TABLE), SETTINGS)
    assert result["chunkings"]["rewritten"]["status"] == "not_evaluable"
    assert "rewritten" not in result["rankings"]["iou@1"]


def test_pairwise_decisions_pick_the_consistently_better_chunking():
    rows = {
        "a": {"measures": {"m": {"mean": 0.2}}, "per_question": {"m": [0.1, 0.2, 0.3, 0.2]}},
        "b": {"measures": {"m": {"mean": 0.7}}, "per_question": {"m": [0.6, 0.7, 0.8, 0.7]}},
        "c": {"measures": {"m": {"mean": 0.2}}, "per_question": {"m": [0.3, 0.1, 0.2, 0.2]}},
    }
    assert ranking(rows, ["a", "b", "c"], "m") == ["b", "a", "c"]
    decisions = pairwise_decisions(rows, ["a", "b", "c"], "m", ProbeSettings(n_resamples=200))
    by_pair = {tuple(d["pair"]): d for d in decisions}
    assert by_pair["a", "b"]["better"] == "b"
    assert by_pair["b", "c"]["better"] == "b"
    assert not by_pair["a", "c"]["significant"]


def test_settings_are_checked():
    with pytest.raises(ValueError):
        ProbeSettings(k=0)
    with pytest.raises(ValueError):
        ProbeSettings(budgets=())
    assert ProbeSettings(k=3, budgets=(10,)).measure_names() == [
        "recall@3",
        "precision@3",
        "iou@3",
        "budget_recall@10",
    ]


TEXT = " ".join(
    f"Entry {i}: the {a} from {p} walked {i + 2} leagues looking for {f} by the {t}."
    for i, (a, p, f, t) in enumerate(
        zip(
            ["otter", "heron", "badger", "falcon", "beaver", "weasel"] * 4,
            ["Dover", "Leeds", "Bath", "York", "Ely", "Wells"] * 4,
            ["trout", "frogs", "worms", "mice", "bark", "eggs"] * 4,
            ["weir", "marsh", "copse", "cliff", "dam", "barn"] * 4,
            strict=True,
        )
    )
)


@pytest.mark.parametrize("writer", ["cloze", "keyword"])
def test_probe_ranking_needs_no_labels(writer):
    sentences = [s.strip() for s in TEXT.split(".") if s.strip()]
    chunkings = {
        "sentences": [s + "." for s in sentences],
        "pairs": [
            TEXT[TEXT.index(a) : TEXT.index(b) + len(b) + 1]
            for a, b in zip(sentences[::2], sentences[1::2], strict=True)
        ],
    }
    settings = ProbeSettings(k=2, budgets=(100, 300), n_questions=5, n_resamples=100)
    result = probe_ranking(TEXT, chunkings, HashingEmbedder(), settings, writer)
    assert result["probe"]["writer"] == writer
    assert 1 <= result["probe"]["written"] <= 5
    assert sorted(result["rankings"]["budget_recall@100"]) == ["pairs", "sentences"]
    assert set(result["timings_s"]) == {"writing_and_filtering", "retrieval_and_measures"}
    for question in result["probe"]["questions"]:
        for ref in question["references"]:
            assert TEXT[ref["start"] : ref["end"]] == ref["text"]
