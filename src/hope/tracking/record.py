"""One job as one finished MLflow run, from plain data (``RunRecord``).

A job's run holds

* params: the resolved config flattened (``cfg.llm.model`` ...; secrets redacted), the seeds
  (``seed.*``), every prompt's identity (``prompt.<name>`` = ``name@vN#texthash``), the DVC data
  hashes (``dvc.<path>``) and the objective's name;
* tags: the git commit (``mlflow.source.git.commit``) and whether the tree was dirty;
* metrics: each score column at corpus level (``corpus/<score>``), per domain
  (``domain/<domain>/<score>``), per (document, chunker) pair (``pair/<chunker>/<doc_id>/<score>``)
  and, when a job runs several chunkers, per chunker (``chunker/<name>/...``); LLM usage
  (``usage/*``), failed items per sub-metric (``failures/*``), wall times (``time/*``) and
  ``objective``;
* artifacts: ``config.yaml`` (redacted), ``prompts/<name>.yaml`` (text and version),
  ``provenance.json`` and the files the caller passes (scores.csv, evidence.jsonl, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hope.tracking.names import MAX_PARAM_CHARS, aggregate_metrics, flatten, is_finite, name_part
from hope.tracking.provenance import dvc_hashes, git_commit
from hope.tracking.secrets import redact, scrub, secret_values
from hope.tracking.settings import TrackingSettings
from hope.tracking.store import client_for, experiment_id, log_batches, log_file, with_retry

PARENT_TAG = "mlflow.parentRunId"


@dataclass
class RunRecord:
    """Everything one job produced, as plain data."""

    config: Mapping[str, Any]
    rows: Sequence[Mapping[str, Any]]
    score_columns: Sequence[str]
    objective_name: str
    objective: float
    seeds: Mapping[str, Any] = field(default_factory=dict)
    prompts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)
    failures: Mapping[str, int] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    # artifact path in the run -> local file; `evidence` ones are skipped when log_evidence=false
    artifacts: Mapping[str, Path] = field(default_factory=dict)
    evidence_artifacts: Mapping[str, Path] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    extra_params: Mapping[str, str] = field(default_factory=dict)
    run_name: str | None = None
    repo: Path | None = None
    # path -> md5 of the data the job read; None: every output recorded in <repo>/dvc.lock
    data_hashes: Mapping[str, str] | None = None


def run_params(record: RunRecord, redacted_config: Mapping[str, Any], dvc: Mapping[str, str]):
    params = {f"cfg.{k}": v for k, v in flatten(redacted_config).items()}
    params.update({f"seed.{name_part(k)}": str(v) for k, v in record.seeds.items()})
    params.update(
        {f"prompt.{name_part(name)}": str(p.get("id", "")) for name, p in record.prompts.items()}
    )
    params.update({f"dvc.{name_part(path)}": md5 for path, md5 in dvc.items()})
    params.update({name_part(k): str(v)[:MAX_PARAM_CHARS] for k, v in record.extra_params.items()})
    params["objective"] = record.objective_name
    return params


def run_metrics(record: RunRecord, settings: TrackingSettings) -> dict[str, float]:
    metrics = aggregate_metrics(
        record.rows, record.score_columns, per_pair=settings.log_pair_metrics
    )
    for key, value in record.usage.items():
        if is_finite(value):
            metrics[f"usage/{name_part(key)}"] = float(value)
    for metric, count in record.failures.items():
        metrics[f"failures/{name_part(metric)}"] = float(count)
    for stage, seconds in record.timings.items():
        metrics[f"time/{name_part(stage)}_s"] = float(seconds)
    if is_finite(record.objective):
        metrics["objective"] = float(record.objective)
    return metrics


def log_run(
    record: RunRecord, settings: TrackingSettings, *, parent_run_id: str | None = None
) -> str | None:
    """Create one finished run holding ``record``; returns its id (None when tracking is off)."""
    if not settings.enabled:
        return None
    secrets = secret_values()
    client = client_for(settings)
    exp_id = with_retry(lambda: experiment_id(client, settings))
    config = redact(record.config)
    repo = record.repo or Path.cwd()
    commit, dirty = git_commit(repo)
    dvc = (
        dict(record.data_hashes)
        if record.data_hashes is not None
        else dvc_hashes(repo / "dvc.lock")
    )
    tags = {k: scrub(str(v), secrets) for k, v in record.tags.items()}
    if commit:
        tags["mlflow.source.git.commit"] = commit
        tags["hope.git_dirty"] = str(dirty).lower()
    if parent_run_id:
        tags[PARENT_TAG] = parent_run_id
    run = with_retry(
        lambda: client.create_run(exp_id, tags=tags, run_name=settings.run_name or record.run_name)
    )
    run_id = run.info.run_id
    try:
        log_batches(client, run_id, run_params(record, config, dvc), run_metrics(record, settings))
        client.log_text(
            run_id, yaml.safe_dump(config, sort_keys=False, allow_unicode=True), "config.yaml"
        )
        for name, prompt in sorted(record.prompts.items()):
            client.log_text(
                run_id,
                scrub(yaml.safe_dump(dict(prompt), sort_keys=False, allow_unicode=True), secrets),
                f"prompts/{name_part(name)}.yaml",
            )
        provenance = {
            "git_commit": commit,
            "git_dirty": dirty,
            "dvc_hashes": dvc,
            "seeds": dict(record.seeds),
            "usage": dict(record.usage),
            "timings_s": dict(record.timings),
            "objective": {"name": record.objective_name, "value": _json_number(record.objective)},
        }
        client.log_text(run_id, scrub(json.dumps(provenance, indent=2), secrets), "provenance.json")
        files = dict(record.artifacts)
        if settings.log_evidence:
            files.update(record.evidence_artifacts)
        for artifact_path, local in files.items():
            log_file(client, run_id, artifact_path, Path(local), secrets)
    except BaseException:
        with_retry(lambda: client.set_terminated(run_id, "FAILED"))
        raise
    with_retry(lambda: client.set_terminated(run_id, "FINISHED"))
    return run_id


def _json_number(value: float) -> float | None:
    return value if is_finite(value) else None
