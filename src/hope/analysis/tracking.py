"""Logging the paper outputs (tables, figures, headline numbers) to an MLflow run."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

DEFAULT_EXPERIMENT = "hope-paper"
# The same store as `hope-run` (conf/tracking/mlflow.yaml): one `mlflow ui` shows both.
DEFAULT_STORE = "mlflow.db"


def resolve_tracking_uri(tracking_uri: str | None = None) -> str:
    """The given URI, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///<cwd>/mlflow.db``."""
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    return uri or f"sqlite:///{Path(DEFAULT_STORE).resolve()}"


def _is_file_store(uri: str) -> bool:
    scheme = urlparse(uri).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


@contextmanager
def _allow_file_store(uri: str) -> Iterator[None]:
    # MLflow >= 3.7 refuses folder stores unless this opt-out is set; the project keeps its runs
    # in a plain mlruns/ folder (no database server on build machines), so opt out for the
    # duration of the call only, leaving the caller's environment as it was.
    if not _is_file_store(uri) or "MLFLOW_ALLOW_FILE_STORE" in os.environ:
        yield
        return
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)


def flatten_metrics(value: Any, prefix: str = "") -> dict[str, float]:
    """Finite numeric leaves of a nested mapping, keyed ``a.b.c`` (MLflow metrics are numbers)."""
    out: dict[str, float] = {}
    if isinstance(value, Mapping):
        for key, item in value.items():
            out.update(flatten_metrics(item, f"{prefix}{key}."))
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int | float) and math.isfinite(value):
        out[prefix.rstrip(".")] = float(value)
    return out


def _metric_key(key: str) -> str:
    # MLflow allows alphanumerics, _ - . space / in metric names; others (ζ) are replaced.
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-. /") else "_" for ch in key)


def log_outputs_to_mlflow(
    out_dir: str | Path,
    run_id: str | None = None,
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str = "paper-outputs",
    artifact_path: str | None = "paper_figures",
) -> str:
    """Log every file under ``out_dir`` as artifacts, and ``metrics.json`` as metrics.

    The run is ``run_id`` if given, else the active run (``mlflow.start_run``), else a new run in
    ``experiment`` that is ended afterwards. The tracking URI is ``tracking_uri``, else
    ``MLFLOW_TRACKING_URI``, else ``./mlflow.db``; an active run keeps the URI it was started with.
    Returns the run id.
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
        if run_id is None and active is not None:
            run_id = active.info.run_id
        elif run_id is None:
            found = client.get_experiment_by_name(experiment)
            experiment_id = found.experiment_id if found else client.create_experiment(experiment)
            run_id = client.create_run(experiment_id, run_name=run_name).info.run_id
            created = True
        try:
            client.log_artifacts(run_id, str(out_dir), artifact_path=artifact_path)
            metrics_file = out_dir / "metrics.json"
            if metrics_file.is_file():
                values = flatten_metrics(json.loads(metrics_file.read_text(encoding="utf-8")))
                now = int(time.time() * 1000)
                client.log_batch(
                    run_id,
                    metrics=[Metric(_metric_key(k), v, now, 0) for k, v in sorted(values.items())],
                )
        except BaseException:
            if created:
                client.set_terminated(run_id, status="FAILED")
            raise
        if created:
            client.set_terminated(run_id)
    return run_id
