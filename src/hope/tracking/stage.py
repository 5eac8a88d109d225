"""What the DVC ``hope`` stage records about its results, besides the results themselves.

``record_score_stage`` reads the outputs the stage has just written (scores.csv, summary.json,
evidence.jsonl) and

* writes ``metrics.json`` beside them, for ``dvc metrics`` and ``dvc exp show``: the headline
  (``headline_metrics``: HOPE and its sub-metrics over every pair, the pairs, LLM requests and
  cache hits, failed items); per domain and chunker they are in scores.csv and the MLflow runs;
* logs them as MLflow runs, as ``hope-run`` logs a job (a parent run and a child run per
  chunker, ``hope.tracking.record``), when params.yaml's ``tracking:`` section is enabled. The
  parent's key is the md5 of the scores.csv written (``hope.scores_md5``): the analysis of those
  scores (``hope.analysis.paper_tracking``) logs the paper outputs to the same parent. The store is
  ``tracking.uri``, else ``MLFLOW_TRACKING_URI``, else ``mlflow.db`` in the directory the stage
  runs in (the repository root under DVC), the store ``hope-run`` uses too.

Reading the written files, not the objects that produced them, makes the run show exactly what
DVC recorded.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from hope.core.result import METRICS
from hope.tracking.datasets import CHUNKS, CORPUS, DataFile
from hope.tracking.layout import KIND_TAG, STAGE_PARENT_KIND
from hope.tracking.names import finite_mean, is_finite
from hope.tracking.provenance import file_md5s
from hope.tracking.record import RunRecord, log_run
from hope.tracking.tracking_settings import TrackingSettings

SCORE_COLUMNS = ("hope", *METRICS)
METRICS_FILE = "metrics.json"
DEFAULT_STORE = "mlflow.db"
_CORPUS_KEYS = ("profile", "seed", "min_chars")


def read_score_rows(path: Path) -> list[dict[str, Any]]:
    """scores.csv rows with the score and count columns as numbers (an empty cell is NaN)."""
    rows = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            parsed: dict[str, Any] = dict(row)
            for key, value in row.items():
                if key in SCORE_COLUMNS:
                    parsed[key] = float(value) if value not in ("", None) else math.nan
                elif key.endswith(("_scored", "_failed")) or key == "n_passages":
                    parsed[key] = int(value)
            rows.append(parsed)
    return rows


def failures_per_metric(summary: Mapping[str, Any]) -> dict[str, int]:
    by_metric = summary.get("failures_by_metric_and_chunker") or {}
    return {metric: sum(counts.values()) for metric, counts in by_metric.items()}


def failures_per_chunker(summary: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """chunker -> sub-metric -> failed items, from summary.json's metric -> chunker counts."""
    by_chunker: dict[str, dict[str, int]] = {}
    for metric, counts in (summary.get("failures_by_metric_and_chunker") or {}).items():
        for chunker, count in counts.items():
            by_chunker.setdefault(str(chunker), {})[metric] = int(count)
    return by_chunker


def scores_key(scores_csv: Path) -> tuple[str, str]:
    """(run key, md5) of a scores.csv: the experiment run its scores came from."""
    md5 = file_md5s([scores_csv])[str(scores_csv)]
    return f"scores:{md5}", md5


def headline_metrics(
    rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]
) -> dict[str, Any]:
    """The stage's ``metrics.json`` for ``dvc metrics show`` (one table, a column per key of every
    metrics file, so a few keys): HOPE and its sub-metrics over every pair where defined (None
    where none is), the pairs, the LLM requests and cache hits, the failed items. Per domain,
    chunker and pair: scores.csv, summary.json and the MLflow runs."""
    metrics: dict[str, Any] = {
        score: finite_mean(r.get(score) for r in rows) for score in SCORE_COLUMNS
    }
    metrics["pairs"] = len(rows)
    usage = summary.get("usage") or {}
    metrics["usage"] = {k: usage[k] for k in ("requests", "cache_hits") if is_finite(usage.get(k))}
    metrics["failures"] = sum(failures_per_metric(summary).values())
    return metrics


def stage_record(
    params: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    summary: Mapping[str, Any],
    out_dir: Path,
    data_hashes: Mapping[str, str],
    wall_s: float,
    repo: Path,
    traces: Sequence[Any] = (),
    inputs: Sequence[Path | str] | None = None,
    chunker_configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunRecord:
    """The stage's run as a ``RunRecord``. ``inputs``: the files read, the documents then the
    passages, which name the datasets (default: ``data_hashes`` in its own order);
    ``chunker_configs``: each chunker's settings (its run's ``chunker.*`` params)."""
    hope = params.get("hope") or {}
    corpora = params.get("corpora") or {}
    settings = summary.get("settings") or {}
    models = summary.get("models") or {}
    chunkers = sorted({str(r["chunker"]) for r in rows})
    corpus = str(corpora.get("profile", "unknown"))
    profile = str(hope.get("profile", settings.get("profile", "paper")))
    chunking = chunkers[0] if len(chunkers) == 1 else f"{len(chunkers)} chunkers"
    run_key, scores_md5 = scores_key(out_dir / "scores.csv")
    datasets = input_datasets(list(data_hashes) if inputs is None else inputs, data_hashes)
    return RunRecord(
        config={
            "hope": dict(hope),
            "chunkers": list(params.get("chunkers") or chunkers),
            "corpus": {k: corpora[k] for k in _CORPUS_KEYS if k in corpora},
            "settings": dict(settings),
            "models": dict(models),
        },
        rows=rows,
        score_columns=SCORE_COLUMNS,
        objective_name="hope",
        objective=finite_mean((r.get("hope") for r in rows), math.nan),
        seeds={"corpus": corpora.get("seed"), "hope": settings.get("seed", hope.get("seed"))},
        prompts=summary.get("prompts") or {},
        usage=summary.get("usage") or {},
        failures=failures_per_metric(summary),
        timings={"score": wall_s},
        artifacts={
            "scores.csv": out_dir / "scores.csv",
            "summary.json": out_dir / "summary.json",
            METRICS_FILE: out_dir / METRICS_FILE,
        },
        evidence_artifacts={"evidence.jsonl": out_dir / "evidence.jsonl"},
        tags={
            KIND_TAG: STAGE_PARENT_KIND,
            "hope.stage": "hope",
            "hope.corpus": corpus,
            "hope.profile": profile,
            "hope.llm": str(models.get("llm", hope.get("llm", ""))),
            "hope.chunkers": ",".join(chunkers),
            "hope.output_dir": str(out_dir),
            "hope.scores_md5": scores_md5,
        },
        run_name=f"dvc hope: {corpus}/{chunking}/{profile}",
        repo=repo,
        data_hashes=data_hashes,
        run_key=run_key,
        datasets=datasets,
        failures_by_chunker=failures_per_chunker(summary),
        traces=traces,
        chunker_configs=dict(chunker_configs or {}),
        wall_s=wall_s,
    )


def input_datasets(inputs: Sequence[Path | str], data_hashes: Mapping[str, str]) -> list[DataFile]:
    """The stage's inputs as datasets: the first is the corpus (the prepared documents), the
    second the chunk table (the passages), each with its md5 from ``data_hashes``.

    The roles follow the order the stage read its inputs in, not the order of ``data_hashes``
    (``file_md5s`` sorts by path, and ``data/chunks/...`` sorts before ``data/prepared/...``).
    """
    return [
        DataFile(role, Path(path), data_hashes[str(path)])
        for role, path in zip((CORPUS, CHUNKS), inputs, strict=False)
    ]


def chunk_configs(passages: Path | str) -> dict[str, dict[str, Any]]:
    """chunker -> its settings, from the chunk stage's ``summary.json`` beside the passages
    (``config`` of each chunker: name, ``_target_`` and every setting); {} without one."""
    path = Path(passages).parent / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(summary, Mapping):
        return {}
    return {
        str(name): dict(entry["config"])
        for name, entry in summary.items()
        if isinstance(entry, Mapping) and isinstance(entry.get("config"), Mapping)
    }


def record_score_stage(
    params_path: Path | str,
    out_dir: Path | str,
    inputs: Sequence[Path | str],
    *,
    wall_s: float,
    repo: Path | None = None,
    traces: Sequence[Any] = (),
) -> str | None:
    """Write ``<out_dir>/metrics.json`` and, with tracking on, log the MLflow run.

    ``inputs`` are the files the stage read, the documents then the passages (their md5s are the
    run's ``dvc.<path>`` params, as dvc.lock will record them, and name the chunker runs'
    datasets); the chunk stage's summary.json beside the passages gives each chunker run its
    chunker's settings as params. ``traces``: the sampled LLM calls (``stage_trace_recorder``).
    Returns the parent run's id, or None when params.yaml has no enabled ``tracking:`` section.
    """
    from hope.core.io import write_json_atomic

    out = Path(out_dir)
    repo = Path.cwd() if repo is None else repo
    params = yaml.safe_load(Path(params_path).read_text(encoding="utf-8")) or {}
    rows = read_score_rows(out / "scores.csv")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    # metrics.json is a DVC output: the wall time and latencies stay in the log and the MLflow
    # run, so the same inputs give the same bytes (hope.core.io.RUN_DEPENDENT_KEYS).
    write_json_atomic(out / METRICS_FILE, headline_metrics(rows, summary))

    settings = enabled_stage_settings(params_path, repo)
    if settings is None:
        return None
    configs = chunk_configs(inputs[1]) if len(inputs) > 1 else {}
    record = stage_record(
        params,
        rows,
        summary,
        out,
        file_md5s(inputs),
        wall_s,
        repo,
        traces,
        inputs=inputs,
        chunker_configs=configs,
    )
    return log_run(record, settings)


def stage_settings(params_path: Path | str, repo: Path | None = None) -> TrackingSettings:
    """params.yaml's ``tracking:`` as settings (disabled without that section)."""
    repo = Path.cwd() if repo is None else repo
    params = yaml.safe_load(Path(params_path).read_text(encoding="utf-8")) or {}
    tracking = params.get("tracking") or {"enabled": False}
    default_uri = f"sqlite:///{(repo / DEFAULT_STORE).resolve()}"
    return TrackingSettings.from_mapping(tracking, default_uri=default_uri)


def enabled_stage_settings(params_path: Path | str, repo: Path) -> TrackingSettings | None:
    """A stage's tracking settings with the artifact root resolved against ``repo``, or None when
    params.yaml's ``tracking:`` is off: the preamble of every stage's ``record_*_stage``."""
    settings = stage_settings(params_path, repo)
    if not settings.enabled:
        return None
    if settings.artifact_root:
        settings.artifact_root = str((repo / settings.artifact_root).resolve())
    return settings


def input_md5s(inputs: Sequence[Path | str]) -> dict[str, str]:
    """The md5 of each input file and of every file under each input folder (sorted by path
    within a folder): a stage's ``dvc.*`` params. A path that does not exist is skipped."""
    files: list[Path] = []
    for path in map(Path, inputs):
        if path.is_dir():
            files += [p for p in sorted(path.rglob("*")) if p.is_file()]
        elif path.is_file():
            files.append(path)
    return file_md5s(files)


def stage_trace_recorder(params_path: Path | str):
    """The ``ChatLLM.on_call`` observer sampling the stage's LLM calls for traces, or None."""
    return stage_settings(params_path).trace_recorder()
