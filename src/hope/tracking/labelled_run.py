"""The DVC ``labelled`` stage's MLflow run, in the store and experiment of the HOPE runs.

A parent run tagged ``hope.kind = labelled`` holds the benchmark's settings (params), the pooled τ
of every label-free score with every labelled target (``tau/<target>/<score>``; per corpus: the
table ``tau.json``), the headline scores' means (``corpus/<score>``; per corpus: the table
``domains.json``, the corpus plays the domain's part), LLM usage, the wall times and the stage's
files. A child per chunker (``hope.kind = labelled_chunker``, named ``labelled/<chunker>``, apart
from the HOPE runs' ``chunker`` runs named ``hope/<chunker>``) has the headline keys of every
chunker run (``budget_recall`` among them) and the labelled measures and baselines, and its LLM
usage, so that selecting the children and pressing *Compare* puts the chunkers side by side, as
for the HOPE runs. The run's key is the md5
of results.json: rerunning the stage on the same inputs logs into the same run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from hope.tracking.layout import KIND_TAG, LABELLED_CHILD_KIND, LABELLED_PARENT_KIND
from hope.tracking.names import name_part
from hope.tracking.provenance import file_md5s
from hope.tracking.record import RunRecord, log_run
from hope.tracking.stage import enabled_stage_settings, input_md5s

NOT_SCORES = ("doc_id", "domain", "chunker")


POOLED = "pooled"
TAU_TABLE = "tau.json"
# The τ that are metrics: each labelled target's. The τ with passage length and the partial τ
# given length (hope.labelled.passage_length) live in the table only: as metrics they would take
# the run past the 60 keys a run is held to (issue #33).
METRIC_TAUS = ("tau_budget_recall", "tau_recall", "tau_iou")


def flat_tau(metrics: Mapping[str, Any]) -> dict[str, float]:
    """metrics.json's pooled ``tau_<target>.pooled.<score>`` as ``tau/<target>/<score>`` for the
    labelled targets (per corpus, and the τ with passage length: ``tau_table``)."""
    flat = {}
    for key, block in metrics.items():
        if key not in METRIC_TAUS:
            continue
        for score, tau in (block.get(POOLED) or {}).items():
            if tau is not None:
                flat[f"tau/{key[4:]}/{name_part(score)}"] = float(tau)
    return flat


def tau_table(metrics: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Every τ (target, corpus or ``pooled``, score) as an MLflow table's columns."""
    table: dict[str, list[Any]] = {"target": [], "corpus": [], "score": [], "tau": []}
    for key, block in metrics.items():
        if not key.startswith("tau_"):
            continue
        for corpus, scores in block.items():
            for score, tau in scores.items():
                for column, value in zip(table, (key[4:], corpus, score, tau), strict=True):
                    table[column].append(value)
    return table


def labelled_record(
    params: Mapping[str, Any],
    out_dir: Path,
    metrics: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    timings: Mapping[str, float],
    data_hashes: Mapping[str, str],
    repo: Path,
    usage_by_chunker: Mapping[str, Mapping[str, float]] | None = None,
    chunker_configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunRecord:
    labelled = dict(params.get("labelled") or {})
    scores = [k for k in rows[0] if k not in NOT_SCORES] if rows else []
    md5 = file_md5s([out_dir / "results.json"])[str(out_dir / "results.json")]
    pooled = (metrics.get("tau_budget_recall") or {}).get("pooled") or {}
    objective = pooled.get("hope")
    return RunRecord(
        config={"labelled": {k: v for k, v in labelled.items() if k != "checksums"}},
        rows=rows,
        score_columns=scores,
        objective_name="tau_budget_recall_pooled_hope",
        objective=float("nan") if objective is None else float(objective),
        seeds={"labelled": labelled.get("seed")},
        usage=dict(metrics.get("usage") or {}),
        usage_by_chunker=dict(usage_by_chunker or {}),
        timings=dict(timings),
        artifacts={
            name: out_dir / name for name in ("results.json", "chunkers.csv", "metrics.json")
        },
        tags={
            KIND_TAG: LABELLED_PARENT_KIND,
            "hope.stage": "labelled",
            "hope.corpus": ",".join(labelled.get("corpora") or []),
            "hope.chunkers": ",".join(sorted({str(r["chunker"]) for r in rows})),
            "hope.results_md5": md5,
        },
        run_name=f"dvc labelled: {len(labelled.get('corpora') or [])} corpora",
        repo=repo,
        data_hashes=data_hashes,
        run_key=f"labelled:{md5}",
        child_scores=scores,
        extra_metrics=flat_tau(metrics),
        child_kind=LABELLED_CHILD_KIND,
        chunker_configs=dict(chunker_configs or {}),
        tables={TAU_TABLE: tau_table(metrics)},
        wall_s=timings.get("labelled"),
    )


def record_labelled_stage(
    params_path: Path | str,
    out_dir: Path | str,
    metrics: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    timings: Mapping[str, float],
    inputs: Sequence[Path | str],
    *,
    repo: Path | None = None,
    usage_by_chunker: Mapping[str, Mapping[str, float]] | None = None,
    chunker_configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> str | None:
    """Log the run when params.yaml's ``tracking:`` is enabled; returns its id, else None.
    ``inputs``: the files or folders the stage read (their md5s are the run's ``dvc.*`` params);
    ``usage_by_chunker``: each chunker's LLM usage, for its child run; ``chunker_configs``: each
    chunker's settings, its child run's ``chunker.*`` params."""
    repo = Path.cwd() if repo is None else repo
    settings = enabled_stage_settings(params_path, repo)
    if settings is None:
        return None
    params = yaml.safe_load(Path(params_path).read_text(encoding="utf-8")) or {}
    record = labelled_record(
        params,
        Path(out_dir),
        metrics,
        rows,
        timings,
        input_md5s(inputs),
        repo,
        usage_by_chunker,
        chunker_configs,
    )
    return log_run(record, settings)
