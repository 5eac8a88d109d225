"""``run(cfg)``: one experiment job from a composed ``conf/config.yaml``.

Steps, each a pure function of the config where it can be:

1. documents: ``data.documents`` if given; else the DVC output ``data/prepared/documents.jsonl``
   when its manifest was made for this corpus group (same profile, seed, minimum length, counts and
   source location); else the corpus is fetched/copied and prepared into the job's folder with the
   same code as the DVC stages (``hope.stages.download_stage`` / ``prepare``);
2. chunkers: the selected ``chunker`` group config (one, sweepable, parameters overridable), or
   every name in ``chunkers``;
3. HOPE for every (document, chunker) pair (``hope.pipeline.score_step.score_pairs``), BLEU if
enabled;
4. outputs in the job folder (scores.csv, evidence.jsonl, summary.json, chunks_summary.json) and,
   with tracking on, one MLflow run (a child of the sweep's run in a multirun);
5. returns the objective: the mean of ``objective``'s column over the pairs where it is defined.

``dry_run=true`` stops after step 2 and prints the LLM work instead (``hope.pipeline.estimate``).
``objective=probe`` replaces steps 3-5 by the probe (:func:`probe_job`): no LLM call, the
objective is the job's chunkers' pooled probe recall at the middle budget, so an Optuna sweep
(conf/sweep/optuna_probe.yaml) tunes a chunker to a retrieval setting without labels.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from hope.chunking.registry import Chunker, chunker_from_config, load_chunkers
from hope.core.chunk_cache import cached_chunks
from hope.core.io import atomic_path, file_sha256, jsonl_lines, write_json_atomic
from hope.core.result import check_something_scored
from hope.core.stage_records import check_documents
from hope.corpora import DOMAINS
from hope.corpora.base import portable_location
from hope.corpora.corpus_config import load_params, profile_of, resolve_source, target_count
from hope.pipeline.chunk_step import chunk_pair, passage_sizes
from hope.pipeline.chunk_step import summarise as summarise_chunks
from hope.pipeline.config_schema import RunConfig, validate_run_config
from hope.pipeline.shards import (
    SHARD_FILE,
    ShardError,
    ShardSettings,
    select_shard,
    shard_record,
)
from hope.pipeline.stage_support import read_records

log = logging.getLogger("hope.pipeline")

_CORPUS_KEYS = ("profile", "seed", "min_chars", "counts", "mirror_path")


def _repo() -> Path:
    from hope.pipeline import REPO_ROOT

    return REPO_ROOT


def _plain(node: Any) -> Any:
    if isinstance(node, DictConfig) or OmegaConf.is_config(node):
        return OmegaConf.to_container(node, resolve=True)
    return node


# --- 1. documents --------------------------------------------------------------------------------


def corpora_config(corpus: Mapping[str, Any], params_path: Path) -> dict[str, Any]:
    """The ``corpora:`` params the stages understand, with the corpus group's choices applied.

    Source locations (URLs, revisions, checksums, mirror files) stay those of params.yaml, the one
    place DVC also reads; the group picks the profile, seed, counts and mirror folder.
    """
    cfg = load_params(params_path)
    for key in _CORPUS_KEYS:
        if corpus.get(key) is not None:
            cfg[key] = corpus[key]
    profile = profile_of(cfg)
    if "allow_shortfall" in corpus:
        cfg["allow_shortfall"] = {
            **cfg.get("allow_shortfall", {}),
            profile: corpus["allow_shortfall"],
        }
    return cfg


def prepared_matches(manifest: Mapping[str, Any], cfg: Mapping[str, Any]) -> bool:
    """Whether a prepare-stage manifest was produced for exactly this corpus configuration."""
    if manifest.get("profile") != profile_of(dict(cfg)):
        return False
    if manifest.get("seed") != cfg.get("seed") or manifest.get("min_chars") != cfg.get("min_chars"):
        return False
    domains = manifest.get("domains") or {}
    for domain in DOMAINS:
        report = domains.get(domain)
        if report is None or report.get("requested") != target_count(dict(cfg), domain):
            return False
        spec = (report.get("download") or {}).get("spec") or {}
        if spec.get("base") != portable_location(resolve_source(dict(cfg), domain).base):
            return False
    return True


def prepare_corpus(cfg: Mapping[str, Any], work_dir: Path) -> Path:
    """Download (or copy from the mirror / package) and prepare into ``work_dir``."""
    from hope.pipeline.download_step import run_download
    from hope.pipeline.prepare_step import run_prepare

    raw = work_dir / "raw"
    for domain in DOMAINS:
        run_download(dict(cfg), domain, raw / domain)
    run_prepare(dict(cfg), raw, work_dir / "prepared")
    return work_dir / "prepared" / "documents.jsonl"


def locate_documents(
    config: RunConfig, work_dir: Path, *, allow_fetch: bool = True
) -> tuple[Path | None, str]:
    """(documents.jsonl, how it was found); (None, reason) when only an online fetch would do."""
    if config.data.documents:
        return Path(config.data.documents).expanduser().resolve(), "data.documents"
    repo = _repo()
    corpora = corpora_config(config.corpus.model_dump(exclude_unset=True), repo / "params.yaml")
    prepared = repo / "data" / "prepared"
    manifest_path = prepared / "manifest.json"
    if (prepared / "documents.jsonl").is_file() and manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if prepared_matches(manifest, corpora):
            return prepared / "documents.jsonl", "DVC output data/prepared (manifest matches)"
    if not allow_fetch and profile_of(corpora) == "paper":
        return None, "the paper corpus is not prepared here and a dry run fetches nothing"
    return prepare_corpus(corpora, work_dir / "corpus"), f"prepared into {work_dir / 'corpus'}"


def load_documents(path: Path, doc_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    documents = read_records(path, "documents", check_documents)
    wanted = set(doc_ids or ())
    if unknown := wanted - {d["doc_id"] for d in documents}:
        raise ValueError(f"data.doc_ids names unknown documents: {sorted(unknown)}")
    return [d for d in documents if d["doc_id"] in wanted] if wanted else documents


# --- 2. chunkers ---------------------------------------------------------------------------------


def select_chunkers(config: RunConfig) -> list[Chunker]:
    if config.chunker:
        return [chunker_from_config(dict(config.chunker))]
    return load_chunkers(list(config.chunkers), _repo() / "conf" / "chunker")


# --- 3-5. scoring, outputs, tracking -------------------------------------------------------------


def objective_value(rows: Sequence[Mapping[str, Any]], column: str) -> float:
    if rows and column not in rows[0]:
        raise ValueError(f"objective {column!r} is not a score column: {sorted(rows[0])}")
    values = [r[column] for r in rows if isinstance(r.get(column), int | float)]
    values = [float(v) for v in values if math.isfinite(v)]
    return sum(values) / len(values) if values else math.nan


def merge_bleu(rows: list[dict[str, Any]], bleu: Sequence[Mapping[str, Any]]) -> None:
    by_pair = {(b["doc_id"], b["chunker"]): b["bleu"] for b in bleu}
    for row in rows:
        row["bleu"] = by_pair.get((row["doc_id"], row["chunker"]))


def job_output_dir(output_dir: Path | None) -> Path:
    from hydra.core.hydra_config import HydraConfig

    if output_dir is not None:
        path = Path(output_dir)
    elif HydraConfig.initialized():
        path = Path(HydraConfig.get().runtime.output_dir)
    else:
        path = Path(tempfile.mkdtemp(prefix="hope-run-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_name(config: RunConfig, chunkers: Sequence[Chunker]) -> str:
    chunking = chunkers[0].name if len(chunkers) == 1 else f"{len(chunkers)} chunkers"
    name = f"{config.corpus.profile}/{chunking}/{config.hope.profile}"
    shard = shard_settings(config)
    return f"{name} shard {shard.index}/{shard.count}" if shard.active else name


def shard_settings(config: RunConfig) -> ShardSettings:
    """The job's ``shard`` settings (hope.pipeline.shards), a named error if they are wrong."""
    from pydantic import ValidationError

    try:
        return ShardSettings(**config.shard)
    except ValidationError as exc:
        raise ShardError(f"shard: {exc}") from exc


def run(cfg: DictConfig | RunConfig, *, output_dir: Path | None = None) -> float:
    """One job; returns the objective (NaN when no pair has it defined). ``cfg`` is validated
    into a ``RunConfig`` first; every step gets that, never the raw composed config."""
    from hope.models.factory import build_evaluator
    from hope.pipeline.bleu_step import bleu_scores
    from hope.pipeline.score_step import (
        SCORE_COLUMNS,
        EvidenceStream,
        score_pair_stream,
        score_row,
        summarise,
        write_score_outputs,
    )
    from hope.tracking import TrackingSettings

    config = cfg if isinstance(cfg, RunConfig) else validate_run_config(_plain(cfg))
    started = time.perf_counter()
    timings: dict[str, float] = {}
    out = job_output_dir(output_dir)

    mark = time.perf_counter()
    path, origin = locate_documents(config, out, allow_fetch=not config.dry_run)
    chunkers = select_chunkers(config)
    shard = shard_settings(config)
    if config.dry_run:
        from hope.pipeline.estimate import estimate_for_config, format_estimate

        documents = load_documents(path, config.data.doc_ids) if path is not None else None
        if documents is not None:
            documents, chunkers = select_shard(shard, documents, chunkers)
        estimate = estimate_for_config(config, documents, chunkers)
        print(format_estimate(estimate, origin))
        write_json_atomic(out / "estimate.json", estimate.to_dict())
        return float(estimate.total("to_send"))
    documents, chunkers = select_shard(shard, load_documents(path, config.data.doc_ids), chunkers)
    timings["prepare"] = time.perf_counter() - mark
    log.info("%d documents (%s), chunkers %s", len(documents), origin, [c.name for c in chunkers])
    if config.objective == "probe":
        return probe_job(config, documents, chunkers, out, timings)

    # Each document is chunked when its pairs' turn comes, and its passages go to passages.jsonl
    # (and through BLEU) at once: the run holds the passages of the pairs in flight, not the
    # corpus's. The file is written in chunker-major order, as the chunk stage writes it.
    evaluator = build_evaluator(config)
    llm = evaluator.llm
    # The observer sampling the job's LLM calls for MLflow traces, or None (tracking off).
    llm.on_call = recorder = TrackingSettings.from_mapping(config.tracking).trace_recorder()
    sizes: list[tuple[str, str, int]] = []
    bleu: list[dict[str, Any]] = []
    timings["chunk"] = 0.0
    if config.bleu.enabled:
        timings["bleu"] = 0.0

    def pairs(passages_file: Any) -> Iterator[tuple[dict[str, Any], str, list[dict[str, Any]]]]:
        for chunker in chunkers:
            for document in documents:
                mark = time.perf_counter()
                records = cached_chunks(
                    evaluator.result_cache,
                    chunker.config,
                    document,
                    lambda chunker=chunker, document=document: chunk_pair(chunker, document),
                )
                timings["chunk"] += time.perf_counter() - mark
                passages_file.writelines(jsonl_lines(records))
                sizes.extend(passage_sizes(records))
                if config.bleu.enabled:
                    mark = time.perf_counter()
                    bleu.extend(
                        bleu_scores(
                            [document],
                            records,
                            tokenize=config.bleu.tokenize,
                            joiner=config.bleu.joiner,
                        )
                    )
                    timings["bleu"] += time.perf_counter() - mark
                yield document, chunker.name, records

    mark = time.perf_counter()
    with (
        atomic_path(out / "passages.jsonl") as passages_path,
        passages_path.open("w", encoding="utf-8") as passages_file,
        EvidenceStream(out / "evidence.jsonl") as stream,  # written as pairs finish
    ):
        scored = asyncio.run(
            score_pair_stream(
                evaluator,
                pairs(passages_file),
                total=len(documents) * len(chunkers),
                parallel_pairs=config.scoring.parallel_pairs,
                progress=config.hope.progress,
                on_result=stream,
            )
        )
        # Inside the block: raising here discards passages.jsonl and the evidence written so far.
        check_something_scored(
            (r for _, _, r in scored), f" of the {len(scored)} (document, chunker) pairs"
        )
    # The pairs in (doc_id, chunker) order, as the stage writes them.
    scored.sort(key=lambda item: (item[0]["doc_id"], item[1]))
    timings["score"] = time.perf_counter() - mark - timings["chunk"] - timings.get("bleu", 0.0)
    rows = [score_row(*item) for item in scored]
    columns = list(SCORE_COLUMNS)
    if config.bleu.enabled:
        merge_bleu(rows, bleu)
        columns.append("bleu")
    objective = objective_value(rows, config.objective)

    summary = summarise(scored, llm.usage.to_dict())
    timings["total"] = time.perf_counter() - started
    summary.update(
        {
            "documents_origin": origin,
            "documents_path": str(path),
            "documents_sha256": file_sha256(path),
            "chunkers": [c.name for c in chunkers],
            "objective": {
                "name": config.objective,
                "value": None if math.isnan(objective) else objective,
            },
            "timings_s": timings,
        }
    )
    if shard.active:
        summary["shard"] = shard_record(shard, config.model_dump(mode="json"), documents, chunkers)
    write_score_outputs(out, rows, summary)
    if shard.active:
        write_json_atomic(out / SHARD_FILE, summary["shard"])
    write_json_atomic(out / "chunks_summary.json", summarise_chunks(sizes, chunkers))
    traces = recorder.calls if recorder is not None else ()
    track(config, rows, columns, summary, objective, out, chunkers, traces)
    log.info("objective %s = %s (%d pairs) -> %s", config.objective, objective, len(rows), out)
    return objective


def probe_job(
    config: RunConfig,
    documents: Sequence[Mapping[str, Any]],
    chunkers: Sequence[Chunker],
    out: Path,
    timings: dict[str, float],
) -> float:
    """The job with ``objective=probe``: chunk (cached), probe every chunking per domain
    (``hope.pipeline.probe_step``), write passages.jsonl and the probe stage's files (results.json,
    chunkers.csv, metrics.json), log
    the probe's MLflow run (a child of the sweep's run in a multirun) and return the mean over the
    job's chunkers of their pooled recall at the probe's middle budget."""
    from hope.core.io import csv_text, json_text, write_atomic
    from hope.models.factory import embedder_preset, open_cache
    from hope.pipeline.probe_step import probe_metrics, probe_rows, probe_writer, run_probe

    started = time.perf_counter()
    cache = open_cache(config.cache.path)
    passages = [
        record
        for chunker in chunkers
        for document in documents
        for record in cached_chunks(
            cache,
            chunker.config,
            document,
            lambda chunker=chunker, document=document: chunk_pair(chunker, document),
        )
    ]
    write_atomic(out / "passages.jsonl", jsonl_lines(passages))
    timings["chunk"] = time.perf_counter() - started
    settings = config.probe.settings()
    report, probe_timings = run_probe(
        documents,
        passages,
        embedder_preset(config.probe.embedder, config.cache.path),
        settings,
        probe_writer(config.probe.writer, config.probe.llm, config.cache.path),
    )
    timings["probe"] = sum(probe_timings.values())
    rows = probe_rows(report, settings)
    metrics = probe_metrics(report, settings)
    write_atomic(out / "results.json", json_text(report))
    write_atomic(out / "chunkers.csv", csv_text(rows))
    write_atomic(out / "metrics.json", json_text(metrics))
    values = [v for v in metrics["budget_recall"].values() if v is not None]
    objective = sum(values) / len(values) if values else math.nan
    track_probe(config, rows, metrics, objective, out, chunkers, timings)
    log.info("objective probe (%s) = %s -> %s", metrics["measure"], objective, out)
    return objective


def track_probe(
    config: RunConfig,
    rows: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Any],
    objective: float,
    out: Path,
    chunkers: Sequence[Chunker],
    timings: Mapping[str, float],
) -> str | None:
    """The probe job's MLflow run: the probe stage's record (hope.tracking.probe_run) as a job,
    under the sweep's run in a multirun."""
    from dataclasses import replace

    from hope.pipeline.callbacks import job_context
    from hope.tracking import TrackingSettings, log_run
    from hope.tracking.probe_run import probe_record
    from hope.tracking.provenance import file_md5s

    settings = TrackingSettings.from_mapping(config.tracking)
    if not settings.enabled:
        return None
    parent_run_id, job_tags = job_context()
    record = probe_record(
        config.probe.model_dump(),
        out,
        metrics,
        rows,
        timings,
        file_md5s([out / "passages.jsonl"]),
        _repo(),
    )
    record = replace(
        record,
        config=config.model_dump(mode="json"),
        objective_name="probe",
        objective=objective,
        run_key=None,
        run_name=f"probe/{run_name(config, chunkers)}",
        tags={**record.tags, "hope.kind": "job", "hope.output_dir": str(out), **job_tags},
        chunker_configs={c.name: c.config for c in chunkers},
    )
    return log_run(record, settings, parent_run_id=parent_run_id)


def shard_tags(config: RunConfig) -> dict[str, str]:
    shard = shard_settings(config)
    if not shard.active:
        return {}
    return {"hope.shard": f"{shard.index}/{shard.count}", "hope.shard_by": shard.by}


def track(
    config: RunConfig,
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    summary: Mapping[str, Any],
    objective: float,
    out: Path,
    chunkers: Sequence[Chunker],
    traces: Sequence[Any] = (),
) -> str | None:
    """Log the job as a parent run with a child run per chunker (``hope.tracking.record``); usage,
    failures and timings come from ``summary``."""
    from hope.pipeline.callbacks import job_context
    from hope.tracking import RunRecord, TrackingSettings, log_run
    from hope.tracking.datasets import CHUNKS, CORPUS, DataFile
    from hope.tracking.provenance import file_md5s
    from hope.tracking.stage import failures_per_chunker, scores_key

    settings = TrackingSettings.from_mapping(config.tracking)
    if not settings.enabled:
        return None
    parent_run_id, job_tags = job_context()
    failures = {
        metric: sum(by_chunker.values())
        for metric, by_chunker in summary["failures_by_metric_and_chunker"].items()
    }
    documents = Path(str(summary.get("documents_path") or out / "documents.jsonl"))
    datasets = [
        DataFile(role, path, file_md5s([path])[str(path)])
        for role, path in ((CORPUS, documents), (CHUNKS, out / "passages.jsonl"))
        if path.is_file()
    ]
    record = RunRecord(
        config=config.model_dump(mode="json"),
        rows=rows,
        score_columns=columns,
        objective_name=config.objective,
        objective=objective,
        seeds={"corpus": config.corpus.seed, "hope": config.hope.seed},
        prompts=summary.get("prompts") or {},
        usage=summary["usage"],
        failures=failures,
        timings=summary["timings_s"],
        artifacts={
            "scores.csv": out / "scores.csv",
            "summary.json": out / "summary.json",
            "chunks_summary.json": out / "chunks_summary.json",
        },
        evidence_artifacts={"evidence.jsonl": out / "evidence.jsonl"},
        tags={
            "hope.kind": "job",
            "hope.corpus": config.corpus.profile,
            "hope.profile": config.hope.profile,
            "hope.llm": str(config.llm["model"]),
            "hope.chunkers": ",".join(c.name for c in chunkers),
            "hope.output_dir": str(out),
            "hope.scores_md5": scores_key(out / "scores.csv")[1],
            **job_tags,
            **shard_tags(config),
        },
        extra_params={
            "data.documents_sha256": summary.get("documents_sha256", ""),
            "data.origin": summary.get("documents_origin", ""),
        },
        run_name=run_name(config, chunkers),
        repo=_repo(),
        datasets=datasets,
        failures_by_chunker=failures_per_chunker(summary),
        chunker_configs={c.name: c.config for c in chunkers},
        traces=traces,
        wall_s=summary["timings_s"].get("total"),
    )
    run_id = log_run(record, settings, parent_run_id=parent_run_id)
    log.info("MLflow run %s at %s", run_id, settings.uri)
    return run_id
