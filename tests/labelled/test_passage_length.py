"""What a score tracks beyond passage length (hope.labelled.passage_length), on rankings small
enough to count the pairs by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hope.labelled.agreement import kendall_tau
from hope.labelled.convergent import analyse
from hope.labelled.passage_length import (
    corpus_passage_length,
    partial_tau,
    pooled_passage_length,
)
from tests.labelled.test_convergent import entry

# Four chunkers. Score x = 1 2 3 4, labelled target y = 2 1 3 4, mean passage length z = 1 2 4 3.
# The six pairs (1,2) (1,3) (1,4) (2,3) (2,4) (3,4), + concordant, - discordant:
#   x with y: - + + + + +  -> tau_xy = (5 - 1) / 6 = 2/3
#   x with z: + + + + + -  -> tau_xz = (5 - 1) / 6 = 2/3
#   y with z: - + + + + -  -> tau_yz = (4 - 2) / 6 = 1/3
# tau_xy.z = (2/3 - 2/3 * 1/3) / sqrt((1 - 4/9)(1 - 1/9)) = (4/9) / (sqrt(40)/9) = 4/sqrt(40)
X = [1.0, 2.0, 3.0, 4.0]
Y = [2.0, 1.0, 3.0, 4.0]
Z = [1.0, 2.0, 4.0, 3.0]
PARTIAL = 4 / math.sqrt(40)  # 0.6325


def test_the_pairwise_taus_are_the_hand_counted_ones():
    assert kendall_tau(X, Y) == pytest.approx(2 / 3)
    assert kendall_tau(X, Z) == pytest.approx(2 / 3)
    assert kendall_tau(Y, Z) == pytest.approx(1 / 3)


def test_partial_tau_by_the_formula():
    value, reason = partial_tau(2 / 3, 2 / 3, 1 / 3)
    assert value == pytest.approx(PARTIAL) and reason is None
    # Length unrelated to both (tau_xz = tau_yz = 0): the partial tau is tau_xy itself.
    assert partial_tau(0.4, 0.0, 0.0) == (0.4, None)
    # x follows length only through y: tau_xy = tau_xz * tau_yz leaves nothing.
    assert partial_tau(0.25, 0.5, 0.5)[0] == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("taus", "words"),
    [
        ((0.5, 1.0, 0.2), "the score orders the chunkers exactly by passage length"),
        ((0.5, 0.2, -1.0), "the labelled target orders the chunkers exactly by passage length"),
        ((math.nan, 0.2, 0.2), "a pairwise tau is undefined"),
    ],
)
def test_partial_tau_is_undefined_with_a_reason(taus, words):
    value, reason = partial_tau(*taus)
    assert math.isnan(value) and words in reason


def corpus(x_rows, y_rows, x=X, y=Y, z=Z):
    """corpus_passage_length for one score ``s`` and one target ``t`` with the given replicates."""
    x_rows, y_rows = np.array(x_rows, dtype=float), np.array(y_rows, dtype=float)
    tau_reps = np.array([kendall_tau(a, b) for a, b in zip(x_rows, y_rows, strict=True)])
    return corpus_passage_length(
        z,
        {"s": x},
        {"s": x_rows},
        {"t": y},
        {"t": y_rows},
        {"t|s": kendall_tau(x, y)},
        {"t|s": tau_reps},
    )


def test_a_corpus_block_with_intervals_from_the_replicates():
    # Replicates: twice the point, once a score row ordered exactly by length (1 2 4 3), where
    # the partial tau is undefined: left out of the interval and counted.
    block, reps = corpus([X, X, Z], [Y, Y, Y])
    cell = block["tau_with_length"]["s"]
    assert cell["tau"] == pytest.approx(2 / 3)
    assert (cell["low"], cell["high"]) == pytest.approx((2 / 3, 1.0), abs=0.02)
    assert block["targets_with_length"]["t"] == pytest.approx(
        {"tau": 1 / 3, "low": 1 / 3, "high": 1 / 3}
    )
    partial = block["partial_tau_given_length"]["t"]["s"]
    assert partial["tau"] == pytest.approx(PARTIAL)
    assert partial["low"] == pytest.approx(PARTIAL) and partial["high"] == pytest.approx(PARTIAL)
    assert partial["undefined_replicates"] == 1 and "reason" not in partial
    assert set(reps) == {"length|s", "length|target:t", "t|s"}


def test_the_three_taus_are_over_the_chunkers_the_score_has_a_value_for():
    # A fifth chunker without a score: longest passages, worst target, so its 4 pairs are
    # discordant. Over all five the target's tau with length is (4 - 2 - 4) / 10 = -0.2; over
    # the four scored it stays 1/3, and the partial tau is the four chunkers' one.
    x, y, z = [*X, math.nan], [*Y, 0.0], [*Z, 5.0]
    assert kendall_tau(y, z) == pytest.approx(-0.2)
    block, _ = corpus([x, x], [y, y], x=x, y=y, z=z)
    assert block["targets_with_length"]["t"]["tau"] == pytest.approx(-0.2)  # every chunker
    partial = block["partial_tau_given_length"]["t"]["s"]
    assert partial["tau"] == pytest.approx(PARTIAL)
    assert partial["low"] == pytest.approx(PARTIAL) and partial["undefined_replicates"] == 0


def test_an_undefined_point_has_no_interval_and_is_not_pooled():
    # The score is the length order itself: tau_xz = 1.
    block, reps = corpus([Z, Z], [Y, Y], x=Z)
    partial = block["partial_tau_given_length"]["t"]["s"]
    assert partial["tau"] is None and partial["low"] is None and partial["high"] is None
    assert "exactly by passage length" in partial["reason"]
    assert np.isnan(reps["t|s"]).all()
    defined = corpus([X, X], [Y, Y])
    pooled = pooled_passage_length({"one": defined, "two": (block, reps)})
    cell = pooled["partial_tau_given_length"]["t"]["s"]
    assert cell["tau"] == pytest.approx(PARTIAL) and cell["corpora"] == ["one"]
    assert pooled["tau_with_length"]["s"]["tau"] == pytest.approx((2 / 3 + 1.0) / 2)
    assert pooled["tau_with_length"]["s"]["corpora"] == ["one", "two"]
    alone = pooled_passage_length({"two": (block, reps)})["partial_tau_given_length"]["t"]["s"]
    assert alone["tau"] is None and alone["reason"].startswith("undefined on every corpus: two:")


def test_analyse_adds_the_passage_length_blocks_from_the_same_replicates():
    """Three chunkers of 2000, 1000, 500 characters: budget recall follows length exactly, so
    every partial tau with it is undefined; BLEU orders by length and has tau +1 with it."""
    data = entry({"a": 1.0, "b": 0.5, "c": 0.0}, {"a": 3, "b": 2, "c": 1}, {"a": 0, "b": 1, "c": 2})
    report = {"corpora": {"one": data}}
    analyse(report, ["a", "b", "c"], {"paper": {}}, n_resamples=20, seed=1)
    block = report["corpora"]["one"]["passage_length"]
    assert block["mean_chars"] == {"a": 2000.0, "b": 1000.0, "c": 500.0}
    assert block["tau_with_length"]["bleu"] == {"tau": 1.0, "low": 1.0, "high": 1.0}
    assert block["tau_with_length"]["size_compliance"]["tau"] == pytest.approx(-1.0)
    assert block["targets_with_length"]["budget_recall"]["tau"] == pytest.approx(1.0)
    cell = block["partial_tau_given_length"]["budget_recall"]["hope[paper]"]
    assert cell["tau"] is None
    assert cell["reason"].startswith("the score and the labelled target order the chunkers")
    pooled = report["pooled_passage_length"]
    assert pooled["tau_with_length"]["hope[paper]"]["corpora"] == ["one"]
    assert pooled["partial_tau_given_length"]["recall"]["bleu"]["tau"] is None
