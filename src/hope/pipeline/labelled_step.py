"""DVC stage ``labelled``: does HOPE pick the chunker that retrieves best? (issue #18) This module
is the stage's work; ``hope.stages.labelled_stage`` is its ``main`` (arguments, the files it
reads and writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.baselines import CARDS
from hope.core.io import without_run_timings
from hope.labelled.benchmark import BenchmarkSettings
from hope.labelled.convergent import HOPE_METRICS, TARGETS, strip_private
from hope.labelled.measures import MEASURES


def column(score: str, primary: str) -> str:
    """``hope[paper]`` -> ``hope`` for the first profile, ``hope_robust`` for another."""
    if "[" not in score:
        return score
    metric, profile = score[:-1].split("[", 1)
    return metric if profile == primary else f"{metric}_{profile}"


def chunker_rows(report: Mapping[str, Any], profiles: Sequence[str]) -> list[dict[str, Any]]:
    """One row per (corpus, chunker): sizes, labelled means, BLEU, baselines, HOPE per profile.
    ``doc_id`` and ``domain`` are the corpus, as in the HOPE runs' tables."""
    rows = []
    for corpus, entry in report["corpora"].items():
        for chunker, cell in entry["chunkers"].items():
            row: dict[str, Any] = {
                "doc_id": corpus,
                "domain": corpus,
                "chunker": chunker,
                "n_passages": cell["n_passages"],
                "mean_chars": round(cell["mean_chars"], 1),
            }
            labelled = cell.get("labelled") or {}
            row.update({m: (labelled.get(m) or {}).get("mean") for m in MEASURES})
            row["bleu"] = cell["bleu"]
            row.update({name: cell["baselines"][name] for name in CARDS})
            for profile in profiles:
                record = cell["hope"].get(profile) or {}
                for metric in HOPE_METRICS:
                    value = record.get(metric) if record.get("status") == "ok" else None
                    row[column(f"{metric}[{profile}]", profiles[0])] = value  # profiles: >= 1
            rows.append(row)
    return rows


def tau_metrics(report: Mapping[str, Any], primary: str) -> dict[str, Any]:
    """``{"tau_<target>": {"pooled" | corpus: {score column: τ}}, "usage": {"requests": n, ...}}``
    (the usage of a cold run, as in the other stages' summaries), with the τ beside passage length
    of :func:`length_tau_metrics`."""
    metrics: dict[str, Any] = {}
    for target in TARGETS:
        block: dict[str, dict[str, float]] = {}
        pooled = (report.get("pooled") or {}).get(target) or {}
        if pooled:
            block["pooled"] = {column(s, primary): c["tau"] for s, c in pooled.items()}
        for corpus, entry in report["corpora"].items():
            cells = ((entry.get("validity") or {}).get(target) or {}).get("scores") or {}
            if cells:
                block[corpus] = {column(s, primary): c["tau"] for s, c in cells.items()}
        metrics[f"tau_{target}"] = block
    metrics.update(length_tau_metrics(report, primary))
    metrics["usage"] = {
        "requests": report.get("llm_requests", 0),
        "cache_hits": report.get("llm_cache_hits", 0),
    }
    return metrics


def length_tau_metrics(report: Mapping[str, Any], primary: str) -> dict[str, Any]:
    """What each score tracks beyond passage length (``hope.labelled.passage_length``), in
    :func:`tau_metrics`' shape: ``tau_passage_length`` (τ with the mean passage length) and
    ``tau_<target>_given_length`` (the partial τ), ``{"pooled" | corpus: {score column: τ}}``."""
    blocks = [("pooled", report.get("pooled_passage_length") or {})]
    blocks += [(c, e.get("passage_length") or {}) for c, e in report["corpora"].items()]
    metrics: dict[str, Any] = {"tau_passage_length": {}}
    for where, block in blocks:
        cells = block.get("tau_with_length") or {}
        if cells:
            metrics["tau_passage_length"][where] = {
                column(s, primary): c["tau"] for s, c in cells.items()
            }
        for target, cells in (block.get("partial_tau_given_length") or {}).items():
            metrics.setdefault(f"tau_{target}_given_length", {})[where] = {
                column(s, primary): c["tau"] for s, c in cells.items()
            }
    return metrics


HEADLINE_TARGET = "budget_recall"
HEADLINE_SCORES = ("hope", "bleu")


def headline_metrics(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The stage's ``metrics.json`` for ``dvc metrics show`` (one table, a column per key of every
    metrics file, so a few keys): the pooled τ of HOPE and BLEU with budget recall, and the LLM
    usage. Every τ (each target, corpus and score) is in results.json and the MLflow run's
    ``tau.json``."""
    pooled = (metrics.get(f"tau_{HEADLINE_TARGET}") or {}).get("pooled") or {}
    return {
        f"tau_{HEADLINE_TARGET}": {s: pooled.get(s) for s in HEADLINE_SCORES},
        "usage": dict(metrics.get("usage") or {}),
    }


def usage_by_chunker(report: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Each chunker's LLM usage (``llm`` of its HOPE runs, summed over corpora and profiles)."""
    usage: dict[str, dict[str, float]] = {}
    for entry in report["corpora"].values():
        for chunker, cell in entry["chunkers"].items():
            totals = usage.setdefault(chunker, {})
            for record in cell["hope"].values():
                for key, value in (record.get("llm") or {}).items():
                    totals[key] = totals.get(key, 0) + value
    return usage


def chunker_settings(names: Sequence[str], conf_dir: Path) -> dict[str, dict[str, Any]]:
    """Each chunker's settings as ``<conf_dir>/<name>.yaml`` gives them (resolved; nothing is
    instantiated): its run's ``chunker.*`` params. A chunker without a file has none."""
    from omegaconf import OmegaConf

    settings: dict[str, dict[str, Any]] = {}
    for name in names:
        path = Path(conf_dir) / f"{name}.yaml"
        if path.is_file():
            loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
            if isinstance(loaded, dict):
                settings[name] = {str(k): v for k, v in loaded.items()}
    return settings


def run_labelled_stage(
    settings: BenchmarkSettings, data_dir: Path, conf_dir: Path, cache_path: str | None
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], dict[str, float]]:
    """(report, rows, metrics, timings) of the benchmark that ``settings`` (params.yaml
    ``labelled:``, validated) sets."""
    from hope.labelled.benchmark import run_benchmark
    from hope.models.factory import embedder_preset, open_cache

    embedder = embedder_preset(settings.embedder)
    timings: dict[str, float] = {}

    def log(message: str) -> None:
        print(f"labelled: {message}", file=sys.stderr, flush=True)

    report = run_benchmark(
        settings,
        data_dir,
        conf_dir,
        embedder,
        cache=open_cache(cache_path),
        cache_path=cache_path,
        timings=timings,
        log=log,
    )
    report = without_run_timings(strip_private(report))
    primary = settings.profiles[0] if settings.profiles else ""
    return report, chunker_rows(report, settings.profiles), tau_metrics(report, primary), timings
