"""Experiment tracking in MLflow, one module per concern.

* ``settings``: the ``tracking`` config (conf/tracking/, params.yaml);
* ``secrets``: redaction of secret keys and secret environment values;
* ``provenance``: git commit and DVC data hashes;
* ``names``: safe metric/param names, flattened params, score aggregates;
* ``store``: the MLflow client, the experiment (an ML experiment: it opens on its runs), batches,
  artifacts, retries on a locked store;
* ``layout``: a parent run per experiment run (``get_or_create_parent_run``, by a key, for
  whoever logs into the same one: shards, the analysis) and a child run per chunker with the
  headline keys of every chunker run (one separator, ``/``; per domain and document in tables);
* ``datasets``: the prepared corpus and the chunk table as ``mlflow.data`` datasets (DVC md5s);
* ``prompts``: the prompts in MLflow's prompt registry, linked to the runs that used them;
* ``traces``: sampled LLM calls (``ChatLLM.on_call``) as MLflow traces, tagged with the chunker,
  document and sub-metric and linked to their chunker run;
* ``record``: one experiment run (``RunRecord``) as a parent run and its chunker runs
  (``log_run``);
* ``sweep``: a multirun as a run whose children are the jobs' parent runs;
* ``stage``: the DVC ``hope`` stage's metrics.json and MLflow runs;
* ``labelled_run``, ``probe_run``: the labelled and probe stages' MLflow runs.
"""

from hope.tracking.layout import get_or_create_parent_run
from hope.tracking.names import aggregate_metrics
from hope.tracking.provenance import dvc_hashes, git_commit
from hope.tracking.record import RunRecord, log_run
from hope.tracking.secrets import REDACTED, redact
from hope.tracking.tracking_settings import TrackingSettings

__all__ = [
    "REDACTED",
    "RunRecord",
    "TrackingSettings",
    "aggregate_metrics",
    "dvc_hashes",
    "get_or_create_parent_run",
    "git_commit",
    "log_run",
    "redact",
]
