"""One experiment run (a job, a DVC stage run) as MLflow runs, from plain data (``RunRecord``).

The layout (``hope.tracking.layout``): a **parent run** for the experiment run, holding

* params: the resolved config flattened (``cfg.llm.model`` ...; secrets redacted), the seeds
  (``seed.*``), every prompt's identity (``prompt.<name>`` = ``name@vN#texthash``), the DVC data
  hashes (``dvc.<path>``) and the objective's name;
* tags: the git commit (``mlflow.source.git.commit``), whether the tree was dirty, the run key;
* metrics, summaries and comparisons only, none of them a chunker run's key: the headline scores
  at corpus level (``corpus/<score>``), ``corpus/n_pairs`` and ``corpus/chunkers``, LLM usage
  (``corpus/usage/*``), failed items per sub-metric (``corpus/failures/*``), wall times
  (``time/*``), ``objective`` and the record's own (``extra_metrics``);
* tables: ``domains.json`` (every score per domain), ``chunkers.json`` (every score per chunker)
  and the record's own (``tables``);
* artifacts: ``config.yaml`` (redacted), ``prompts/<name>.yaml`` (text and version),
  ``provenance.json`` and the files the caller passes (scores.csv, summary.json, ...);
* the sampled LLM calls as traces (``hope.tracking.traces``), linked to the chunker run whose
  evaluation made them;

and a **child run per chunker** with the headline keys of every chunker run
(``layout.chunker_metrics``: ``hope``, the sub-metrics, ``bleu``, the RAGAS indicators,
``budget_recall``; usage, failures), the per-domain and per-document rows as the tables
``domains.json`` and ``documents.json``, the chunker's per-passage evidence (``evidence.jsonl``,
unless ``log_evidence`` is off) and the prepared corpus and chunk table as dataset inputs. Every
prompt is registered in MLflow's prompt registry, and the parent and the children link the
versions they used. A run's start and end span the work it records (``wall_s``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hope.tracking.datasets import DataFile, log_datasets
from hope.tracking.layout import (
    CHILD_KIND,
    CHILD_SCORES,
    CHUNKER_TABLE,
    DOMAIN_TABLE,
    HEADLINE_SCORES,
    KIND_TAG,
    PARENT_TAG,
    TABLE_FILE,
    child_scores,
    chunker_metrics,
    chunker_table,
    domain_table,
    get_or_create_child_run,
    get_or_create_parent_run,
    new_run_key,
    table_columns,
)
from hope.tracking.names import MAX_PARAM_CHARS, finite_mean, flatten, is_finite, name_part
from hope.tracking.prompt_registry import register_and_link
from hope.tracking.provenance import dvc_hashes, git_commit, source_tags
from hope.tracking.secrets import redact, scrub, secret_values
from hope.tracking.store import (
    client_for,
    experiment_id,
    log_batches,
    log_file,
    log_table,
    with_retry,
)
from hope.tracking.traces import log_traces
from hope.tracking.tracking_settings import TrackingSettings

__all__ = ["PARENT_TAG", "RunRecord", "log_run"]


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
    # The experiment run this record belongs to (get_or_create_parent_run); None: a new one.
    run_key: str | None = None
    # The prepared corpus and the chunk table, as the chunker runs' dataset inputs.
    datasets: Sequence[DataFile] = ()
    # chunker -> sub-metric -> failed items
    failures_by_chunker: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # chunker -> its config (the child run's params)
    chunker_configs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Sampled LLM calls (hope.models.llm.LLMCall), logged as traces of the parent run.
    traces: Sequence[Any] = ()
    # The scores every chunker child has (a labelled benchmark run adds its measures).
    child_scores: Sequence[str] = CHILD_SCORES
    # Parent metrics beyond the score aggregates (e.g. the labelled benchmark's Kendall tau).
    extra_metrics: Mapping[str, float] = field(default_factory=dict)
    # chunker -> LLM usage, where no evidence file holds it (the labelled benchmark's results.json)
    usage_by_chunker: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # The chunker runs' kind (hope.kind): a HOPE run's ``chunker``, the labelled benchmark's
    # ``labelled_chunker``; it also names them (hope/<chunker>, labelled/<chunker>).
    child_kind: str = CHILD_KIND
    # MLflow tables of the parent beyond domains.json and chunkers.json: file -> column -> values.
    tables: Mapping[str, Mapping[str, Sequence[Any]]] = field(default_factory=dict)
    # The seconds the recorded work took: the runs start that long before they are logged, so
    # that their duration is the work's, not the logging's. None: the logging's.
    wall_s: float | None = None


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


def run_metrics(record: RunRecord) -> dict[str, float]:
    """The parent run's metrics: summaries (the headline scores at corpus level) and comparisons;
    per domain and per chunker are its tables and its chunker runs."""
    metrics = {
        "corpus/n_pairs": float(len(record.rows)),
        "corpus/chunkers": float(len({str(r["chunker"]) for r in record.rows})),
    }
    for score in record.score_columns:
        if score in HEADLINE_SCORES:
            mean = finite_mean(r.get(score) for r in record.rows)
            if mean is not None:
                metrics[f"corpus/{score}"] = mean
    for key, value in record.usage.items():
        if is_finite(value):
            metrics[f"corpus/usage/{name_part(key)}"] = float(value)
    for metric, count in record.failures.items():
        metrics[f"corpus/failures/{name_part(metric)}"] = float(count)
    for stage, seconds in record.timings.items():
        metrics[f"time/{name_part(stage)}_s"] = float(seconds)
    if is_finite(record.objective):
        metrics["objective"] = float(record.objective)
    metrics.update({k: float(v) for k, v in record.extra_metrics.items() if is_finite(v)})
    return metrics


def log_run(
    record: RunRecord, settings: TrackingSettings, *, parent_run_id: str | None = None
) -> str | None:
    """Log ``record`` as a parent run with a child per chunker; returns the parent's id (None when
    tracking is off). ``parent_run_id`` nests the parent under a sweep's run."""
    if not settings.enabled:
        return None
    secrets = secret_values()
    client = client_for(settings)
    exp_id = with_retry(lambda: experiment_id(client, settings))
    config = redact(record.config)
    repo = record.repo or Path.cwd()
    commit, dirty = git_commit(repo)
    dvc = dvc_hashes(repo / "dvc.lock") if record.data_hashes is None else dict(record.data_hashes)
    tags = {k: scrub(str(v), secrets) for k, v in record.tags.items()}
    source = source_name(record)
    tags.update(source_tags(commit, dirty, source))
    started_ms = start_time_ms(record.wall_s)
    run_id, created = get_or_create_parent_run(
        settings,
        record.run_key or new_run_key(),
        run_name=settings.run_name or record.run_name or "hope",
        tags=tags,
        parent_run_id=parent_run_id,
        start_time=started_ms,
    )
    try:
        params = run_params(record, config, dvc)
        if not created:  # a logged param cannot change: add only the new ones
            known = client.get_run(run_id).data.params
            params = {k: v for k, v in params.items() if k not in known}
        log_batches(client, run_id, params, run_metrics(record))
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
            "datasets": {d.role: {"path": str(d.path), "md5": d.md5} for d in record.datasets},
            "seeds": dict(record.seeds),
            "usage": dict(record.usage),
            "timings_s": dict(record.timings),
            "objective": {
                "name": record.objective_name,
                "value": record.objective if is_finite(record.objective) else None,
            },
        }
        client.log_text(run_id, scrub(json.dumps(provenance, indent=2), secrets), "provenance.json")
        for artifact_path, local in record.artifacts.items():
            log_file(client, run_id, artifact_path, Path(local), secrets)
        for name, table in parent_tables(record).items():
            log_table(client, run_id, table, name)
        children = log_children(
            client,
            exp_id,
            run_id,
            record,
            settings,
            secrets,
            source_tags(commit, dirty, source),
            start_time=started_ms,
        )
        if record.prompts:
            register_and_link(client, record.prompts, [run_id, *children.values()], exp_id)
        if record.traces:
            log_traces(client, settings.uri, exp_id, run_id, record.traces, chunker_runs=children)
    except BaseException:
        with_retry(lambda: client.set_terminated(run_id, "FAILED"))
        raise
    with_retry(lambda: client.set_terminated(run_id, "FINISHED"))
    return run_id


def start_time_ms(wall_s: float | None) -> int | None:
    """A run's start, in ms since the epoch, for work of ``wall_s`` seconds that ends now."""
    import time

    if wall_s is None or not is_finite(wall_s):
        return None
    return int((time.time() - max(float(wall_s), 0.0)) * 1000)


def parent_tables(record: RunRecord) -> dict[str, Mapping[str, Sequence[Any]]]:
    """The parent's tables: every score per domain, every score per chunker, the record's own."""
    if not record.rows:
        return dict(record.tables)
    scores = list(record.score_columns)
    return {
        DOMAIN_TABLE: domain_table(record.rows, scores, count="n_pairs"),
        CHUNKER_TABLE: chunker_table(record.rows, scores),
        **record.tables,
    }


def source_name(record: RunRecord) -> str:
    """What the run page shows as the run's source: the DVC stage (``dvc.yaml:hope``) or the
    program that logged it."""
    import sys

    stage = record.tags.get("hope.stage")
    if stage:
        return f"dvc.yaml:{stage}"
    return Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "hope"


def log_children(
    client: Any,
    exp_id: str,
    parent_id: str,
    record: RunRecord,
    settings: TrackingSettings,
    secrets: Sequence[str],
    source: Mapping[str, str] | None = None,
    *,
    start_time: int | None = None,
) -> dict[str, str]:
    """One finished child run per chunker of ``record``; returns chunker -> run id. ``source``:
    the parent's source and commit tags, which the children carry too; ``start_time``: the
    parent's (the chunkers were scored together, in the parent's work)."""
    chunkers = sorted({str(r["chunker"]) for r in record.rows})
    scores = child_scores(record.child_scores)
    evidence = {k: Path(v) for k, v in record.evidence_artifacts.items() if Path(v).is_file()}
    with tempfile.TemporaryDirectory(prefix="hope-children-") as tmp:
        split, usage = split_evidence(evidence, Path(tmp), chunkers)
        children: dict[str, str] = {}
        base_tags = {k: v for k, v in record.tags.items() if k not in (KIND_TAG, "hope.chunkers")}
        base_tags.update(source or {})
        for chunker in chunkers:
            rows = [r for r in record.rows if str(r["chunker"]) == chunker]
            child = get_or_create_child_run(
                client,
                exp_id,
                parent_id,
                chunker,
                base_tags,
                record.child_kind,
                start_time=start_time,
            )
            children[chunker] = child
            try:
                config = flatten(redact(record.chunker_configs.get(chunker, {})))
                params = {"chunker": chunker, **{f"chunker.{k}": v for k, v in config.items()}}
                known = client.get_run(child).data.params
                log_batches(
                    client,
                    child,
                    {k: v for k, v in params.items() if k not in known},
                    chunker_metrics(
                        rows,
                        usage=usage.get(chunker) or record.usage_by_chunker.get(chunker),
                        failures=record.failures_by_chunker.get(chunker),
                        scores=record.child_scores,
                    ),
                    keep_nan=True,
                )
                if rows:
                    domains = domain_table(rows, [s for s in scores if any(s in r for r in rows)])
                    log_table(client, child, domains, DOMAIN_TABLE)
                if settings.log_pair_metrics and rows:
                    table = table_columns(rows)
                    log_table(client, child, table, TABLE_FILE)
                if settings.log_evidence:
                    for artifact_path in evidence:
                        local = split[(artifact_path, chunker)]
                        log_file(client, child, artifact_path, local, secrets)
                if record.datasets:
                    log_datasets(client, child, record.datasets)
            except BaseException:
                with_retry(lambda child=child: client.set_terminated(child, "FAILED"))
                raise
            with_retry(lambda child=child: client.set_terminated(child, "FINISHED"))
    return children


def split_evidence(
    evidence: Mapping[str, Path], folder: Path, chunkers: Sequence[str]
) -> tuple[dict[tuple[str, str], Path], dict[str, dict[str, float]]]:
    """Each evidence file's lines per chunker (files under ``folder``), and the LLM usage each
    chunker's evaluations recorded (``usage.llm`` of its lines, summed).

    A request two chunkers share (an identical passage) is counted for the one whose evaluation
    sent it; the other counts a cache hit, so the children's requests add up to the total.
    """
    paths: dict[tuple[str, str], Path] = {}
    usage: dict[str, dict[str, float]] = {c: {} for c in chunkers}
    for index, (artifact_path, source) in enumerate(sorted(evidence.items())):
        handles = {}
        try:
            for chunker in chunkers:
                path = folder / f"{index}-{name_part(chunker)}.jsonl"
                paths[(artifact_path, chunker)] = path
                handles[chunker] = path.open("w", encoding="utf-8")
            with source.open(encoding="utf-8") as lines:
                for line in lines:
                    if not line.strip():
                        continue
                    item = json.loads(line)
                    chunker = str(item.get("chunker"))
                    if chunker not in handles:
                        continue
                    handles[chunker].write(line if line.endswith("\n") else line + "\n")
                    if index == 0:
                        llm = (item.get("usage") or {}).get("llm") or {}
                        totals = usage[chunker]
                        for key, value in llm.items():
                            if is_finite(value):
                                totals[key] = totals.get(key, 0.0) + float(value)
        finally:
            for handle in handles.values():
                handle.close()
    return paths, usage
