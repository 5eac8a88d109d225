"""Logging the paper outputs (tables, figures, headline numbers) to an MLflow run.

The run is the parent run of the experiment run the outputs analyse: the run whose tag
``hope.scores_md5`` is the md5 of the scores.csv that was analysed (``hope.tracking.stage``,
``hope.pipeline.run``). Its chunker runs get the per-chunker BLEU and RAGAS means from the
analysed pairs (``pairs.csv``), under the keys every chunker run has (``hope.tracking.layout``).
Without such a run (scoring ran with tracking off, or elsewhere) the outputs get a run of their
own in the ``hope`` experiment, tagged ``hope.kind = paper``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from hope.tracking.names import is_finite

DEFAULT_EXPERIMENT = "hope"  # the experiment hope-run and the DVC hope stage log to
# The same store as `hope-run` (conf/tracking/mlflow.yaml): one `mlflow ui` shows both.
DEFAULT_STORE = "mlflow.db"


def resolve_tracking_uri(tracking_uri: str | None = None) -> str:
    """The given URI, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///<cwd>/mlflow.db``."""
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    return uri or f"sqlite:///{Path(DEFAULT_STORE).resolve()}"


@contextmanager
def _allow_file_store(uri: str) -> Iterator[None]:
    # MLflow >= 3.7 refuses folder stores unless this opt-out is set; the project keeps its runs
    # in a plain mlruns/ folder (no database server on build machines), so opt out for the
    # duration of the call only, leaving the caller's environment as it was. (A one-letter scheme
    # is a Windows drive.)
    scheme = urlparse(uri).scheme
    file_store = scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")
    if not file_store or "MLFLOW_ALLOW_FILE_STORE" in os.environ:
        yield
        return
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)


def flatten_metrics(value: Any, prefix: str = "") -> dict[str, float]:
    """Finite numeric leaves of a nested mapping, keyed ``a/b/c`` (MLflow metrics are numbers;
    ``/`` is the one separator of the project's metric names)."""
    out: dict[str, float] = {}
    if isinstance(value, Mapping):
        for key, item in value.items():
            out.update(flatten_metrics(item, f"{prefix}{key}/"))
    elif is_finite(value):
        out[prefix.rstrip("/")] = float(value)
    return out


def _metric_key(key: str) -> str:
    # MLflow allows alphanumerics, _ - . space / in metric names; the project's names use only
    # ``/`` to separate, so ``.`` and others (ζ) are replaced.
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_- /") else "_" for ch in key)


# paper_figures/metrics.json's blocks that are detail, not a summary: Table 2's cells (a table of
# the run), the leaderboard (a value per chunker: the chunker runs have it), the settings (params).
_TABLE2 = "table2"
_NOT_METRICS = (_TABLE2, "leaderboard_overall_hope", "settings")


def summary_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The run metrics of the analysis' metrics.json: its summaries under ``paper/``, without the
    blocks ``_NOT_METRICS`` (Table 2 is the table ``paper_table2.json``)."""
    kept = {k: v for k, v in metrics.items() if k not in _NOT_METRICS}
    return {f"paper/{_metric_key(k)}": v for k, v in sorted(flatten_metrics(kept).items())}


def table2_table(out_dir: Path, metrics: Mapping[str, Any]) -> Any | None:
    """Table 2's cells as an MLflow table: ``table2.csv`` (a row per indicator and score) where the
    analysis wrote one, else the cells of an older ``metrics.json`` (indicator x score: r, p, rho,
    n); None without either."""
    csv_file = out_dir / "table2.csv"
    if csv_file.is_file():
        import pandas as pd

        return pd.read_csv(csv_file)
    cells = metrics.get(_TABLE2)
    if not isinstance(cells, Mapping) or not cells:
        return None
    table: dict[str, list[Any]] = {
        "indicator": [],
        "score": [],
        "r": [],
        "p": [],
        "rho": [],
        "n": [],
    }
    for indicator, by_score in cells.items():
        for score, cell in (by_score or {}).items():
            table["indicator"].append(str(indicator))
            table["score"].append(str(score))
            for key in ("r", "p", "rho", "n"):
                table[key].append((cell or {}).get(key))
    return table


def log_outputs_to_mlflow(
    out_dir: str | Path,
    run_id: str | None = None,
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str = "paper-outputs",
    artifact_path: str | None = "paper_figures",
    scores: str | Path | None = None,
    files: Iterable[str | Path] | None = None,
) -> str:
    """Log every file under ``out_dir`` as artifacts, and ``metrics.json``'s summaries as
    metrics (``paper/<key>``; Table 2 as the table ``paper_table2.json``).

    ``files`` (paths under ``out_dir``, e.g. from :func:`run_output_files`) logs only those: the
    outputs of this run, not another file that lives in the folder (a committed benchmark figure).

    The run is ``run_id`` if given, else the active run (``mlflow.start_run``), else the parent
    run of the experiment run whose ``scores`` (the analysed scores.csv) these outputs analyse,
    else a new run in ``experiment`` that is ended afterwards. The tracking URI is
    ``tracking_uri``, else ``MLFLOW_TRACKING_URI``, else ``./mlflow.db``; an active run keeps the
    URI it was started with. Returns the run id.
    """
    import mlflow
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise FileNotFoundError(f"no output folder {out_dir} to log")
    active = mlflow.active_run() if run_id is None else None
    uri = mlflow.get_tracking_uri() if active else resolve_tracking_uri(tracking_uri)
    with _allow_file_store(uri):
        client = MlflowClient(tracking_uri=uri)
        created = False
        parent = None
        if run_id is None and active is not None:
            run_id = active.info.run_id
        elif run_id is None and scores is not None:
            parent = experiment_parent_run(client, scores)
            run_id = parent.info.run_id if parent is not None else None
        if run_id is None:
            from hope.tracking.store import EXPERIMENT_KIND_TAG, RUNS_VIEW_KIND, ensure_runs_view

            found = client.get_experiment_by_name(experiment)
            if found is not None:
                ensure_runs_view(client, found)
                experiment_id = found.experiment_id
            else:
                kind = {EXPERIMENT_KIND_TAG: RUNS_VIEW_KIND}
                experiment_id = client.create_experiment(experiment, tags=kind)
            tags = {"hope.kind": "paper"}
            if scores is not None:
                tags["hope.note"] = f"no MLflow run has the scores {scores} analysed here"
            run_id = client.create_run(experiment_id, run_name=run_name, tags=tags).info.run_id
            created = True
        try:
            if files is None:
                client.log_artifacts(run_id, str(out_dir), artifact_path=artifact_path)
            else:
                _log_files(client, run_id, out_dir, files, artifact_path)
            metrics_file = out_dir / "metrics.json"
            if metrics_file.is_file():
                summary = json.loads(metrics_file.read_text(encoding="utf-8"))
                values = summary_metrics(summary)
                now = int(time.time() * 1000)
                client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in values.items()])
                table = table2_table(out_dir, summary)
                if table is not None:
                    from hope.tracking.store import log_table

                    log_table(client, run_id, table, "paper_table2.json")
            if parent is not None and (out_dir / "pairs.csv").is_file():
                log_chunker_outcomes(client, parent, out_dir / "pairs.csv")
        except BaseException:
            if created:
                client.set_terminated(run_id, status="FAILED")
            raise
        if created:
            client.set_terminated(run_id)
    return run_id


def run_output_files(out_dir: str | Path, repo: str | Path) -> list[Path] | None:
    """The files under ``out_dir`` that the pipeline writes (the outputs, metrics and plots
    ``<repo>/dvc.yaml`` declares), as they exist now; None without a dvc.yaml (then everything).

    ``paper_figures/`` also holds files no stage of this run writes: its README and the figure
    of the labelled benchmark's record (``labelled_vs_hope.png``, written by
    ``bench/bench_labelled.py`` for ``bench/results/``), which are not this run's outputs.
    """
    from hope.tracking.provenance import dvc_written_paths

    repo = Path(repo)
    if not (repo / "dvc.yaml").is_file():
        return None
    root = Path(out_dir).resolve()
    found = []
    for declared in dvc_written_paths(repo):
        path = (repo / declared).resolve()
        if path.is_relative_to(root) and path.is_file():
            found.append(path)
        elif path.is_relative_to(root) and path.is_dir():
            found.extend(p for p in path.rglob("*") if p.is_file())
    return sorted(set(found))


def _log_files(
    client: Any,
    run_id: str,
    out_dir: Path,
    files: Iterable[str | Path],
    artifact_path: str | None,
) -> None:
    root = out_dir.resolve()
    for file in files:
        path = Path(file) if Path(file).is_absolute() else out_dir / file
        folder = path.resolve().relative_to(root).parent.as_posix()
        parts = [p for p in (artifact_path, "" if folder == "." else folder) if p]
        client.log_artifact(run_id, str(path), artifact_path="/".join(parts) or None)


def experiment_parent_run(client: Any, scores: str | Path) -> Any | None:
    """The newest parent run (any experiment) tagged with the md5 of the ``scores`` file."""
    from hope.tracking.layout import is_chunker_run
    from hope.tracking.provenance import file_md5s

    path = Path(scores)
    if not path.is_file():
        return None
    md5 = file_md5s([path])[str(path)]
    experiments = [e.experiment_id for e in client.search_experiments()]
    if not experiments:
        return None
    runs = client.search_runs(
        experiments, filter_string=f"tags.`hope.scores_md5` = '{md5}'", max_results=100
    )
    parents = [r for r in runs if not is_chunker_run(r)]
    return max(parents, key=lambda r: r.info.start_time or 0) if parents else None


def log_chunker_outcomes(client: Any, parent: Any, pairs_csv: Path) -> dict[str, str]:
    """BLEU and the RAGAS indicators of the analysed pairs, per chunker, on the parent's chunker
    runs (their ``bleu`` and ``<indicator>`` keys, which scoring logged as NaN); returns chunker
    -> run id."""
    import pandas as pd

    from hope.tracking.layout import (
        CHUNKER_TAG,
        PARENT_TAG,
        RAG_INDICATORS,
        chunker_metrics,
        find_runs_by_tag,
    )
    from hope.tracking.store import log_batches

    frame = pd.read_csv(pairs_csv)
    if "chunker" not in frame.columns:
        return {}
    scores = [c for c in ("bleu", *RAG_INDICATORS) if c in frame.columns]
    children = find_runs_by_tag(client, parent.info.experiment_id, {PARENT_TAG: parent.info.run_id})
    logged: dict[str, str] = {}
    for child in children:
        chunker = child.data.tags.get(CHUNKER_TAG)
        rows = frame[frame["chunker"].astype(str) == str(chunker)]
        if chunker is None or rows.empty:
            continue
        metrics = chunker_metrics(rows.to_dict("records"), scores=scores)
        log_batches(client, child.info.run_id, {}, {s: metrics[s] for s in scores}, keep_nan=True)
        logged[str(chunker)] = child.info.run_id
    return logged
