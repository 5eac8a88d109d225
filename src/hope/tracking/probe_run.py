"""The DVC ``probe`` stage's MLflow run, in the store and experiment of the HOPE runs.

A parent run tagged ``hope.kind = probe`` holds the probe's settings (params), the number of
questions and of significantly different chunker pairs, the wall times and the stage's files. A
child per chunker (``hope.kind = probe_chunker``, named ``probe/<chunker>``, apart from the HOPE
and labelled chunker runs) has the headline keys of every chunker run and the probe's measures per
domain averaged (``recall``, ``precision``, ``iou`` at k, ``budget_recall`` at the middle budget:
the keys of the labelled runs' children, and ``budget_recall_<chars>`` at every budget; per domain:
the table ``domains.json``), so that *Compare* puts chunkers side by side as for the HOPE and
labelled runs. The run's key is the md5 of results.json: rerunning the stage on
the same inputs logs into the same run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.tracking.layout import KIND_TAG, PROBE_CHILD_KIND, PROBE_PARENT_KIND
from hope.tracking.provenance import file_md5s
from hope.tracking.record import RunRecord, log_run
from hope.tracking.stage import enabled_stage_settings, input_md5s

NOT_SCORES = ("doc_id", "domain", "chunker", "n_passages")


def probe_record(
    probe_params: Mapping[str, Any],
    out_dir: Path,
    metrics: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    timings: Mapping[str, float],
    data_hashes: Mapping[str, str],
    repo: Path,
    chunker_configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunRecord:
    """``rows``: the stage's chunkers.csv rows; the pooled ones stay out of the children's means
    (each domain counts once, as in the HOPE runs). ``chunker_configs``: each chunker's settings,
    its child run's ``chunker.*`` params."""
    per_domain = [r for r in rows if r["domain"] != "pooled"]
    scores = [k for k in per_domain[0] if k not in NOT_SCORES] if per_domain else []
    md5 = file_md5s([out_dir / "results.json"])[str(out_dir / "results.json")]
    best = (metrics.get("ranking") or [None])[0]
    objective = (metrics.get("budget_recall") or {}).get(best)
    domains = sorted({str(r["domain"]) for r in per_domain})
    return RunRecord(
        config={"probe": dict(probe_params)},
        rows=per_domain,
        score_columns=scores,
        objective_name="probe_budget_recall_best",
        objective=float("nan") if objective is None else float(objective),
        seeds={"probe": probe_params.get("seed")},
        timings=dict(timings),
        artifacts={
            name: out_dir / name for name in ("results.json", "chunkers.csv", "metrics.json")
        },
        tags={
            KIND_TAG: PROBE_PARENT_KIND,
            "hope.stage": "probe",
            "hope.corpus": ",".join(domains),
            "hope.chunkers": ",".join(sorted({str(r["chunker"]) for r in per_domain})),
            "hope.results_md5": md5,
            "hope.probe_ranking": ",".join(metrics.get("ranking") or []),
        },
        run_name=f"dvc probe: {len(domains)} domains",
        repo=repo,
        data_hashes=data_hashes,
        run_key=f"probe:{md5}",
        child_scores=scores,
        extra_metrics={
            "probe/questions": float(metrics.get("questions") or 0),
            "probe/significant_pairs": float(metrics.get("significant_pairs") or 0),
        },
        child_kind=PROBE_CHILD_KIND,
        wall_s=timings.get("probe"),
        chunker_configs=dict(chunker_configs or {}),
    )


def record_probe_stage(
    params_path: Path | str,
    out_dir: Path | str,
    metrics: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    timings: Mapping[str, float],
    inputs: Sequence[Path | str],
    *,
    probe_params: Mapping[str, Any],
    chunker_configs: Mapping[str, Mapping[str, Any]] | None = None,
    repo: Path | None = None,
) -> str | None:
    """Log the run when params.yaml's ``tracking:`` is enabled; returns its id, else None.
    ``inputs``: the files the stage read (their md5s are the run's ``dvc.*`` params)."""
    repo = Path.cwd() if repo is None else repo
    settings = enabled_stage_settings(params_path, repo)
    if settings is None:
        return None
    record = probe_record(
        probe_params,
        Path(out_dir),
        metrics,
        rows,
        timings,
        input_md5s(inputs),
        repo,
        chunker_configs,
    )
    return log_run(record, settings)
