"""The validity ladder's builders and statistics (hope.validity), with hand-computed values."""

import math

import pytest

from hope.validity import ladder_stats as stats
from hope.validity.ladder import (
    RUNGS,
    aligned_passages,
    build_ladder,
    fixed_fragments,
    foreign_mixed,
    sentence_shuffled,
    truncate_to_paragraphs,
)

BODY_1 = "The first paragraph talks about apples. Apples grow on trees in many countries."
BODY_2 = "The second paragraph talks about bees. Bees make honey and pollinate the apple trees."
DOC = f"Introduction\n\n{BODY_1}\n\n  \n{BODY_2}"
FOREIGN = (
    "A foreign paragraph about ships and their harbours, long enough to be a passage.\n\n"
    "Another foreign paragraph about sailing ships and old maps of the northern seas."
)


def test_a_heading_joins_the_paragraph_it_heads():
    assert aligned_passages(DOC) == [f"Introduction\n\n{BODY_1}", BODY_2]


def test_a_short_last_paragraph_joins_the_one_before():
    assert aligned_passages(f"{BODY_1}\n\nThe end.") == [f"{BODY_1}\n\nThe end."]


def test_truncation_keeps_whole_paragraphs_only():
    text = f"{BODY_1}\n\n{BODY_2}"
    assert truncate_to_paragraphs(text, len(BODY_1) + 10) == BODY_1
    assert truncate_to_paragraphs(text, len(text)) == text
    assert truncate_to_paragraphs(text, 5) == BODY_1  # never empty


def test_fixed_fragments_cut_words_and_keep_every_character():
    fragments = fixed_fragments(BODY_1, 20)
    assert fragments[0] == "The first paragraph "
    assert fragments[1] == "talks about apples. "
    assert "".join(fragments) == BODY_1
    with pytest.raises(ValueError, match="positive"):
        fixed_fragments(BODY_1, 0)


def test_foreign_mixed_glues_a_foreign_passage_to_each_and_cycles():
    assert foreign_mixed(["a", "b", "c"], ["x", "y"]) == ["a\n\nx", "b\n\ny", "c\n\nx"]


def test_sentence_shuffled_keeps_every_sentence_and_is_seeded():
    text = f"{BODY_1} {BODY_2}"
    shuffled = sentence_shuffled(text, 2, seed=1)
    assert len(shuffled) == 2
    words = sorted(" ".join(shuffled).split())
    assert words == sorted(text.split())
    assert shuffled == sentence_shuffled(text, 2, seed=1)
    assert any(shuffled != sentence_shuffled(text, 2, seed=s) for s in range(2, 8))


def test_the_ladder_has_every_rung_best_first():
    ladder = build_ladder(DOC, FOREIGN, recursive=lambda t: [t], fragment_chars=50, seed=0)
    assert tuple(ladder) == RUNGS
    assert ladder["recursive_500"] == [DOC]
    assert len(ladder["sentence_shuffled"]) == len(ladder["aligned"]) == 2
    assert ladder["foreign_mixed"][0].endswith("long enough to be a passage.")
    assert all(len(f) <= 50 for f in ladder["fixed_120"])


def test_outcomes_separate_wins_ties_losses_and_undefined():
    assert stats.outcome(0.5, 0.25) == "win"
    assert stats.outcome(0.5, 0.5) == "tie"
    assert stats.outcome(0.25, 0.5) == "loss"
    assert stats.outcome(math.nan, 0.5) == "undefined"


def test_comparisons_count_per_rung_and_pooled():
    scores = {
        "d1": {"best": 0.9, "x": 0.5, "y": 0.9},  # x win, y tie
        "d2": {"best": 0.4, "x": 0.6, "y": math.nan},  # x loss, y undefined
    }
    table = stats.comparisons(scores, "best", ["x", "y"], n_boot=200)
    assert (table["x"]["wins"], table["x"]["losses"], table["x"]["share_wins"]) == (1, 1, 0.5)
    assert (table["y"]["ties"], table["y"]["undefined"], table["y"]["share_wins"]) == (1, 1, 0.0)
    pooled = table["pooled"]
    # 3 defined comparisons, 1 win -> 1/3
    assert pooled["share_wins"] == pytest.approx(1 / 3)
    low, high = pooled["share_wins_ci95"]
    assert 0.0 <= low <= 1 / 3 <= high <= 1.0


def test_kendall_tau_against_the_ladder():
    order = ["a", "b", "c"]
    assert stats.kendall_tau(order, {"a": 3, "b": 2, "c": 1}) == pytest.approx(1.0)
    assert stats.kendall_tau(order, {"a": 1, "b": 2, "c": 3}) == pytest.approx(-1.0)
    # one discordant pair of three: (2 - 1) / 3
    assert stats.kendall_tau(order, {"a": 3, "b": 1, "c": 2}) == pytest.approx(1 / 3)
    assert math.isnan(stats.kendall_tau(order, {"a": 1, "b": 1, "c": 1}))
    assert math.isnan(stats.kendall_tau(order, {"a": 1, "b": math.nan, "c": 1}))


def test_accuracy_pools_segments_over_documents():
    result = stats.accuracy([[True, False], [True, True]], n_boot=100)
    assert result["accuracy"] == 0.75
    assert result["n"] == 4


def test_letter_distribution_counts_every_letter():
    result = stats.letter_distribution(["A", "A", "A", "B"])
    assert result["counts"] == {"A": 3, "B": 1, "C": 0, "D": 0}
    assert result["shares"]["A"] == 0.75
    assert 0 < result["chi2_uniform_p"] < 1


def test_mean_with_ci_skips_undefined_values():
    result = stats.mean_with_ci([1.0, math.nan, 0.0], n_boot=100)
    assert result["mean"] == 0.5 and result["n"] == 2
