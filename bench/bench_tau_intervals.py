"""Do the τ intervals of the labelled benchmark cover the true τ? The percentile interval
against a bias-corrected one, by simulation.

The labelled benchmark (``hope.labelled.convergent``) gives each Kendall τ between a label-free
score and a labelled target, across the chunkers of a corpus, a percentile bootstrap interval
(``hope.analysis.stats.percentile_ci``): in each replicate the questions are resampled (one draw
shared by every chunker) and the label-free score's items within each chunking. Each replicate
re-draws both columns, which pulls its τ toward 0, so a τ far from 0 can sit at one end of its
interval. The textbook remedy is the bias-corrected percentile interval (BC: the BCa interval of
Efron and Tibshirani 1993, ch. 14, without acceleration; ``bias_corrected_interval`` here).
Which of the two covers the true τ is measured on data whose true τ is known, built like the
benchmark's:

- 7 chunkers; the labelled target's true means 0, 1, ..., 6 (a gap of 1 between neighbours);
  the score's true means the same values in an order whose τ with them is the cell's true τ;
- per chunker, ``--questions`` labelled values (true mean plus normal noise) and ``--items``
  score items (likewise), the noise set so that a chunker's mean has the cell's standard error
  in units of the gap (``se_ratio``). A question effect shared by every chunker is left out: it
  moves every chunker's mean alike and no τ;
- ``--resamples`` bootstrap replicates drawn as the benchmark draws them, and both intervals at
  95 %;
- a second family of cells with the target known exactly (no question noise), as for the τ of a
  score with the mean passage length (``hope.labelled.passage_length``).

Per cell (true τ x se_ratio), over ``--repetitions`` seeded data sets: each interval's coverage
of the true τ (with its Wilson interval, and its spread over ``--blocks`` blocks of the
repetitions), where the misses fall (true τ above or below the interval), the share of intervals
that miss their own estimate, the median width, and the median and mean estimate (how far noise
pulls τ toward 0). Writes bench/results/tau_intervals.json (``make bench-tau-intervals``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from statistics import NormalDist

import numpy as np

import harness
from harness import REPO, spread
from hope.analysis.stats import percentile_ci, wilson_ci

CHUNKERS = 7
CONFIDENCE = 0.95
METHODS = {
    "percentile": "hope.analysis.stats.percentile_ci (the labelled benchmark's)",
    "bias_corrected": "bias_corrected_interval (BC, this script's)",
}


def bias_corrected_interval(
    point: float, replicates: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Bias-corrected percentile interval of the statistic ``point`` from its bootstrap
    ``replicates`` (the finite ones); NaN, NaN when the point or every replicate is undefined.

    z0 is the normal quantile of the share of replicates below the point, ties counted half (τ
    across 7 chunkers takes few values), the share clipped to half a replicate from 0 and 1 so
    that z0 stays finite; the percentiles move to Φ(2 z0 + z_{α/2}) and Φ(2 z0 + z_{1−α/2}).
    With z0 = 0 it is the percentile interval.
    """
    values = np.asarray(replicates, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0 or not math.isfinite(point):
        return math.nan, math.nan
    n = finite.size
    below = float(np.sum(finite < point)) + 0.5 * float(np.sum(finite == point))
    normal = NormalDist()
    z0 = normal.inv_cdf(min(max(below / n, 0.5 / n), 1 - 0.5 / n))
    alpha = (1.0 - confidence) / 2.0
    low_q = normal.cdf(2 * z0 + normal.inv_cdf(alpha))
    high_q = normal.cdf(2 * z0 + normal.inv_cdf(1 - alpha))
    low, high = np.percentile(finite, [100 * low_q, 100 * high_q])
    return float(low), float(high)


def kendall_tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row of ``x`` with the same row of ``y`` (rows x chunkers), as
    ``scipy.stats.kendalltau`` gives it; NaN where a row is constant."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    first, second = np.triu_indices(x.shape[1], 1)
    dx = np.sign(x[:, second] - x[:, first])
    dy = np.sign(y[:, second] - y[:, first])
    pairs = len(first)
    untied = (pairs - (dx == 0).sum(axis=1)) * (pairs - (dy == 0).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, (dx * dy).sum(axis=1) / np.sqrt(untied), np.nan)


def order_with_tau(target: float, n: int = CHUNKERS) -> tuple[int, ...]:
    """The first permutation of range(n), in lexicographic order, whose τ with range(n) is
    ``target`` (to within a rounding error)."""
    base = np.arange(n, dtype=float)
    for perm in itertools.permutations(range(n)):
        if abs(kendall_tau_b_rows(np.array(perm, dtype=float), base)[0] - target) < 1e-9:
            return perm
    raise SystemExit(f"no order of {n} chunkers has tau {target}")


def one_data_set(
    rng: np.random.Generator,
    score_means: np.ndarray,
    target_means: np.ndarray,
    se_ratio: float,
    n_questions: int,
    n_items: int,
    n_resamples: int,
    noisy_target: bool = True,
) -> tuple[float, np.ndarray]:
    """The estimate and its bootstrap replicates for one simulated corpus; without
    ``noisy_target`` the target is known exactly (as a chunking's mean passage length is)."""
    k = len(target_means)
    target_se = se_ratio if noisy_target else 0.0
    questions = target_means[:, None] + rng.normal(
        0, target_se * math.sqrt(n_questions), (k, n_questions)
    )
    items = score_means[:, None] + rng.normal(0, se_ratio * math.sqrt(n_items), (k, n_items))
    point = float(kendall_tau_b_rows(items.mean(axis=1), questions.mean(axis=1))[0])
    # As the benchmark draws them: one draw of the questions for every chunker, the items within
    # each chunking.
    question_draw = rng.integers(0, n_questions, size=(n_resamples, n_questions))
    target_reps = questions[:, question_draw].mean(axis=2).T  # resamples x chunkers
    item_draw = rng.integers(0, n_items, size=(n_resamples, k, n_items))
    score_reps = np.take_along_axis(
        np.broadcast_to(items, (n_resamples, k, n_items)), item_draw, axis=2
    ).mean(axis=2)
    return point, kendall_tau_b_rows(score_reps, target_reps)


def measure_cell(
    true_tau: float, se_ratio: float, noisy_target: bool, args: argparse.Namespace, seed: int
) -> dict[str, object]:
    """Coverage, misses of the own estimate, width and estimate over the repetitions."""
    target_means = np.arange(CHUNKERS, dtype=float)
    score_means = np.array(order_with_tau(true_tau), dtype=float)
    rng = np.random.default_rng(seed)
    hits = {m: [] for m in METHODS}
    above = {m: 0 for m in METHODS}
    misses_point = {m: 0 for m in METHODS}
    widths = {m: [] for m in METHODS}
    points = []
    for _ in range(args.repetitions):
        point, reps = one_data_set(
            rng,
            score_means,
            target_means,
            se_ratio,
            args.questions,
            args.items,
            args.resamples,
            noisy_target,
        )
        points.append(point)
        intervals = {
            "percentile": percentile_ci(reps, CONFIDENCE),
            "bias_corrected": bias_corrected_interval(point, reps, CONFIDENCE),
        }
        for method, (low, high) in intervals.items():
            hits[method].append(low - 1e-12 <= true_tau <= high + 1e-12)
            above[method] += true_tau > high + 1e-12
            misses_point[method] += not (low - 1e-12 <= point <= high + 1e-12)
            widths[method].append(high - low)
    out: dict[str, object] = {
        "true_tau": true_tau,
        "se_ratio": se_ratio,
        "target": "noisy (labelled questions)" if noisy_target else "exact (as passage length)",
        "median_estimate": float(np.median(points)),
        "mean_estimate": float(np.mean(points)),
    }
    blocks = np.array_split(np.arange(args.repetitions), args.blocks)
    for method in METHODS:
        covered = np.array(hits[method])
        low, high = wilson_ci(int(covered.sum()), len(covered), CONFIDENCE)
        out[method] = {
            "coverage": float(covered.mean()),
            "coverage_wilson_95": [low, high],
            "coverage_by_block": spread([covered[b].mean() for b in blocks]),
            "true_tau_above_interval": above[method] / args.repetitions,
            "true_tau_below_interval": (len(covered) - int(covered.sum()) - above[method])
            / args.repetitions,
            "misses_own_estimate": misses_point[method] / args.repetitions,
            "median_width": float(np.median(widths[method])),
        }
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--true-taus",
        default="0.142857,0.428571,0.714286",
        help="true τ of the cells (each k/21 for 7 chunkers)",
    )
    parser.add_argument(
        "--se-ratios",
        default="0.25,0.5,1.0,2.0,4.0",
        help="a chunker mean's standard error in units of the gap between means",
    )
    parser.add_argument(
        "--questions", type=int, default=56, help="labelled questions (chatlogs: 56)"
    )
    parser.add_argument("--items", type=int, default=16, help="score items per chunking")
    parser.add_argument("--resamples", type=int, default=1000, help="as the benchmark")
    parser.add_argument("--repetitions", type=int, default=400, help="data sets per cell")
    parser.add_argument("--blocks", type=int, default=5, help="blocks for the spread of coverage")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(REPO / "bench/results/tau_intervals.json"))
    args = parser.parse_args(argv)
    if args.repetitions < args.blocks or args.blocks < harness.MIN_RUNS:
        parser.error(f"--blocks must be at least {harness.MIN_RUNS} and at most --repetitions")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    bench_run = harness.start(None if argv is None else [__file__, *argv])
    started = time.perf_counter()
    # Snap each true τ to the value 7 chunkers can take (k/21), so that coverage is exact.
    taus = [round(round(float(t) * 21) / 21, 12) for t in args.true_taus.split(",")]
    ratios = [float(r) for r in args.se_ratios.split(",")]
    cells = []
    # Both columns noisy (a score against a labelled target), and the target exact (a score
    # against the mean passage length, as in hope.labelled.passage_length).
    grid = itertools.product((True, False), taus, ratios)
    for i, (noisy, tau, ratio) in enumerate(grid):
        cells.append(measure_cell(tau, ratio, noisy, args, args.seed + i))
        covered = {m: f"{cells[-1][m]['coverage']:.3f}" for m in METHODS}
        side = "both noisy" if noisy else "target exact"
        print(f"{side}, true tau {tau:+.3f}, se ratio {ratio}: coverage {covered}", flush=True)
    report = {
        "benchmark": "tau_intervals",
        "settings": {
            "chunkers": CHUNKERS,
            "questions": args.questions,
            "items": args.items,
            "resamples": args.resamples,
            "repetitions": args.repetitions,
            "blocks": args.blocks,
            "seed": args.seed,
            "confidence": CONFIDENCE,
            "methods": METHODS,
            "model": "true target means 0..6, score means in an order with the true tau; "
            "normal noise per question and per item sized to se_ratio; questions resampled "
            "once for every chunker, items within each chunking",
        },
        "cells": cells,
        "wall_time_s": round(time.perf_counter() - started, 1),
    }
    record = bench_run.write_record(args.output, report)
    print(json.dumps(record["cells"], indent=1)[:2000])


if __name__ == "__main__":
    main()
