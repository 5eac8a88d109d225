"""What a label-free score tracks beyond passage length (issue #34).

HOPE and several baselines may rank chunkings by little more than their passage size, which some
labelled targets reward too (recall at a fixed k favours long passages, a character budget does
not). Per corpus, across the chunkers:

* Kendall τ-b of every label-free score, and of every labelled target, with the chunking's mean
  passage length in characters;
* the partial Kendall τ of each label-free score x with each labelled target y given the mean
  passage length z, ``τ_xy.z = (τ_xy − τ_xz τ_yz) / sqrt((1 − τ_xz²)(1 − τ_yz²))`` (Kendall's
  formula, here on τ-b), undefined where ``|τ_xz| = 1`` or ``|τ_yz| = 1`` (one of the two is a
  function of length: nothing is left once length is held fixed). The three τ are taken over
  the chunkers the score has a value for (HOPE is undefined for a chunking whose only focus
  passage failed), so τ_yz may differ from score to score.

Intervals are percentile intervals over the same bootstrap replicates as the convergent τ
(``hope.labelled.convergent``): in replicate b, τ_xy is that replicate's convergent τ, τ_xz the τ
of the score's replicate with length, τ_yz the τ of the labelled target's replicate with length.
The mean passage length is a property of the chunking and is not resampled. A replicate where the
partial τ is undefined is left out of the interval, and counted. Pooled: the mean over the corpora
where the point value is defined, replicate by replicate, as for the convergent τ.

Pure functions, no I/O.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hope.labelled.agreement import kendall_tau, percentile_interval

# |τ| this close to 1 counts as 1: scipy's τ-b of a perfect order can miss 1 by a rounding error.
DEGENERATE_TOLERANCE = 1e-12


def partial_tau(tau_xy: float, tau_xz: float, tau_yz: float) -> tuple[float, str | None]:
    """Partial Kendall τ of x and y given z from the three pairwise τ, or (NaN, why undefined)."""
    if not all(math.isfinite(t) for t in (tau_xy, tau_xz, tau_yz)):
        return math.nan, "a pairwise tau is undefined (a constant or missing column)"
    exact = [
        which
        for which, tau in (("score", tau_xz), ("labelled target", tau_yz))
        if abs(tau) >= 1 - DEGENERATE_TOLERANCE
    ]
    if exact:
        return math.nan, (
            f"the {' and the '.join(exact)} order{'s' if len(exact) == 1 else ''} the chunkers "
            "exactly by passage length (|tau| = 1)"
        )
    value = (tau_xy - tau_xz * tau_yz) / math.sqrt((1 - tau_xz**2) * (1 - tau_yz**2))
    return value, None


def partial_tau_replicates(
    tau_xy: np.ndarray, tau_xz: np.ndarray, tau_yz: np.ndarray
) -> np.ndarray:
    """:func:`partial_tau` replicate by replicate; NaN where undefined."""
    triples = zip(tau_xy, tau_xz, tau_yz, strict=True)
    return np.array([partial_tau(float(a), float(b), float(c))[0] for a, b, c in triples])


def tau_with_length(
    replicates: np.ndarray, point: Sequence[float], lengths: Sequence[float]
) -> tuple[float, np.ndarray]:
    """τ of a per-chunker column with ``lengths``, and of each replicate row with them."""
    return kendall_tau(point, lengths), np.array([kendall_tau(row, lengths) for row in replicates])


def where_scored(
    score: Sequence[float], target: Sequence[float], lengths: Sequence[float], full: float
) -> float:
    """τ of the target with length over the chunkers where the score is finite (``full``, the τ
    over every chunker, where it is finite everywhere), so that τ_yz is taken over the chunkers
    that τ_xy and τ_xz are."""
    keep = np.isfinite(np.asarray(score, dtype=float))
    if keep.all():
        return full
    return kendall_tau(
        np.asarray(target, dtype=float)[keep], np.asarray(lengths, dtype=float)[keep]
    )


def interval_cell(point: float, replicates: np.ndarray) -> dict[str, Any]:
    low, high = percentile_interval(replicates)
    finite = math.isfinite(point)
    return {
        "tau": point if finite else None,
        "low": low if finite and math.isfinite(low) else None,
        "high": high if finite and math.isfinite(high) else None,
    }


def corpus_passage_length(
    lengths: Sequence[float],
    scores: Mapping[str, Sequence[float]],
    score_reps: Mapping[str, np.ndarray],
    labelled: Mapping[str, Sequence[float]],
    labelled_reps: Mapping[str, np.ndarray],
    tau_xy: Mapping[str, float],
    tau_xy_reps: Mapping[str, np.ndarray],
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One corpus' block and its replicates (``"length|<score>"``, ``"<target>|<score>"`` and
    ``"length|target:<target>"`` -> resamples), for pooling.

    ``lengths``, ``scores[name]`` and ``labelled[target]`` are per chunker, in one order;
    ``score_reps[name]`` and ``labelled_reps[target]`` are (resamples x chunkers);
    ``tau_xy["<target>|<score>"]`` and ``tau_xy_reps`` are the convergent τ and its replicates.
    """
    block: dict[str, Any] = {"tau_with_length": {}, "targets_with_length": {}}
    replicates: dict[str, np.ndarray] = {}
    score_tau: dict[str, tuple[float, np.ndarray]] = {}
    for name, point in scores.items():
        score_tau[name] = tau_with_length(score_reps[name], point, lengths)
        block["tau_with_length"][name] = interval_cell(*score_tau[name])
        replicates[f"length|{name}"] = score_tau[name][1]
    partial: dict[str, dict[str, Any]] = {}
    for target, point in labelled.items():
        t_yz, t_yz_reps = tau_with_length(labelled_reps[target], point, lengths)
        block["targets_with_length"][target] = interval_cell(t_yz, t_yz_reps)
        replicates[f"length|target:{target}"] = t_yz_reps
        cells = {}
        for name in scores:
            key = f"{target}|{name}"
            t_xz, t_xz_reps = score_tau[name]
            # The three τ over one set of chunkers: those the score has a value for.
            t_yz_x = where_scored(scores[name], point, lengths, t_yz)
            t_yz_x_reps = np.array(
                [
                    where_scored(row, target_row, lengths, full)
                    for row, target_row, full in zip(
                        score_reps[name], labelled_reps[target], t_yz_reps, strict=True
                    )
                ]
            )
            value, reason = partial_tau(tau_xy[key], t_xz, t_yz_x)
            reps = partial_tau_replicates(tau_xy_reps[key], t_xz_reps, t_yz_x_reps)
            cell = interval_cell(value, reps)
            cell["undefined_replicates"] = int(np.isnan(reps).sum())
            if reason:
                cell["reason"] = reason
                reps = np.full_like(reps, math.nan)  # not pooled: the point is undefined
            replicates[key] = reps
            cells[name] = cell
        partial[target] = cells
    block["partial_tau_given_length"] = partial
    return block, replicates


def pooled_passage_length(corpora: Mapping[str, tuple[dict[str, Any], dict[str, np.ndarray]]]):
    """The mean over corpora of each τ with length and each partial τ, replicate by replicate,
    over the corpora where the point is defined (listed in ``corpora``)."""
    out: dict[str, Any] = {"tau_with_length": {}, "targets_with_length": {}}
    partial: dict[str, dict[str, Any]] = {}
    keys = list(dict.fromkeys(k for _, reps in corpora.values() for k in reps))
    for key in keys:
        points, stacks, names, reasons = [], [], [], []
        for corpus, (block, reps) in corpora.items():
            if key not in reps:
                continue
            cell = lookup(block, key)
            if cell["tau"] is None:
                if cell.get("reason"):
                    reasons.append(f"{corpus}: {cell['reason']}")
                continue
            points.append(cell["tau"])
            stacks.append(reps[key])
            names.append(corpus)
        if points:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN replicate
                pooled_reps = np.nanmean(np.vstack(stacks), axis=0)
            cell = {**interval_cell(float(np.mean(points)), pooled_reps), "corpora": names}
        else:
            cell = {"tau": None, "low": None, "high": None, "corpora": []}
            if reasons:
                cell["reason"] = "undefined on every corpus: " + "; ".join(reasons)
        first, name = key.split("|", 1)
        if first == "length" and name.startswith("target:"):
            out["targets_with_length"][name.removeprefix("target:")] = cell
        elif first == "length":
            out["tau_with_length"][name] = cell
        else:
            partial.setdefault(first, {})[name] = cell
    out["partial_tau_given_length"] = partial
    return out


def lookup(block: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A corpus block's cell for a replicate key of :func:`corpus_passage_length`."""
    first, name = key.split("|", 1)
    if first == "length" and name.startswith("target:"):
        return block["targets_with_length"][name.removeprefix("target:")]
    if first == "length":
        return block["tau_with_length"][name]
    return block["partial_tau_given_length"][first][name]
