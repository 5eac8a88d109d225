"""How often a perfect probe would meet the issue's tau targets on these labelled questions
(bench_probe.py --perfect-probe; issue 32).

The real questions are a sample: their ranking of the chunkers is the population's ranking plus
sampling noise. A probe that ranked the chunkers exactly as the population of such questions does
would still meet "tau >= target" only when that noise happens to be small. By the bootstrap, the
tau between the real means on a resample of the real questions and on all of them (the noise
ceiling's replicates) stands in for the tau between the population's ranking and the real
sample's; the share of replicates at or above a target is that perfect probe's chance to meet it.
It is an upper bound for any real probe, whose own questions are a sample too and add their noise.
Pair agreement is not bounded this way: a perfect probe orders every significant pair as the
population does, so it misses only the real questions' false discoveries.

How many real questions the targets would need: resampling ``scale`` times as many questions as
there are (with replacement) gives means with the sampling noise of a set that many times larger,
drawn from a population like this one; the same chances at those scales say how large a labelled
set must be before a perfect probe meets the targets as a rule rather than by luck.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hope.labelled.agreement import kendall_tau
from probe_vs_real import TARGETS

SCALES = (1, 2, 4, 8)
PERFECT_PROBE_RULE = (
    "a probe that ranks the chunkers exactly as the population of real questions does: its tau "
    "with the real questions is, by the bootstrap, the tau between the real means on a resample "
    "of the real questions and on all of them (at scale 1 the noise ceiling's replicates, the "
    "same draws; at scale s, resamples of s times as many questions, the noise of a labelled set "
    "s times as large). "
    "chance: the share of replicates whose tau meets the target (an undefined tau does not); "
    "pooled: each replicate's mean tau over corpora, as the main run pools; every_corpus_and_"
    "pooled: the share of replicate draws in which a measure's target is met on every corpus and "
    "pooled at once, and all_measures: in which every measure's is. An upper bound for a real "
    "probe, whose own questions add their sampling noise"
)


def scaled_noise_taus(
    per_question: Sequence[Sequence[float]], n_resamples: int, seed: int, scale: int = 1
) -> np.ndarray:
    """Per bootstrap replicate: tau between the chunkers' means over ``scale`` times as many
    questions drawn with replacement and their means over all the questions. At ``scale`` 1 these
    are the noise ceiling's replicates (``RealSide.noise_ceiling``: the same draws for the same
    seed)."""
    values = np.asarray(per_question, dtype=float)  # (chunkers, questions)
    means = np.nanmean(values, axis=1)
    n = values.shape[1]
    indices = np.random.default_rng(seed).integers(0, n, size=(n_resamples, scale * n))
    replicates = np.nanmean(values[:, indices], axis=2).T
    return np.array([kendall_tau(r, means) for r in replicates], dtype=float)


def share_met(taus: np.ndarray, target: float) -> np.ndarray:
    """Per replicate, whether tau meets ``target`` (False where tau is undefined)."""
    values = np.asarray(taus, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(values) & (values >= target)


def tau_counts(taus: Sequence[float]) -> dict[str, int]:
    """How many replicates gave each tau (4 decimals; "nan" for undefined), ascending: the
    replicates in a form that is small and from which every per-corpus chance follows."""
    keys = ["nan" if not np.isfinite(t) else f"{t:.4f}" for t in np.asarray(taus, dtype=float)]
    counts = Counter(keys)
    finite = sorted((k for k in counts if k != "nan"), key=float)
    return {k: counts[k] for k in finite} | ({"nan": counts["nan"]} if "nan" in counts else {})


def chance_from_counts(counts: Mapping[str, int], target: float) -> float:
    """The share of replicates at or above ``target``, from ``tau_counts``."""
    total = sum(counts.values())
    met = sum(n for key, n in counts.items() if key != "nan" and float(key) >= target)
    return met / total if total else float("nan")


def perfect_probe_odds(
    replicates: Mapping[str, Mapping[str, Sequence[float]]], measures: Mapping[str, str]
) -> dict[str, Any]:
    """``replicates[corpus][measure]``: the noise ceiling's tau per bootstrap replicate (the same
    number of replicates everywhere; replicate i of one corpus is one draw of its questions,
    shared by its measures). Per measure: the target, each corpus's chance and median tau, the
    pooled chance and the chance of meeting the target on every corpus and pooled at once; then
    the chance that every measure's target is met at once."""
    corpora = list(replicates)
    lengths = {len(replicates[c][m]) for c in corpora for m in measures}
    if len(lengths) != 1:
        raise ValueError(f"replicate counts differ between cells: {sorted(lengths)}")
    every: list[np.ndarray] = []
    by_measure: dict[str, Any] = {}
    for measure, family in measures.items():
        target = TARGETS[family]
        taus = {c: np.asarray(replicates[c][measure], dtype=float) for c in corpora}
        met = {c: share_met(taus[c], target) for c in corpora}
        with np.errstate(all="ignore"):
            pooled_taus = np.nanmean(np.stack([taus[c] for c in corpora]), axis=0)
        pooled_met = share_met(pooled_taus, target)
        all_here = np.logical_and.reduce([*met.values(), pooled_met])
        every.append(all_here)
        by_measure[measure] = {
            "tau_target": target,
            "corpora": {
                c: {
                    "chance": float(met[c].mean()),
                    "median_tau": _median(taus[c]),
                    "tau_counts": tau_counts(taus[c]),
                }
                for c in corpora
            },
            "pooled": {"chance": float(pooled_met.mean()), "median_tau": _median(pooled_taus)},
            "every_corpus_and_pooled": float(all_here.mean()),
        }
    return {
        "replicates": lengths.pop(),
        "measures": by_measure,
        "all_measures": float(np.logical_and.reduce(every).mean()),
    }


def _median(taus: np.ndarray) -> float | None:
    finite = taus[np.isfinite(taus)]
    return float(np.median(finite)) if finite.size else None
