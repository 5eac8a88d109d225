"""Convergent validity (hope.labelled.convergent) on hand-made corpus entries with known orders."""

from __future__ import annotations

import math

import pytest

from hope.baselines import CARDS
from hope.labelled.convergent import analyse, corpus_validity, strip_private

PER_PASSAGE = ("size_compliance", "intra_chunk_cohesion", "contextual_coherence")


def hope_record(cu: float, si: float, correct: list[bool], hope: float) -> dict:
    return {
        "status": "ok",
        "hope": hope,
        "concept_unity": cu,
        "semantic_independence": si,
        "information_preservation": sum(correct) / len(correct),
        "items": {
            "concept_unity": [cu, cu],
            "semantic_independence": [si, si],
            "information_preservation": correct,
        },
    }


def entry(labelled: dict[str, float], bleu: dict[str, float], size: dict[str, float]) -> dict:
    """A corpus entry: every question of a chunker has the same labelled value, so every
    bootstrap replicate keeps the order and the intervals collapse onto the point."""
    hope = {
        "a": hope_record(0.9, 0.9, [True, True], 0.9),
        "b": hope_record(0.5, 0.5, [True, True], 0.6),
        "c": hope_record(0.1, 0.1, [False, False], 0.1),
    }
    out = {"chunkers": {}, "_per_question": {}, "_baseline_items": {}}
    for name in ("a", "b", "c"):
        baselines = {card: size[name] if card in PER_PASSAGE else 3.0 for card in CARDS}
        out["chunkers"][name] = {
            "mean_chars": {"a": 2000.0, "b": 1000.0, "c": 500.0}[name],
            "bleu": bleu[name],
            "baselines": baselines,
            "hope": {"paper": hope[name]},
        }
        out["_per_question"][name] = {
            t: [labelled[name]] * 4 for t in ("budget_recall", "recall", "iou")
        }
        items = {card: [size[name]] * 2 for card in PER_PASSAGE}
        out["_baseline_items"][name] = {**items, "passage_count": None}
    return out


def test_tau_interval_and_agreement_of_known_orders():
    corpus = entry(
        labelled={"a": 1.0, "b": 0.5, "c": 0.0},
        bleu={"a": 3.0, "b": 2.0, "c": 1.0},  # the labelled order: tau +1
        size={"a": 0.0, "b": 0.5, "c": 1.0},  # the reverse: tau -1
    )
    result, draws = corpus_validity(corpus, ["a", "b", "c"], {"paper": {}}, 50, seed=0)
    block = result["budget_recall"]
    # Constant per-question differences of 0.5 and 1.0: all three pairs are significant.
    assert block["significant_pairs"] == 3 and block["all_pairs"] == 3
    assert block["labelled_means"] == {"a": 1.0, "b": 0.5, "c": 0.0}
    cells = block["scores"]
    assert cells["bleu"] == {
        "tau": 1.0,
        "low": 1.0,
        "high": 1.0,
        "agreement": 1.0,
        "agreeing": 3,
        "pairs": 3,
    }
    assert cells["size_compliance"]["tau"] == -1.0 and cells["size_compliance"]["agreeing"] == 0
    # The passage count is the same for every chunker: no order, no tau, no agreeing pair.
    assert cells["passage_count"]["tau"] is None and cells["passage_count"]["agreement"] == 0
    # HOPE and its sub-metrics, recomputed from resampled items, keep a > b > c.
    for name in ("hope[paper]", "concept_unity[paper]", "semantic_independence[paper]"):
        assert (cells[name]["tau"], cells[name]["low"], cells[name]["high"]) == (1.0, 1.0, 1.0)
    assert len(draws.tau_reps["budget_recall|hope[paper]"]) == 50


def test_pooled_tau_is_the_mean_over_corpora_and_small_corpora_are_skipped():
    agreeing = entry(
        {"a": 1.0, "b": 0.5, "c": 0.0}, {"a": 3, "b": 2, "c": 1}, {"a": 0, "b": 1, "c": 2}
    )
    reversed_ = entry(
        {"a": 0.0, "b": 0.5, "c": 1.0}, {"a": 3, "b": 2, "c": 1}, {"a": 0, "b": 1, "c": 2}
    )
    too_small = entry(
        {"a": 1.0, "b": 0.5, "c": 0.0}, {"a": 3, "b": 2, "c": 1}, {"a": 0, "b": 1, "c": 2}
    )
    del too_small["_per_question"]["c"]  # not evaluable: only two chunkers left
    report = {"corpora": {"one": agreeing, "two": reversed_, "three": too_small}}
    analyse(report, ["a", "b", "c"], {"paper": {}}, n_resamples=20, seed=1)
    assert report["corpora"]["three"]["validity"] == {"skipped": "only 2 evaluable chunkers"}
    bleu = report["pooled"]["budget_recall"]["bleu"]
    assert bleu["tau"] == pytest.approx(0.0)  # (+1 + -1) / 2
    assert bleu["corpora"] == ["one", "two"]
    assert report["pooled"]["budget_recall"]["hope[paper]"]["tau"] == pytest.approx(0.0)


def test_strip_private_drops_arrays_and_nan():
    report = {"a": 1, "_per_question": [1, 2], "b": [math.nan, 0.5], "c": {"_x": 1, "y": math.inf}}
    assert strip_private(report) == {"a": 1, "b": [None, 0.5], "c": {"y": None}}
