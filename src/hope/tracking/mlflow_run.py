"""Log one experiment job to MLflow from plain data: config, provenance, scores, usage, evidence.

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

A multirun is one parent run (``start_parent_run`` / ``finish_parent_run``) whose children carry
the ``mlflow.parentRunId`` tag. Everything goes through ``MlflowClient`` with an explicit tracking
URI, never the fluent API's process-global active run, so parallel jobs cannot cross-log.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REDACTED = "***REDACTED***"
PARENT_TAG = "mlflow.parentRunId"
# A config key whose last part is one of these holds a secret. `api_key_env` (the *name* of the
# variable holding a key) and counters such as `max_tokens` do not match.
_SECRET_KEY = re.compile(
    r"(?:^|[_.\-])(?:api_?key|token|access_token|password|passwd|secret|client_secret|"
    r"credentials?|authorization|auth)$",
    re.IGNORECASE,
)
# Environment variables whose values are secrets wherever they turn up (a config value resolved
# from ${oc.env:...}, an error message, an artifact).
_SECRET_ENV = re.compile(r"(?:KEY|TOKEN|PASSWORD|PASSWD|SECRET|CREDENTIALS?)(?:_|$)", re.IGNORECASE)
_MIN_SECRET_CHARS = 6  # shorter values ("1", "yes") would redact ordinary config values
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. :]")
_MAX_PARAM_CHARS = 6000  # mlflow.utils.validation.MAX_PARAM_VAL_LENGTH
_PARAMS_PER_BATCH = 100
_METRICS_PER_BATCH = 1000


# --- secrets -----------------------------------------------------------------------------------


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking environment variables, longest first (for substring scrubbing)."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_ENV.search(k) and len(v) >= _MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(str(key)))


def scrub(text: str, secrets: Sequence[str]) -> str:
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def redact(config: Any, env: Mapping[str, str] | None = None) -> Any:
    """A copy of ``config`` (dicts, lists, scalars) without secrets.

    Values under secret-looking keys (api_key, token, password, secret, ...) are replaced, and so is
    any string containing the value of a secret-looking environment variable.
    """
    secrets = secret_values(env)

    def walk(value: Any, key: str | None) -> Any:
        if key is not None and is_secret_key(key) and value not in (None, ""):
            return REDACTED
        if isinstance(value, Mapping):
            return {k: walk(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v, None) for v in value]
        if isinstance(value, str):
            return scrub(value, secrets)
        return value

    return walk(config, None)


# --- provenance ----------------------------------------------------------------------------------


def git_commit(repo: Path | str) -> tuple[str | None, bool | None]:
    """(HEAD commit, tracked files modified?) or (None, None) outside git or without git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head or None, bool(status.strip())


def dvc_hashes(lock_path: Path | str) -> dict[str, str]:
    """``out path -> md5`` of every stage output recorded in dvc.lock ({} if there is none)."""
    path = Path(lock_path)
    if not path.is_file():
        return {}
    lock = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    hashes: dict[str, str] = {}
    for stage in (lock.get("stages") or {}).values():
        for out in stage.get("outs") or []:
            if isinstance(out, Mapping) and out.get("path") and out.get("md5"):
                hashes[str(out["path"])] = str(out["md5"])
    return dict(sorted(hashes.items()))


# --- metrics -------------------------------------------------------------------------------------


def name_part(value: Any) -> str:
    """One segment of a metric or param name, safe for MLflow (and no path traversal)."""
    text = _NAME_UNSAFE.sub("_", str(value)).replace("..", "_").strip("/") or "_"
    return text


def _mean(values: Iterable[Any]) -> float | None:
    finite = [float(v) for v in values if _finite(v)]
    return sum(finite) / len(finite) if finite else None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def aggregate_metrics(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *, per_pair: bool = True
) -> dict[str, float]:
    """Score columns of pair rows (doc_id, domain, chunker, ...) at corpus, domain and pair level.

    A level's value is the mean over its pairs whose score is defined; a level where none is
    defined gets no metric (MLflow has no null), and ``.../undefined/<score>`` counts such pairs.
    Metric names do not mention the chunker unless the job ran several, so that the runs of a
    sweep over chunkers share names and can be compared side by side.
    """
    metrics: dict[str, float] = {}
    chunkers = sorted({str(r["chunker"]) for r in rows})

    def level(prefix: str, subset: Sequence[Mapping[str, Any]]) -> None:
        metrics[f"{prefix}/n_pairs"] = float(len(subset))
        for column in columns:
            mean = _mean(r.get(column) for r in subset)
            if mean is not None:
                metrics[f"{prefix}/{name_part(column)}"] = mean
            undefined = sum(1 for r in subset if not _finite(r.get(column)))
            metrics[f"{prefix}/undefined/{name_part(column)}"] = float(undefined)

    def by_domain(prefix: str, subset: Sequence[Mapping[str, Any]]) -> None:
        for domain in sorted({str(r["domain"]) for r in subset}):
            level(
                f"{prefix}domain/{name_part(domain)}", [r for r in subset if r["domain"] == domain]
            )

    level("corpus", rows)
    by_domain("", rows)
    if len(chunkers) > 1:
        for chunker in chunkers:
            subset = [r for r in rows if r["chunker"] == chunker]
            level(f"chunker/{name_part(chunker)}", subset)
            by_domain(f"chunker/{name_part(chunker)}/", subset)
    if per_pair:
        for row in rows:
            prefix = f"pair/{name_part(row['chunker'])}/{name_part(row['doc_id'])}"
            for column in columns:
                if _finite(row.get(column)):
                    metrics[f"{prefix}/{name_part(column)}"] = float(row[column])
    return metrics


def flatten(config: Any, prefix: str = "") -> dict[str, str]:
    """Dotted keys -> string values; lists are JSON, values cut to MLflow's param length."""
    flat: dict[str, str] = {}
    if isinstance(config, Mapping):
        for key, value in config.items():
            flat.update(flatten(value, f"{prefix}{name_part(key)}."))
        if not config and prefix:
            flat[prefix[:-1]] = "{}"
        return flat
    text = (
        json.dumps(config, ensure_ascii=False) if isinstance(config, list | tuple) else str(config)
    )
    flat[prefix[:-1]] = text[:_MAX_PARAM_CHARS]
    return flat


# --- the run -------------------------------------------------------------------------------------


@dataclass
class TrackingSettings:
    uri: str
    experiment_name: str = "hope"
    artifact_root: str | None = None
    run_name: str | None = None
    log_evidence: bool = True
    log_pair_metrics: bool = True
    enabled: bool = True

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> TrackingSettings:
        if not data.get("enabled", True):
            return cls(uri="", enabled=False)
        # The config's default already reads MLFLOW_TRACKING_URI; an explicit tracking.uri wins.
        uri = data.get("uri") or os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            raise ValueError("tracking.uri is not set (nor MLFLOW_TRACKING_URI)")
        return cls(
            uri=str(uri),
            experiment_name=str(data.get("experiment_name") or "hope"),
            artifact_root=data.get("artifact_root"),
            run_name=data.get("run_name"),
            log_evidence=bool(data.get("log_evidence", True)),
            log_pair_metrics=bool(data.get("log_pair_metrics", True)),
        )


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


def client_for(settings: TrackingSettings):
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=settings.uri)


def experiment_id(client: Any, settings: TrackingSettings) -> str:
    from mlflow.exceptions import MlflowException

    existing = client.get_experiment_by_name(settings.experiment_name)
    if existing is not None:
        return existing.experiment_id
    location = None
    if settings.artifact_root:
        location = Path(settings.artifact_root).resolve().as_uri()
    try:
        return client.create_experiment(settings.experiment_name, artifact_location=location)
    except MlflowException:
        # A parallel job created it between the lookup and the create.
        again = client.get_experiment_by_name(settings.experiment_name)
        if again is None:
            raise
        return again.experiment_id


def _with_retry(operation, attempts: int = 8):
    # Parallel jobs share one SQLite store; a writer may find it locked for a moment.
    for attempt in range(attempts):
        try:
            return operation()
        except Exception as exc:
            if "locked" not in str(exc).lower() or attempt == attempts - 1:
                raise
            time.sleep(0.2 * 2**attempt)
    return None


def _log_batches(client: Any, run_id: str, params: Mapping[str, str], metrics: Mapping[str, float]):
    from mlflow.entities import Metric, Param

    now = int(time.time() * 1000)
    items = list(params.items())
    for i in range(0, len(items), _PARAMS_PER_BATCH):
        batch = [Param(k, v) for k, v in items[i : i + _PARAMS_PER_BATCH]]
        _with_retry(lambda batch=batch: client.log_batch(run_id, params=batch))
    values = [(k, v) for k, v in metrics.items() if _finite(v)]
    for i in range(0, len(values), _METRICS_PER_BATCH):
        batch = [Metric(k, float(v), now, 0) for k, v in values[i : i + _METRICS_PER_BATCH]]
        _with_retry(lambda batch=batch: client.log_batch(run_id, metrics=batch))


def _log_file(client: Any, run_id: str, artifact_path: str, local: Path, secrets: Sequence[str]):
    """Log ``local`` as ``artifact_path``, with secret values scrubbed from text files."""
    directory, _, name = artifact_path.rpartition("/")
    data = local.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    with tempfile.TemporaryDirectory(prefix="hope-artifact-") as tmp:
        target = Path(tmp) / name
        if text is not None:
            target.write_text(scrub(text, secrets), encoding="utf-8")
        else:
            target.write_bytes(data)
        client.log_artifact(run_id, str(target), artifact_path=directory or None)


def run_params(record: RunRecord, redacted_config: Mapping[str, Any], dvc: Mapping[str, str]):
    params = {f"cfg.{k}": v for k, v in flatten(redacted_config).items()}
    params.update({f"seed.{name_part(k)}": str(v) for k, v in record.seeds.items()})
    params.update(
        {f"prompt.{name_part(name)}": str(p.get("id", "")) for name, p in record.prompts.items()}
    )
    params.update({f"dvc.{name_part(path)}": md5 for path, md5 in dvc.items()})
    params.update({name_part(k): str(v)[:_MAX_PARAM_CHARS] for k, v in record.extra_params.items()})
    params["objective"] = record.objective_name
    return params


def run_metrics(record: RunRecord, settings: TrackingSettings) -> dict[str, float]:
    metrics = aggregate_metrics(
        record.rows, record.score_columns, per_pair=settings.log_pair_metrics
    )
    for key, value in record.usage.items():
        if _finite(value):
            metrics[f"usage/{name_part(key)}"] = float(value)
    for metric, count in record.failures.items():
        metrics[f"failures/{name_part(metric)}"] = float(count)
    for stage, seconds in record.timings.items():
        metrics[f"time/{name_part(stage)}_s"] = float(seconds)
    if _finite(record.objective):
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
    exp_id = _with_retry(lambda: experiment_id(client, settings))
    config = redact(record.config)
    repo = record.repo or Path.cwd()
    commit, dirty = git_commit(repo)
    dvc = dvc_hashes(repo / "dvc.lock")
    tags = {k: scrub(str(v), secrets) for k, v in record.tags.items()}
    if commit:
        tags["mlflow.source.git.commit"] = commit
        tags["hope.git_dirty"] = str(dirty).lower()
    if parent_run_id:
        tags[PARENT_TAG] = parent_run_id
    run = _with_retry(
        lambda: client.create_run(exp_id, tags=tags, run_name=settings.run_name or record.run_name)
    )
    run_id = run.info.run_id
    try:
        _log_batches(client, run_id, run_params(record, config, dvc), run_metrics(record, settings))
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
            _log_file(client, run_id, artifact_path, Path(local), secrets)
    except BaseException:
        _with_retry(lambda: client.set_terminated(run_id, "FAILED"))
        raise
    _with_retry(lambda: client.set_terminated(run_id, "FINISHED"))
    return run_id


def _json_number(value: float) -> float | None:
    return value if _finite(value) else None


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
    exp_id = _with_retry(lambda: experiment_id(client, settings))
    all_tags = {"hope.kind": "sweep", **(tags or {})}
    commit, dirty = git_commit(repo or Path.cwd())
    if commit:
        all_tags["mlflow.source.git.commit"] = commit
        all_tags["hope.git_dirty"] = str(dirty).lower()
    run = _with_retry(lambda: client.create_run(exp_id, tags=all_tags, run_name=run_name))
    flat = {name_part(k): v for k, v in flatten(redact(dict(params))).items()}
    _log_batches(client, run.info.run_id, flat, {})
    return run.info.run_id


def child_runs(settings: TrackingSettings, parent_run_id: str) -> list[Any]:
    client = client_for(settings)
    parent = client.get_run(parent_run_id)
    return client.search_runs(
        [parent.info.experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{parent_run_id}'"
    )


def finish_parent_run(settings: TrackingSettings, parent_run_id: str, status: str = "FINISHED"):
    """Summarise the children's objectives on the parent and close it."""
    if not settings.enabled or not parent_run_id:
        return
    client = client_for(settings)
    children = child_runs(settings, parent_run_id)
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
    _log_batches(client, parent_run_id, {}, metrics)
    _with_retry(lambda: client.set_terminated(parent_run_id, status))
