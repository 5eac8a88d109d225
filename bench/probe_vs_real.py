"""Comparing a probe's chunker ranking with the real questions' (``bench_probe.py``, issue 32).

Per measure: the real questions' side (per-question values, means, bootstrap replicates of the
means and the significantly different pairs), Kendall tau of the probe's means against it with a
bootstrap interval and significant-pair agreement, the passage-count baseline, HOPE's tau from
the labelled record, the real questions' noise ceiling, pooling over corpora and the targets.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from hope.labelled import ChunkPassage
from hope.labelled.agreement import kendall_tau, pairwise_agreement, percentile_interval
from hope.labelled.benchmark import chunk_corpus
from hope.labelled.bootstrap import paired_difference, resample_indices
from hope.labelled.labelled_files import read_questions
from hope.probe import ProbeSettings

TARGETS = {"budget_recall": 0.8, "iou": 0.8, "recall": 0.6, "agreement": 0.9, "seconds": 120}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def compared_measures(settings: ProbeSettings) -> dict[str, str]:
    """Measure name -> its family in the targets (budget_recall, iou, recall)."""
    k = settings.k
    return {f"recall@{k}": "recall", f"iou@{k}": "iou"} | {
        f"budget_recall@{b}": "budget_recall" for b in settings.budgets
    }


def replicate_means(per_question: list[list[float]], indices: np.ndarray) -> np.ndarray:
    """``(n_resamples, n_chunkers)`` means of each chunker's values over the resampled questions."""
    values = np.asarray(per_question, dtype=float)  # (chunkers, questions)
    return np.nanmean(values[:, indices], axis=2).T


class RealSide:
    """One measure on the real questions: per-question values, means, the resampled means (one
    draw of the real questions shared by every chunker) and the significantly different pairs."""

    def __init__(self, real: dict[str, Any], names: list[str], measure: str, args: Any):
        self.per_question = [real["chunkings"][n]["per_question"][measure] for n in names]
        self.means = [float(np.nanmean(v)) for v in self.per_question]
        indices = resample_indices(len(self.per_question[0]), args.resamples, args.seed + 1)
        self.replicates = replicate_means(self.per_question, indices)
        self.significant = [
            (i, j)
            for i in range(len(names))
            for j in range(i + 1, len(names))
            if paired_difference(
                self.per_question[i],
                self.per_question[j],
                n_resamples=args.resamples,
                seed=args.seed,
            )["significant"]
        ]

    def against(self, scores: list[float], replicates: Any) -> dict[str, Any]:
        """Tau of ``scores`` with the real means, its interval from ``replicates`` (one score
        vector per real replicate, or the same one for all), and significant-pair agreement."""
        taus = np.array(
            [kendall_tau(s, r) for s, r in zip(replicates, self.replicates, strict=True)],
            dtype=float,
        )
        low, high = percentile_interval(taus[np.isfinite(taus)], 0.95)
        return {
            "tau": kendall_tau(scores, self.means),
            "low": low,
            "high": high,
            **pairwise_agreement(scores, self.means, self.significant),
            "_replicates": taus,
        }

    def noise_ceiling(self) -> dict[str, Any]:
        """How well the real questions agree with themselves: tau between the real means on each
        resample of the real questions and the real means on all of them."""
        taus = np.array([kendall_tau(r, self.means) for r in self.replicates], dtype=float)
        return ceiling_summary(taus)


def ceiling_summary(taus: np.ndarray) -> dict[str, Any]:
    finite = taus[np.isfinite(taus)]
    if finite.size == 0:
        return {"median": None, "low": None, "high": None, "_replicates": taus}
    low, high = percentile_interval(finite, 0.95)
    return {"median": float(np.median(finite)), "low": low, "high": high, "_replicates": taus}


def compare(
    probe: dict[str, Any], real: RealSide, names: list[str], measure: str, args: Any
) -> dict[str, Any]:
    """Tau (with interval) and significant-pair agreement of the probe against the real ones."""
    probe_q = [probe["chunkings"][n]["per_question"][measure] for n in names]
    probe_means = [float(np.nanmean(v)) for v in probe_q]
    probe_idx = resample_indices(len(probe_q[0]), args.resamples, args.seed)
    return real.against(probe_means, replicate_means(probe_q, probe_idx)) | {
        "probe_means": dict(zip(names, probe_means, strict=True)),
        "real_means": dict(zip(names, real.means, strict=True)),
    }


def baseline(counts: list[float], real: RealSide) -> dict[str, Any]:
    return real.against(counts, [counts] * len(real.replicates))


def hope_taus(path: Path, corpus: str, k: int) -> dict[str, Any]:
    """HOPE's tau from the labelled record (budget 2,500 and k 5 there), keyed like ours."""
    if not path.is_file():
        return {}
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get("settings", {}).get("k") != k:
        return {}
    budget = record.get("settings", {}).get("budget_chars")
    validity = record.get("corpora", {}).get(corpus, {}).get("validity", {})
    keys = {"budget_recall": f"budget_recall@{budget}", "recall": f"recall@{k}", "iou": f"iou@{k}"}
    found = {}
    for key, ours in keys.items():
        cell = validity.get(key, {}).get("scores", {}).get("hope[paper]")
        if cell is not None:
            found[ours] = {name: cell.get(name) for name in ("tau", "low", "high", "agreement")}
    return found


def pooled(cells: list[dict[str, Any]]) -> dict[str, Any]:
    finite = [c for c in cells if c["tau"] is not None and math.isfinite(c["tau"])]
    if not finite:
        return {"tau": None}
    stacked = np.nanmean(np.stack([c["_replicates"] for c in finite]), axis=0)
    low, high = percentile_interval(stacked[np.isfinite(stacked)], 0.95)
    agreeing = sum(c["agreeing"] for c in cells)
    pairs = sum(c["pairs"] for c in cells)
    return {
        "tau": float(np.mean([c["tau"] for c in finite])),
        "low": low,
        "high": high,
        "agreement": agreeing / pairs if pairs else None,
        "agreeing": agreeing,
        "pairs": pairs,
        "corpora": len(finite),
    }


def pooled_ceiling(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The noise ceiling pooled like tau: each replicate's mean over corpora."""
    stacked = np.stack([c["_replicates"] for c in cells])
    with np.errstate(all="ignore"):
        return ceiling_summary(np.nanmean(stacked, axis=0)) | {"corpora": len(cells)}


def strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def targets_met(cells: dict[str, dict[str, Any]], measures: dict[str, str]) -> dict[str, Any]:
    """Per measure: whether tau and pair agreement meet the issue's targets."""
    verdict = {}
    for measure, family in measures.items():
        cell = cells[measure]
        tau_ok = cell.get("tau") is not None and cell["tau"] >= TARGETS[family]
        agree = cell.get("agreement")
        verdict[measure] = {
            "tau_target": TARGETS[family],
            "tau_met": bool(tau_ok),
            "agreement_met": agree is None or agree >= TARGETS["agreement"],
        }
    return verdict


def writer_entry(
    result: dict[str, Any], compared: dict[str, Any], measures: dict[str, str]
) -> dict[str, Any]:
    """What a writer's record keeps on one corpus: the probe's counts and filter outcomes, three
    example questions, the comparison with the real questions and the targets met."""
    return {
        "probe": {k: v for k, v in result["probe"].items() if k != "questions"},
        "examples": [
            {"question": q["question"], "references": [r["text"] for r in q["references"]]}
            for q in result["probe"]["questions"][:3]
        ],
        "compared": compared,
        "targets": targets_met(compared, measures),
    }


def corpus_inputs(
    args: argparse.Namespace, corpus: str, chunkers: list[Any], cache: Any
) -> tuple[Path, str, list[Any], dict[str, list[ChunkPassage]], float]:
    """A corpus of the set: its path, text, real questions, every chunking's passages and the
    seconds the chunking took."""
    from hope.core.io import read_text

    path = args.data / "corpora" / f"{corpus}.md"
    text = read_text(path, "corpus")
    real_questions, _ = read_questions(args.data / "questions.jsonl", text, corpus)
    phase = time.perf_counter()
    chunkings = {}
    for chunker in chunkers:
        passages = chunk_corpus(chunker, corpus, text, cache)
        chunkings[chunker.name] = [ChunkPassage(p["text"], p["start"], p["end"]) for p in passages]
    return path, text, real_questions, chunkings, round(time.perf_counter() - phase, 1)
