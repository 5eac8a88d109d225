"""The MLflow store, through ``MlflowClient`` with an explicit tracking URI (never the fluent
API's process-global active run, so that parallel jobs cannot cross-log), with retries for a
shared SQLite store that a parallel writer holds locked for a moment."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hope.tracking.names import is_finite
from hope.tracking.secrets import scrub
from hope.tracking.tracking_settings import TrackingSettings

# The experiment's kind (tag ``mlflow.experimentKind``): ``custom_model_development`` ("Machine
# learning"), not ``genai_development`` (inferred for an experiment with traces). MLflow 3.17's UI
# reads it only without its GenAI/model-training switch, which that release always shows (its
# mode is a browser setting): the links of hope.tracking.views carry the mode.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
RUNS_VIEW_KIND = "custom_model_development"
_PARAMS_PER_BATCH = 100
_METRICS_PER_BATCH = 1000
T = TypeVar("T")


def client_for(settings: TrackingSettings):
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=settings.uri, registry_uri=settings.uri)


def with_retry(operation: Callable[[], T], attempts: int = 8) -> T:
    for attempt in range(attempts):
        try:
            return operation()
        except Exception as exc:
            if "locked" not in str(exc).lower() or attempt == attempts - 1:
                raise
            time.sleep(0.2 * 2**attempt)
    raise AssertionError("unreachable: the last attempt raises")


def experiment_id(client: Any, settings: TrackingSettings) -> str:
    """The id of the tracking experiment, created (as an ML experiment, which opens on its runs)
    when missing; an existing one without a kind gets that kind."""
    from mlflow.exceptions import MlflowException

    existing = client.get_experiment_by_name(settings.experiment_name)
    if existing is not None:
        ensure_runs_view(client, existing)
        return existing.experiment_id
    location = None
    if settings.artifact_root:
        location = Path(settings.artifact_root).resolve().as_uri()
    try:
        return client.create_experiment(
            settings.experiment_name,
            artifact_location=location,
            tags={EXPERIMENT_KIND_TAG: RUNS_VIEW_KIND},
        )
    except MlflowException:
        # A parallel job created it between the lookup and the create.
        again = client.get_experiment_by_name(settings.experiment_name)
        if again is None:
            raise
        ensure_runs_view(client, again)
        return again.experiment_id


def ensure_runs_view(client: Any, experiment: Any) -> None:
    """Tag ``experiment`` as an ML experiment (its page opens on the runs) unless it has a kind:
    a kind someone chose in the UI stays."""
    if EXPERIMENT_KIND_TAG not in (getattr(experiment, "tags", None) or {}):
        with_retry(
            lambda: client.set_experiment_tag(
                experiment.experiment_id, EXPERIMENT_KIND_TAG, RUNS_VIEW_KIND
            )
        )


def log_batches(
    client: Any,
    run_id: str,
    params: Mapping[str, str],
    metrics: Mapping[str, float],
    *,
    keep_nan: bool = False,
) -> None:
    """Params and the finite metrics, in batches of MLflow's size limits. ``keep_nan`` logs every
    metric, NaN included: a chunker run's keys must exist in every child (``hope.tracking.layout``),
    so there NaN is a value."""
    from mlflow.entities import Metric, Param

    now = int(time.time() * 1000)
    items = list(params.items())
    for i in range(0, len(items), _PARAMS_PER_BATCH):
        batch = [Param(k, v) for k, v in items[i : i + _PARAMS_PER_BATCH]]
        with_retry(lambda batch=batch: client.log_batch(run_id, params=batch))
    values = [(k, v) for k, v in metrics.items() if keep_nan or is_finite(v)]
    for i in range(0, len(values), _METRICS_PER_BATCH):
        batch = [Metric(k, float(v), now, 0) for k, v in values[i : i + _METRICS_PER_BATCH]]
        with_retry(lambda batch=batch: client.log_batch(run_id, metrics=batch))


def log_table(client: Any, run_id: str, data: Any, artifact_file: str) -> None:
    """``data`` (column -> values, or a DataFrame) as the MLflow table ``artifact_file`` of the
    run, replacing a table of that name: ``MlflowClient.log_table`` appends to an existing one,
    so that logging into the same run again (a rerun of a stage on the same inputs) would list
    every row twice."""
    import pandas as pd

    directory, _, name = artifact_file.rpartition("/")
    listed = with_retry(lambda: client.list_artifacts(run_id, directory or None))
    if artifact_file not in {item.path for item in listed}:
        with_retry(lambda: client.log_table(run_id, data, artifact_file))
        return
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    with tempfile.TemporaryDirectory(prefix="hope-table-") as tmp:
        target = Path(tmp) / name
        frame.to_json(target, orient="split", index=False, date_format="iso")
        with_retry(
            lambda: client.log_artifact(run_id, str(target), artifact_path=directory or None)
        )


def log_file(
    client: Any, run_id: str, artifact_path: str, local: Path, secrets: Sequence[str]
) -> None:
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
