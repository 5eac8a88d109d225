"""Convergent validity: does a label-free score order chunkers as labelled retrieval does?

Per corpus: Kendall τ between each label-free score (BLEU, the cheap baselines, HOPE and its
sub-metrics per profile) and each labelled target (budget recall, recall@k, IoU@k) across the
chunkers, with a bootstrap interval, and pairwise agreement over the chunker pairs whose labelled
difference is significant (paired bootstrap over questions). Pooled: the mean of the per-corpus τ,
replicate by replicate.

What the τ interval resamples, in each replicate: the corpus' questions (with replacement, the
same draw for every chunker) for the labelled side; for HOPE, with replacement within each
chunking, its focus passages' concept-unity and semantic-independence scores and its
information-preservation segments, recombined with the profile's aggregation; for the per-passage
baselines (size compliance, cohesion, coherence) the passages. BLEU and the passage count are
fixed (no items to resample).

From the same replicates, ``hope.labelled.passage_length``: the τ of every score with the mean
passage length and its partial τ with each target given that length (what it tracks beyond size).

The input is a corpus entry of :mod:`hope.labelled.benchmark` (its private ``_per_question`` and
``_baseline_items`` arrays); pure functions, no I/O.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hope.baselines import CARDS
from hope.core.metrics import equations
from hope.labelled.agreement import all_pairs, kendall_tau, pairwise_agreement, percentile_interval
from hope.labelled.bootstrap import paired_difference, resample_indices
from hope.labelled.passage_length import corpus_passage_length, pooled_passage_length

TARGETS = ("budget_recall", "recall", "iou")
HOPE_METRICS = ("hope", "concept_unity", "semantic_independence", "information_preservation")
MIN_CHUNKERS = 3


def finite_or_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def resampled_hope(record: dict[str, Any], rng: np.random.Generator, aggregation: dict) -> float:
    """HOPE recomputed from resampled focus passages and segments (the profile's aggregation)."""

    def draw(values: list) -> list:
        if not values:
            return []
        return [values[i] for i in rng.integers(0, len(values), size=len(values))]

    items = record["items"]
    drop_zero = aggregation.get("drop_zero_passage_scores", False)
    con, _ = equations.corpus_mean(draw(items["concept_unity"]), drop_zero=drop_zero)
    sem, _ = equations.corpus_mean(draw(items["semantic_independence"]), drop_zero=drop_zero)
    correct = draw(items["information_preservation"])
    inf = equations.information_preservation(correct) if correct else math.nan
    return equations.hope_score(
        con,
        sem,
        inf,
        weights=tuple(aggregation.get("hope_weights", (1.0, 1.0, 1.0))),
        zero_as_missing=aggregation.get("hope_zero_as_missing", False),
    )


def resampled_sub_metric(record: dict[str, Any], name: str, rng: np.random.Generator) -> float:
    values = record["items"][name]
    if not values:
        return math.nan
    drawn = [values[i] for i in rng.integers(0, len(values), size=len(values))]
    if name == "information_preservation":
        return float(np.mean(drawn))
    finite = [v for v in drawn if v is not None and math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


def label_free_scores(
    corpus: dict[str, Any], chunkers: list[str], profiles: dict[str, dict]
) -> dict[str, dict[str, Any]]:
    """``{score name: {"point": [per chunker], "replicate": fn(rng, chunker index) -> float}}``."""
    scores: dict[str, dict[str, Any]] = {}
    rows = corpus["chunkers"]
    scores["bleu"] = {"point": [rows[c]["bleu"] for c in chunkers], "replicate": None}
    for name in CARDS:
        per_passage = [corpus["_baseline_items"][c].get(name) for c in chunkers]

        def replicate(rng, i, per_passage=per_passage, name=name):
            values = per_passage[i]
            if values is None:
                return rows[chunkers[i]]["baselines"][name]
            drawn = np.asarray(values, dtype=float)[rng.integers(0, len(values), len(values))]
            finite = drawn[np.isfinite(drawn)]
            return float(finite.mean()) if finite.size else math.nan

        scores[name] = {
            "point": [rows[c]["baselines"][name] for c in chunkers],
            "replicate": replicate if per_passage[0] is not None else None,
        }
    for profile, aggregation in profiles.items():
        records = [rows[c].get("hope", {}).get(profile) for c in chunkers]
        if not any(r and r.get("status") == "ok" for r in records):
            continue
        for metric in HOPE_METRICS:

            def replicate(rng, i, records=records, metric=metric, aggregation=aggregation):
                record = records[i]
                if not record or record.get("status") != "ok":
                    return math.nan
                if metric == "hope":
                    return resampled_hope(record, rng, aggregation)
                return resampled_sub_metric(record, metric, rng)

            point = [(r.get(metric) if r and r.get("status") == "ok" else None) for r in records]
            scores[f"{metric}[{profile}]"] = {
                "point": [math.nan if v is None else v for v in point],
                "replicate": replicate,
            }
    return scores


@dataclass
class Draws:
    """One corpus' bootstrap replicates, shared by the convergent τ and the passage-length
    analysis (``hope.labelled.passage_length``), so that their intervals come from one draw.
    Per chunker in the order analysed; replicates are (resamples x chunkers)."""

    scores: dict[str, list[float]] = field(default_factory=dict)
    score_reps: dict[str, np.ndarray] = field(default_factory=dict)
    labelled: dict[str, list[float]] = field(default_factory=dict)
    labelled_reps: dict[str, np.ndarray] = field(default_factory=dict)
    # "<target>|<score>": the convergent τ (NaN where undefined) and its replicates.
    tau: dict[str, float] = field(default_factory=dict)
    tau_reps: dict[str, np.ndarray] = field(default_factory=dict)


def corpus_validity(
    corpus: dict[str, Any],
    chunkers: list[str],
    profiles: dict[str, dict],
    n_resamples: int,
    seed: int,
) -> tuple[dict[str, Any], Draws]:
    """τ and pairwise agreement per (labelled target, label-free score), and the replicates
    (for pooling and the passage-length analysis)."""
    per_q = {c: corpus["_per_question"][c] for c in chunkers}
    n_questions = len(next(iter(per_q.values()))["recall"])
    question_draws = resample_indices(n_questions, n_resamples, seed)
    rng = np.random.default_rng(seed + 1)
    scores = label_free_scores(corpus, chunkers, profiles)
    # One replicate of every label-free score per bootstrap draw, shared by all targets.
    score_reps = {
        name: np.array(
            [
                [
                    spec["replicate"](rng, i) if spec["replicate"] else spec["point"][i]
                    for i in range(len(chunkers))
                ]
                for _ in range(n_resamples)
            ]
        )
        for name, spec in scores.items()
    }
    draws = Draws(
        scores={name: list(spec["point"]) for name, spec in scores.items()},
        score_reps=score_reps,
    )
    out: dict[str, Any] = {}
    for target in TARGETS:
        values = np.array([per_q[c][target] for c in chunkers], dtype=float)  # chunkers x questions
        point_labelled = np.nanmean(values, axis=1)
        labelled_reps = np.nanmean(values[:, question_draws], axis=2).T  # resamples x chunkers
        draws.labelled[target] = point_labelled.tolist()
        draws.labelled_reps[target] = labelled_reps
        significant = []
        for i, j in all_pairs(len(chunkers)):
            diff = paired_difference(values[i], values[j], n_resamples=n_resamples, seed=seed)
            if diff["significant"]:
                significant.append((i, j))
        cells = {}
        for name, spec in scores.items():
            point = spec["point"]
            tau = kendall_tau(point, point_labelled)
            reps = np.array(
                [kendall_tau(score_reps[name][b], labelled_reps[b]) for b in range(n_resamples)]
            )
            draws.tau[f"{target}|{name}"] = tau
            draws.tau_reps[f"{target}|{name}"] = reps
            low, high = percentile_interval(reps)
            cells[name] = {
                "tau": finite_or_none(tau),
                "low": finite_or_none(low),
                "high": finite_or_none(high),
                **{
                    k: finite_or_none(v)
                    for k, v in pairwise_agreement(point, point_labelled, significant).items()
                },
            }
        out[target] = {
            "labelled_means": dict(zip(chunkers, point_labelled.tolist(), strict=True)),
            "significant_pairs": len(significant),
            "all_pairs": len(all_pairs(len(chunkers))),
            "scores": cells,
        }
    return out, draws


def analyse(
    report: dict[str, Any],
    names: list[str],
    aggregations: dict[str, dict],
    n_resamples: int,
    seed: int,
) -> None:
    """Per-corpus validity (``report["corpora"][c]["validity"]``) and the pooled τ
    (``report["pooled"]``): the mean over the corpora where the score exists (HOPE may be missing
    on a corpus a run did not reach), replicate by replicate. With them, from the same replicates,
    what each score tracks beyond passage length (``hope.labelled.passage_length``): per corpus
    ``report["corpora"][c]["passage_length"]``, pooled ``report["pooled_passage_length"]``."""
    pooled: dict[str, dict[str, Any]] = {}
    by_length: dict[str, tuple[dict[str, Any], dict[str, np.ndarray]]] = {}
    for corpus_name, entry in report["corpora"].items():
        evaluable = [n for n in names if n in entry["_per_question"]]
        if len(evaluable) < MIN_CHUNKERS:
            entry["validity"] = {"skipped": f"only {len(evaluable)} evaluable chunkers"}
            entry.pop("passage_length", None)
            continue
        entry["validity"], draws = corpus_validity(
            entry, evaluable, aggregations, n_resamples, seed
        )
        lengths = [entry["chunkers"][n]["mean_chars"] for n in evaluable]
        length_block, length_reps = corpus_passage_length(
            lengths,
            draws.scores,
            draws.score_reps,
            draws.labelled,
            draws.labelled_reps,
            draws.tau,
            draws.tau_reps,
        )
        entry["passage_length"] = {"mean_chars": dict(zip(evaluable, lengths, strict=True))}
        entry["passage_length"].update(length_block)
        by_length[corpus_name] = (length_block, length_reps)
        for target, block in entry["validity"].items():
            for name, cell in block["scores"].items():
                slot = pooled.setdefault(
                    f"{target}|{name}", {"points": [], "replicates": [], "corpora": []}
                )
                slot["points"].append(math.nan if cell["tau"] is None else cell["tau"])
                slot["replicates"].append(draws.tau_reps[f"{target}|{name}"])
                slot["corpora"].append(corpus_name)
    report["pooled_passage_length"] = pooled_passage_length(by_length)
    summary: dict[str, Any] = {}
    for key, slot in pooled.items():
        target, name = key.split("|", 1)
        points = np.asarray(slot["points"], dtype=float)
        stacked = np.vstack(slot["replicates"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN replicate has no mean
            reps = np.nanmean(stacked, axis=0)
        low, high = percentile_interval(reps)
        summary.setdefault(target, {})[name] = {
            "tau": float(np.nanmean(points)) if np.isfinite(points).any() else None,
            "low": finite_or_none(low),
            "high": finite_or_none(high),
            "corpora": [c for c, v in zip(slot["corpora"], points, strict=True) if np.isfinite(v)],
        }
    report["pooled"] = summary


def strip_private(report: Any) -> Any:
    """The report without the in-memory arrays (keys starting with an underscore), NaN as None."""
    if isinstance(report, dict):
        return {k: strip_private(v) for k, v in report.items() if not k.startswith("_")}
    if isinstance(report, list):
        return [strip_private(v) for v in report]
    if isinstance(report, float) and not math.isfinite(report):
        return None
    return report
