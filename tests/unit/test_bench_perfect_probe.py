"""bench/perfect_probe.py (bench_probe.py --perfect-probe): how often a probe ranking exactly as the
real questions' population would meet the tau targets, from the noise ceiling's replicates
(hand-computed), and the record's section against its own counts and the main run's ceiling."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from perfect_probe import (  # noqa: E402
    chance_from_counts,
    perfect_probe_odds,
    scaled_noise_taus,
    tau_counts,
)

MEASURES = {"recall@5": "recall", "budget_recall@1000": "budget_recall"}


def test_chances_per_corpus_pooled_everywhere_and_for_every_measure():
    # Four replicate draws. recall@5 (target 0.6): corpus a meets it in draws 0, 1, 3 (3/4);
    # b in draws 0, 2 (2/4; draw 3 undefined: not met). Pooled, the mean over the corpora with a
    # tau: (0.8+0.6)/2 = 0.7, (0.6+0.2)/2 = 0.4, (0.4+1.0)/2 = 0.7, 1.0 alone -> met in 0, 2, 3.
    # Every corpus and pooled at once: draw 0 only -> 1/4.
    # budget 1 k (target 0.8): a meets it in 0, 1, 2; b in 0, 1, 3; pooled (0.9, 0.85, 0.6, 0.7)
    # in 0, 1 -> at once in draws 0, 1 -> 2/4. Both measures at once: draw 0 -> 1/4.
    replicates = {
        "a": {"recall@5": [0.8, 0.6, 0.4, 1.0], "budget_recall@1000": [0.8, 0.9, 1.0, 0.6]},
        "b": {"recall@5": [0.6, 0.2, 1.0, math.nan], "budget_recall@1000": [1.0, 0.8, 0.2, 0.8]},
    }
    odds = perfect_probe_odds(replicates, MEASURES)
    recall = odds["measures"]["recall@5"]
    assert recall["tau_target"] == 0.6
    assert recall["corpora"]["a"]["chance"] == 0.75
    assert recall["corpora"]["b"]["chance"] == 0.5
    assert recall["corpora"]["b"]["median_tau"] == 0.6  # of the finite 0.2, 0.6, 1.0
    assert recall["pooled"]["chance"] == 0.75
    assert recall["pooled"]["median_tau"] == pytest.approx(0.7)
    assert recall["every_corpus_and_pooled"] == 0.25
    budget = odds["measures"]["budget_recall@1000"]
    assert budget["corpora"]["a"]["chance"] == 0.75 and budget["corpora"]["b"]["chance"] == 0.75
    assert budget["pooled"]["chance"] == 0.5
    assert budget["every_corpus_and_pooled"] == 0.5
    assert odds["all_measures"] == 0.25
    assert odds["replicates"] == 4


def test_the_counts_of_each_tau_give_back_the_chance():
    taus = [0.6190476, 0.8095238, 0.6190476, math.nan, 1.0]
    counts = tau_counts(taus)
    assert counts == {"0.6190": 2, "0.8095": 1, "1.0000": 1, "nan": 1}
    assert chance_from_counts(counts, 0.6) == 0.8
    assert chance_from_counts(counts, 0.8) == 0.4


def test_cells_with_different_replicate_counts_are_refused():
    with pytest.raises(ValueError, match="replicate counts differ"):
        perfect_probe_odds({"a": {"recall@5": [1.0, 1.0], "budget_recall@1000": [1.0]}}, MEASURES)


def test_scale_one_is_the_noise_ceilings_own_draws_and_more_questions_mean_less_noise():
    from probe_vs_real import RealSide

    rng = np.random.default_rng(7)
    # Four chunkers whose true means differ by 0.05 steps, 30 noisy questions each.
    per_question = [list(0.05 * i + rng.normal(0, 0.3, 30)) for i in range(4)]
    names = ["w", "x", "y", "z"]
    cells = zip(names, per_question, strict=True)
    real = {"chunkings": {n: {"per_question": {"recall@5": v}} for n, v in cells}}
    args = SimpleNamespace(resamples=200, seed=3)
    ceiling = RealSide(real, names, "recall@5", args).noise_ceiling()["_replicates"]
    at_size = scaled_noise_taus(per_question, 200, args.seed + 1)
    np.testing.assert_array_equal(at_size, ceiling)
    larger = scaled_noise_taus(per_question, 200, args.seed + 1, scale=8)
    assert np.nanmedian(larger) > np.nanmedian(at_size)
    assert np.mean(larger >= 0.6) > np.mean(at_size >= 0.6)


def test_the_records_section_follows_from_its_counts_and_the_main_runs_ceiling():
    """Each corpus's chance is what its tau counts give; at the labelled set's size the median
    tau is the main run's noise ceiling (the same draws of the same real questions), so a rerun of
    one without the other shows here."""
    record = json.loads((ROOT / "bench/results/probe.json").read_text())
    section = record["perfect_probe"]
    assert list(section["scales"]) == ["1", "2", "4", "8"]
    for scale, odds in section["scales"].items():
        for measure, cell in odds["measures"].items():
            for corpus, found in cell["corpora"].items():
                counts = found["tau_counts"]
                assert sum(counts.values()) == odds["replicates"]
                assert chance_from_counts(counts, cell["tau_target"]) == pytest.approx(
                    found["chance"]
                ), (scale, measure, corpus)
                if scale == "1":
                    ceiling = record["corpora"][corpus]["noise_ceiling"][measure]["median"]
                    assert found["median_tau"] == pytest.approx(ceiling), (measure, corpus)
            assert cell["every_corpus_and_pooled"] <= min(
                [c["chance"] for c in cell["corpora"].values()] + [cell["pooled"]["chance"]]
            )
        assert odds["all_measures"] <= min(
            c["every_corpus_and_pooled"] for c in odds["measures"].values()
        )
    assert section["real_questions"] == {
        corpus: block["n_real_questions"] for corpus, block in record["corpora"].items()
    }
