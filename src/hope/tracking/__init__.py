"""Experiment tracking: one pipeline job becomes one MLflow run (see ``mlflow_run``)."""

from hope.tracking.mlflow_run import (
    REDACTED,
    RunRecord,
    aggregate_metrics,
    dvc_hashes,
    git_commit,
    log_run,
    redact,
)

__all__ = [
    "REDACTED",
    "RunRecord",
    "aggregate_metrics",
    "dvc_hashes",
    "git_commit",
    "log_run",
    "redact",
]
