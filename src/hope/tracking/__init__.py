"""Experiment tracking in MLflow, one module per concern.

* ``settings``: the ``tracking`` config (conf/tracking/, params.yaml);
* ``secrets``: redaction of secret keys and secret environment values;
* ``provenance``: git commit and DVC data hashes;
* ``names``: safe metric/param names, flattened params, score aggregates;
* ``store``: the MLflow client, batches, artifacts, retries on a locked store;
* ``record``: one job (``RunRecord``) as one finished run (``log_run``);
* ``sweep``: a multirun as a parent run with child runs;
* ``stage``: the DVC ``hope`` stage's metrics.json and MLflow run.
"""

from hope.tracking.names import aggregate_metrics
from hope.tracking.provenance import dvc_hashes, git_commit
from hope.tracking.record import RunRecord, log_run
from hope.tracking.secrets import REDACTED, redact
from hope.tracking.settings import TrackingSettings

__all__ = [
    "REDACTED",
    "RunRecord",
    "TrackingSettings",
    "aggregate_metrics",
    "dvc_hashes",
    "git_commit",
    "log_run",
    "redact",
]
