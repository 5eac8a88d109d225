"""A multirun as one run whose children (``mlflow.parentRunId``) are the jobs' parent runs; each
job's chunker runs nest one level below (``hope.tracking.layout``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hope.tracking.names import finite_mean, flatten, name_part
from hope.tracking.provenance import git_commit, source_tags
from hope.tracking.record import PARENT_TAG
from hope.tracking.secrets import redact, secret_values
from hope.tracking.store import (
    client_for,
    experiment_id,
    log_batches,
    log_file,
    log_table,
    with_retry,
)
from hope.tracking.tracking_settings import TrackingSettings


def start_parent_run(
    settings: TrackingSettings,
    *,
    run_name: str,
    params: Mapping[str, Any],
    tags: Mapping[str, str] | None = None,
    repo: Path | None = None,
) -> str | None:
    """An open run standing for a whole multirun; its jobs are logged as children."""
    if not settings.enabled:
        return None
    client = client_for(settings)
    exp_id = with_retry(lambda: experiment_id(client, settings))
    all_tags = {"hope.kind": "sweep", **(tags or {})}
    commit, dirty = git_commit(repo or Path.cwd())
    all_tags.update(source_tags(commit, dirty, run_name))
    run = with_retry(lambda: client.create_run(exp_id, tags=all_tags, run_name=run_name))
    flat = {name_part(k): v for k, v in flatten(redact(dict(params))).items()}
    log_batches(client, run.info.run_id, flat, {})
    return run.info.run_id


def finish_parent_run(settings: TrackingSettings, parent_run_id: str, status: str = "FINISHED"):
    """Summarise the children's objectives on the parent and close it."""
    if not settings.enabled or not parent_run_id:
        return
    client = client_for(settings)
    children = client.search_runs(
        [client.get_run(parent_run_id).info.experiment_id],
        filter_string=f"tags.`{PARENT_TAG}` = '{parent_run_id}'",
    )
    objectives = [
        (r.data.metrics["objective"], r.info.run_id)
        for r in children
        if "objective" in r.data.metrics
    ]
    metrics: dict[str, float] = {"sweep/jobs": float(len(children))}
    metrics["sweep/failed_jobs"] = float(sum(1 for r in children if r.info.status == "FAILED"))
    if objectives:
        best, best_run = max(objectives)
        metrics["sweep/objective_max"] = best
        metrics["sweep/objective_mean"] = sum(v for v, _ in objectives) / len(objectives)
        client.set_tag(parent_run_id, "hope.best_child_run", best_run)
    log_batches(client, parent_run_id, {}, metrics)
    with_retry(lambda: client.set_terminated(parent_run_id, status))


def log_merged_result(
    settings: TrackingSettings, parent_run_id: str, merged_dir: Path, n_shards: int
) -> dict[str, float]:
    """The merged outputs of a sharded sweep on the sweep's run: ``merged/<score>`` (the mean
    over every pair where defined), ``merged/pairs`` and ``merged/shards``; per chunker the table
    ``merged/chunkers.json`` (its means, as every chunker run has them), and ``scores.csv`` and
    ``summary.json`` as artifacts under ``merged/``. Returns the metrics logged (none with
    tracking off)."""
    if not settings.enabled or not parent_run_id:
        return {}
    from hope.tracking.layout import CHILD_SCORES, chunker_table
    from hope.tracking.stage import read_score_rows

    rows = read_score_rows(merged_dir / "scores.csv")
    metrics: dict[str, float] = {"merged/pairs": float(len(rows)), "merged/shards": float(n_shards)}
    for score in CHILD_SCORES:
        mean = finite_mean(r.get(score) for r in rows)
        if mean is not None:
            metrics[f"merged/{score}"] = mean
    client = client_for(settings)
    log_batches(client, parent_run_id, {}, metrics)
    if rows:
        scores = [s for s in CHILD_SCORES if any(s in r for r in rows)]
        table = chunker_table(rows, scores)
        log_table(client, parent_run_id, table, "merged/chunkers.json")
    secrets = secret_values()
    for name in ("scores.csv", "summary.json"):
        log_file(client, parent_run_id, f"merged/{name}", merged_dir / name, secrets)
    with_retry(lambda: client.set_tag(parent_run_id, "hope.merged_output", str(merged_dir)))
    return metrics
