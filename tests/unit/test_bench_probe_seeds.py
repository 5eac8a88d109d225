"""bench/bench_probe.py --question-seeds: each seed's comparisons pooled as the main run pools
them, then the spread over seeds, with the targets judged on the medians (hand-computed)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from probe_choice import held_out_choice, over_seeds, seed_cells, writer_choice  # noqa: E402


def _cell(tau, agreeing, pairs):
    return {"tau": tau, "agreeing": agreeing, "pairs": pairs, "_replicates": np.full(4, tau)}


def test_the_spread_over_seeds_pools_each_seed_first():
    # seed -> corpus -> measure; recall@5's pooled tau per seed: (0.2 + 0.6) / 2 = 0.4,
    # (0.8 + 0.6) / 2 = 0.7, (0.6 + 1.0) / 2 = 0.8 -> median 0.7, range 0.4-0.8 (target 0.6: met)
    taus = {0: (0.2, 0.6), 1: (0.8, 0.6), 2: (0.6, 1.0)}
    # pairs agreeing per seed, summed over corpora: 3/4, 4/4, 2/4 -> median 0.75 (90 %: missed)
    agreeing = {0: (1, 2), 1: (2, 2), 2: (1, 1)}
    found = {
        seed: {
            corpus: {"recall@5": _cell(taus[seed][i], agreeing[seed][i], 2)}
            for i, corpus in enumerate(("a", "b"))
        }
        for seed in taus
    }
    cell = over_seeds(found, {"recall@5": "recall"})["recall@5"]
    assert cell["pooled_tau"]["median"] == 0.7
    assert (cell["pooled_tau"]["min"], cell["pooled_tau"]["max"]) == (0.4, 0.8)
    assert cell["pooled_agreement"]["median"] == 0.75
    assert cell["tau_met"] is True and cell["agreement_met"] is False
    assert cell["corpus_tau"]["a"]["runs"] == [0.2, 0.8, 0.6]
    assert cell["corpus_tau"]["b"]["median"] == 0.6


def _seed_cells(agreement_met, tau_median, agreeing=9, pairs=10):
    return {
        "pooled_tau": {"median": tau_median},
        "agreement_met": agreement_met,
        "pairs_over_seeds": {"agreeing": agreeing, "pairs": pairs},
    }


def test_the_default_writer_is_chosen_by_measures_meeting_agreement_then_mean_tau():
    writers = {
        # 1 of 2 measures meets the pair target; mean tau (0.9 + 0.5) / 2 = 0.7, 20 of 20 pairs
        "a": {"m1": _seed_cells(True, 0.9, 10), "m2": _seed_cells(False, 0.5, 10)},
        # 2 of 2 measures; mean tau (0.6 + 0.4) / 2 = 0.5: ranks first though its tau is lower
        "b": {"m1": _seed_cells(True, 0.6), "m2": _seed_cells(True, 0.4)},
        # 2 of 2 measures; mean tau (0.7 + 0.4) / 2 = 0.55: first by the tie-break on tau
        "c": {"m1": _seed_cells(True, 0.7), "m2": _seed_cells(True, 0.4)},
    }
    choice = writer_choice(writers)
    assert choice["ranked"] == ["c", "b", "a"]
    assert choice["chosen"] == "c"
    assert choice["writers"]["a"]["measures_agreement_met"] == 1
    assert choice["writers"]["c"]["mean_median_tau"] == 0.55
    assert choice["writers"]["a"]["pairs_over_seeds"] == {"agreeing": 20, "pairs": 20}
    assert choice["default_is_chosen"] is False


def test_a_writer_without_any_tau_ranks_last():
    writers = {
        "none": {"m1": {"pooled_tau": None, "agreement_met": True}},
        "low": {"m1": _seed_cells(True, -0.9)},
    }
    assert writer_choice(writers)["ranked"] == ["low", "none"]


def _writer(taus, agreeing, pairs, seeds=(0, 1)):
    """seed -> corpus -> recall@5 cell, the same on every seed."""
    return {
        seed: {
            corpus: {"recall@5": _cell(taus[corpus], agreeing[corpus], pairs[corpus])}
            for corpus in taus
        }
        for seed in seeds
    }


def test_leaving_each_corpus_out_shows_what_the_choice_keeps_on_an_unseen_corpus():
    pairs = {"x": 1, "y": 1, "z": 8}
    found = {
        # all corpora: 10 of 10 pairs agree (target met), mean tau 0.47
        "a": _writer({"x": 0.2, "y": 0.2, "z": 1.0}, {"x": 1, "y": 1, "z": 8}, pairs),
        # all corpora: 6 of 10 pairs (missed), so "a" is chosen on all three
        "b": _writer({"x": 0.4, "y": 0.4, "z": 0.0}, {"x": 1, "y": 1, "z": 4}, pairs),
    }
    per_seed = {w: seed_cells(f) for w, f in found.items()}
    assert per_seed["a"]["1"]["z"]["recall@5"] == {"tau": 1.0, "agreeing": 8, "pairs": 8}
    out = held_out_choice(per_seed, {"recall@5": "recall"}, ["x", "y", "z"])
    assert out["chosen_on_all_corpora"] == "a"
    # without z both meet the pair target on x and y (2 of 2), and b's tau (0.4) beats a's (0.2)
    assert out["folds"]["z"]["chosen"] == "b"
    assert out["folds"]["z"]["on_left_out"]["recall@5"] == {"tau": 0.0, "agreeing": 8, "pairs": 16}
    # without x: a has 9 of 9 pairs, b 5 of 9 (missed) -> a; its figures on x
    assert out["folds"]["x"]["chosen"] == "a"
    assert out["folds"]["x"]["on_left_out"]["recall@5"] == {"tau": 0.2, "agreeing": 2, "pairs": 2}
    assert out["same_choice"] == 2 and out["corpora"] == 3
    # held out: (0.2 + 0.2 + 0.0) / 3; chosen on all corpora: a's (0.2 + 0.2 + 1.0) / 3
    assert out["tau_held_out"]["recall@5"] == 0.1333
    assert out["tau_all_corpora"]["recall@5"] == 0.4667
    # pairs on the corpora left out: 2/2 + 2/2 + 8/16 = 12/20 = 60 %: below the 90 % target
    assert out["pairs_held_out"]["recall@5"] == {"agreeing": 12, "pairs": 20}
    assert out["targets_met_held_out"]["recall@5"] == {
        "tau_target": 0.6,
        "tau_met": False,
        "agreement_met": False,
    }
    # a, chosen on all: 2/2 + 2/2 + 16/16 pairs, tau 0.47 (below 0.6)
    assert out["pairs_all_corpora"]["recall@5"] == {"agreeing": 20, "pairs": 20}
    assert out["targets_met_all_corpora"]["recall@5"]["tau_met"] is False
    assert out["targets_met_all_corpora"]["recall@5"]["agreement_met"] is True


def test_the_default_writer_is_the_one_the_record_chose():
    """hope.probe.DEFAULT_WRITER may only change with a probe record that chooses it."""
    import json

    from hope.probe import DEFAULT_WRITER

    record = json.loads((ROOT / "bench/results/probe.json").read_text())
    choice = record["question_seeds"]["default_choice"]
    assert choice["chosen"] == DEFAULT_WRITER
    assert choice["default_is_chosen"] is True


def test_llm_writer_timings_of_two_models_go_to_two_sections(monkeypatch):
    # A second model's run used to replace the first's: both lived in llm_writer[<writer>].
    import argparse

    import probe_llm_runs

    def timing(args, settings, questions, repeats, gguf, model):
        return {"status": "ok", "model": f"embedded:gguf:{gguf or 'smol'}.gguf:1"}

    monkeypatch.setattr(probe_llm_runs, "llm_timing", timing)
    record: dict = {}

    class Recorder:
        def merge_section(self, path, key, section):
            record[key] = section

    args = argparse.Namespace(
        llm_questions=6,
        repeats=3,
        llm_gguf=Path("qwen05.gguf"),
        llm_model="Qwen2.5-Coder-0.5B-Instruct",
        llm_gguf_questions=12,
        llm_writer="llm_sentences",
        output=Path("probe.json"),
    )
    probe_llm_runs.llm_writer_only(args, None, Recorder())
    assert sorted(record) == [
        "llm_writer[llm_sentences@Qwen2.5-Coder-0.5B-Instruct]",
        "llm_writer[llm_sentences@SmolLM2-135M-Instruct]",
    ]
    assert record["llm_writer[llm_sentences@SmolLM2-135M-Instruct]"]["default"]["status"] == "ok"


def test_the_records_held_out_check_follows_from_its_own_per_seed_cells():
    """The record's held_out is what probe_choice computes from the record's per_seed (so a
    change to the rule or to the record without a rerun shows here)."""
    import json

    from hope.probe import ProbeSettings
    from probe_vs_real import compared_measures

    section = json.loads((ROOT / "bench/results/probe.json").read_text())["question_seeds"]
    settings = section["settings"]
    measures = compared_measures(ProbeSettings(k=settings["k"], budgets=tuple(settings["budgets"])))
    recomputed = held_out_choice(section["per_seed"], measures, section["corpora"])
    assert json.loads(json.dumps(recomputed)) == section["held_out"]
    assert section["held_out"]["chosen_on_all_corpora"] == section["default_choice"]["chosen"]
