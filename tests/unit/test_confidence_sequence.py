"""The anytime-valid interval behind ``hope.sampling.mode: sequential``: a value by hand, its
level checked by simulation, exactness once every item is drawn."""

import itertools
import math

import numpy as np
import pytest

from hope.core.metrics.confidence_sequence import weighted_interval, wor_confidence_sequence


def test_one_draw_by_hand():
    # N = 4, one draw y = 1, alpha = 0.5. Bet b_1 = sqrt(2 log 4 / (1/4 * 1 * log 2)) = 4, so the
    # stakes are capped: l+ = 0.75 / m, l- = 0.75 / (1 - m) for the candidate mean m (i = 1:
    # mu_1(m) = m). Capital (K+ + K-) / 2 with K+ = 1 + 0.75 (1 - m) / m, K- = 1 - 0.75 (1 - m) /
    # (1 - m) = 0.25; K < 1 / alpha = 2 <=> 1 + 0.75 (1 - m) / m < 3.75 <=> m > 0.75 / 3.5 = 3/14.
    # The draws force m >= 1/4 > 3/14, so the interval is [1/4, 1] exactly.
    [(low, high)] = wor_confidence_sequence([1.0], 4, 0.5)
    assert (low, high) == (pytest.approx(0.25), 1.0)
    # With N = 100 the forced bound is 1/100 and the bet's bound 3/14 shows (one grid step wider).
    [(low, high)] = wor_confidence_sequence([1.0], 100, 0.5)
    assert 3 / 14 - 1 / 4000 <= low <= 3 / 14 and high == 1.0


def test_every_item_drawn_gives_the_population_mean():
    values = [0.2, 0.9, 0.4, 0.4, 0.7]
    low, high = wor_confidence_sequence(values, 5, 0.05)[-1]
    assert low == pytest.approx(np.mean(values)) and high == pytest.approx(np.mean(values))


def test_intervals_nest_and_respect_the_stated_range():
    rng = np.random.default_rng(0)
    values = rng.uniform(-1, 1, size=30).tolist()
    intervals = wor_confidence_sequence(values, 60, 0.1, low=-1, high=1)
    for (lo1, hi1), (lo2, hi2) in itertools.pairwise(intervals):
        assert lo1 <= lo2 <= hi2 <= hi1
    assert intervals[0][0] >= -1 and intervals[0][1] <= 1


@pytest.mark.parametrize("kind", ["beta", "bernoulli", "narrow"])
def test_misses_the_mean_at_some_draw_in_at_most_alpha_of_sequences(kind):
    # Time-uniform level: the share of random orders in which the interval misses the
    # population mean at ANY draw stays below alpha (0.1; 400 sequences, so a valid sequence
    # exceeds 0.16 with negligible probability, an invalid one, e.g. a fixed-n interval looked at
    # every draw, does not stay under it).
    rng = np.random.default_rng(7)
    misses = 0
    for _ in range(400):
        n = int(rng.integers(5, 80))
        if kind == "beta":
            population = rng.beta(2, 3, size=n)
        elif kind == "bernoulli":
            population = (rng.random(n) < rng.random()).astype(float)
        else:
            population = np.clip(0.6 + 0.05 * rng.standard_normal(n), 0, 1)
        mean = float(population.mean())
        intervals = wor_confidence_sequence(rng.permutation(population).tolist(), n, 0.1)
        misses += any(not lo - 1e-9 <= mean <= hi + 1e-9 for lo, hi in intervals)
    assert misses / 400 <= 0.16


def test_narrow_scores_give_a_narrow_interval():
    # 20 of 200 scores with a spread of 0.05 around 0.6: the betting sequence adapts to the
    # spread. Hoeffding's fixed-n interval alone would be sqrt(log(2 / 0.05) / 40) = ±0.30 here;
    # the sequence, valid at every draw at once, measured ±0.10.
    rng = np.random.default_rng(3)
    population = np.clip(0.6 + 0.05 * rng.standard_normal(200), 0, 1)
    low, high = wor_confidence_sequence(population[:20].tolist(), 200, 0.05)[-1]
    assert (high - low) / 2 < 0.12


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="outside the stated range"):
        wor_confidence_sequence([1.5], 3, 0.1)
    with pytest.raises(ValueError, match="draws from a population of 1"):
        wor_confidence_sequence([0.1, 0.2], 1, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        wor_confidence_sequence([0.1], 3, 0.0)


def test_hopes_interval_is_the_weighted_mean_of_the_bounds():
    low, high = weighted_interval([(0.2, 0.4), (0.5, 0.9), (0.0, 1.0)], (1.0, 1.0, 2.0))
    assert low == pytest.approx((0.2 + 0.5 + 0.0) / 4)
    assert high == pytest.approx((0.4 + 0.9 + 2.0) / 4)
    assert not math.isnan(low)
