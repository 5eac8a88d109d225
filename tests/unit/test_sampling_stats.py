"""bench/sampling_stats.py, which the precision and sequential benchmarks judge by: the t test of
a HOPE difference and the standard error against values by hand, the request count, and the
sequential rule replayed on known items."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from hope.core.hope_settings import load_profile

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from sampling_stats import (
    compare,
    decisions,
    hope_of,
    replay_sequential,
    requests_for,
    scored_chunkings,
    standard_error,
)

A = {
    "concept_unity": [0.6, 0.8],
    "semantic_independence": [0.5, 0.7],
    "information_preservation": [True, True, False],
}
B = {
    "concept_unity": [0.2, 0.4],
    "semantic_independence": [0.1, 0.3],
    "information_preservation": [False, True, False],
}


def test_hope_and_its_standard_error_by_hand():
    assert hope_of(A) == pytest.approx((0.7 + 0.6 + 2 / 3) / 3)
    # each CU/SI mean: var([0.6, 0.8], ddof=1) / 2 = 0.01; IP: var([1, 1, 0], ddof=1) / 3 = 1/9
    assert standard_error(A) == pytest.approx((0.02 + 1 / 9) ** 0.5 / 3)
    assert math.isnan(standard_error({**A, "concept_unity": [0.6]}))  # one item: no spread


def test_the_t_test_of_a_hope_difference_by_hand():
    # diff = 0.65556 - 0.27778 = 0.37778; variance 4 x 0.01 + var([1, 0, 0], ddof=1) / 3 = 0.04 +
    # 1/9, so se = sqrt(0.15111) / 3 = 0.12958 and t = 2.915 with df = 2 - 1 = 1: below
    # t(0.975, 1) = 12.71 (undecided), above t(0.75, 1) = 1.0 (decided at 50 %).
    assert compare(A, B) == 0
    assert compare(A, B, confidence=0.5) == 1
    assert compare(B, A, confidence=0.5) == -1
    assert decisions({"b": B, "a": A}, confidence=0.5) == {("a", "b"): 1}
    one = {**A, "concept_unity": [0.6]}
    assert compare(one, B, confidence=0.5) == 0  # one item: no spread, no decision


def test_requests_count_the_shared_quadruples_once():
    drawn = {"x": {"focus_passages": 2, "segments": 3}, "y": {"focus_passages": 1, "segments": 1}}
    # per focus passage 1 + 1 + 2 x 1; per segment 1 choice per chunking; 3 quadruples
    assert requests_for(drawn, n_questions=1, shared_segments=3) == (8 + 3) + (4 + 1) + 3


def test_replaying_with_epsilon_zero_draws_every_item_and_agrees_with_the_full_run():
    settings = load_profile(
        "paper",
        progress=False,
        sampling={"mode": "sequential", "epsilon": 0.0, "round_focus_passages": 1},
    )
    replay = replay_sequential({"a": A, "b": B}, settings)
    assert replay["a"]["record"]["stopped"] == "exhausted"
    assert sorted(replay["a"]["items"]["concept_unity"]) == sorted(A["concept_unity"])
    assert replay["b"]["items"]["information_preservation"] == B["information_preservation"]
    low, high = replay["a"]["record"]["intervals"]["hope"]
    assert low == pytest.approx(hope_of(A)) == pytest.approx(high)


def test_only_chunkings_scored_with_their_items_are_read_from_a_record():
    corpus = {
        "chunkers": {
            "kept": {"hope": {"paper": {"status": "ok", "items": A}}},
            "undefined": {"hope": {"paper": {"status": "undefined", "reason": "no passage"}}},
            "no_items": {"hope": {"paper": {"status": "ok"}}},
            "other_profile": {"hope": {"robust": {"status": "ok", "items": B}}},
            "not_run": {"hope": None},
        }
    }
    assert list(scored_chunkings(corpus, "paper")) == ["kept"]
    assert scored_chunkings(corpus, "paper")["kept"]["items"] is A
    assert list(scored_chunkings(corpus, "robust")) == ["other_profile"]
