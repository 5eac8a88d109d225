"""Anytime-valid intervals for a mean estimated from items drawn without replacement.

HOPE's sub-metrics are means over a finite population: the focus passages of a chunking (concept
unity, semantic independence) and the document's segments (information preservation). The
sequential sampling of ``hope.sampling.mode: sequential`` draws those items in seeded rounds and
looks at the interval after every round. A fixed-sample interval (a t interval, a bootstrap) does
not hold its level under such looks: stopping when it happens to be narrow is optional stopping.
A *confidence sequence* holds at every round at once.

The one used here is the hedged-capital betting confidence sequence (Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting", JRSSB 2024, Theorem 3 and section 5)
in its form for sampling without replacement (Waudby-Smith & Ramdas, "Confidence sequences for
sampling without replacement", NeurIPS 2020). Why this one:

- it is valid for any population within known bounds, with no distributional assumption
  (per-passage cosines are not normal; information preservation is 0/1);
- it adapts to the items' spread: in the papers' own comparisons it is narrower than their
  predictable-plug-in empirical-Bernstein sequence, most where the spread is small, as it is
  for per-passage cosines (this project keeps no measurement of its own of that). Early on its
  width is bounded by the stakes' cap: about ``log(2 / alpha) / (t c / m)`` after ``t`` draws,
  whatever the spread, the price of assuming nothing but the range;
- it uses the finite population: once every item is drawn it is the population mean exactly, so
  the sequential run can always end where the full run would.

With ``y_i`` in [0, 1] (values rescaled from their known range), ``S_{i-1}`` the sum of the first
``i-1`` draws and ``N`` the population size, a candidate mean ``m`` predicts the next draw's mean
``mu_i(m) = (N m - S_{i-1}) / (N - i + 1)``. Two bettors stake on the draw being above or below it:

    K+_t(m) = prod_i (1 + l+_i (y_i - mu_i(m))),     K-_t(m) = prod_i (1 - l-_i (y_i - mu_i(m)))
    l+_i = min(b_i, c / mu_i(m)),   l-_i = min(b_i, c / (1 - mu_i(m))),   c = 3/4
    b_i  = sqrt(2 log(2 / alpha) / (v_{i-1} i log(1 + i)))

with the predictable variance ``v_{i-1} = (1/4 + sum_{j<i} (y_j - m_j)^2) / i`` and
``m_j = (1/2 + S_j) / (j + 1)``. Under the true mean both are nonnegative martingales, so by
Ville's inequality their average exceeds ``1 / alpha`` at any time with probability at most
``alpha``; the interval is every ``m`` on a grid of 1/4000 steps where it does not, widened to the
next grid point on each side, intersected with the earlier rounds' intervals and with what the
draws alone force (``[S_t / N, (S_t + N - t) / N]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# The bets' cap as a share of the capital at risk: Waudby-Smith & Ramdas use 1/2 or 3/4.
MAX_STAKE = 0.75
GRID_STEPS = 4000


def wor_confidence_sequence(
    values: Sequence[float],
    population: int,
    alpha: float,
    *,
    low: float = 0.0,
    high: float = 1.0,
) -> list[tuple[float, float]]:
    """The interval for the mean of a population of ``population`` items after each of the draws
    ``values`` (in draw order, without replacement), at level ``1 - alpha`` for all of them at
    once.

    ``low``/``high`` is the range every item's value is known to lie in. Returns one
    ``(lower, upper)`` per draw, each within the previous one."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not high > low:
        raise ValueError(f"the value range [{low}, {high}] is empty")
    if population < len(values):
        raise ValueError(f"{len(values)} draws from a population of {population}")
    width = high - low
    scaled = []
    for value in values:
        if not low - 1e-6 <= value <= high + 1e-6:  # float cosines can pass 1 by an ulp
            raise ValueError(f"value {value} outside the stated range [{low}, {high}]")
        scaled.append(min(1.0, max(0.0, (value - low) / width)))

    n = population
    grid = np.linspace(0.0, 1.0, GRID_STEPS + 1)
    log_up = np.zeros_like(grid)
    log_down = np.zeros_like(grid)
    possible = np.ones_like(grid, dtype=bool)
    threshold = math.log(1.0 / alpha)
    bet_scale = 2.0 * math.log(2.0 / alpha)
    drawn_sum, squares = 0.0, 0.25
    lower_run, upper_run = 0.0, 1.0
    intervals: list[tuple[float, float]] = []
    for i, y in enumerate(scaled, start=1):
        bet = math.sqrt(bet_scale / ((squares / i) * i * math.log1p(i)))
        predicted = (n * grid - drawn_sum) / (n - i + 1)
        # A candidate that predicts a mean outside [0, 1] for the remaining items is impossible.
        possible &= (predicted >= 0.0) & (predicted <= 1.0)
        mean = np.clip(predicted, 1e-12, 1.0 - 1e-12)
        up = np.minimum(bet, MAX_STAKE / mean)
        down = np.minimum(bet, MAX_STAKE / (1.0 - mean))
        log_up += np.log1p(up * (y - mean))
        log_down += np.log1p(-down * (y - mean))
        capital = np.logaddexp(log_up, log_down) - math.log(2.0)
        drawn_sum += y
        accepted = np.flatnonzero(possible & (capital < threshold))
        forced_low, forced_high = drawn_sum / n, (drawn_sum + n - i) / n
        if accepted.size:
            lower = grid[max(int(accepted[0]) - 1, 0)]
            upper = grid[min(int(accepted[-1]) + 1, GRID_STEPS)]
            lower_run = max(lower_run, lower, forced_low)
            upper_run = min(upper_run, upper, forced_high)
        else:  # every grid point rejected: only the forced bounds are left to report
            lower_run, upper_run = max(lower_run, forced_low), min(upper_run, forced_high)
        if lower_run > upper_run:  # the forced bounds are exact; the grid's edges may cross them
            lower_run, upper_run = forced_low, forced_high
        squares += (y - (0.5 + drawn_sum) / (i + 1)) ** 2
        intervals.append((float(low + width * lower_run), float(low + width * upper_run)))
    return intervals


def weighted_interval(
    intervals: Sequence[tuple[float, float]], weights: Sequence[float]
) -> tuple[float, float]:
    """The interval of a weighted mean of quantities, each within its interval (eq. 10 is
    increasing in every sub-metric, so its bounds are the weighted means of the bounds)."""
    total = float(sum(weights))
    lower = sum(w * lo for w, (lo, _) in zip(weights, intervals, strict=True)) / total
    upper = sum(w * hi for w, (_, hi) in zip(weights, intervals, strict=True)) / total
    return lower, upper


__all__ = ["MAX_STAKE", "weighted_interval", "wor_confidence_sequence"]
