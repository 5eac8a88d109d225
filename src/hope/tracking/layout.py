"""The run layout a researcher compares in: a parent run per experiment run, a child per chunker.

* The **parent run** stands for one experiment run (a DVC ``hope`` stage run, a ``hope-run`` job,
  a set of shards): config, seeds, commit, DVC hashes, the objective, summaries (the corpus-level
  means of the headline scores, ``corpus/<score>``), comparisons (the table ``chunkers.json``: a
  row per chunker) and the stage's files. ``get_or_create_parent_run`` finds it by its key (tag
  ``hope.run_key``) or creates it, so that several processes (shards, the analysis stage) can log
  into the same one.
* One **child run per chunker** (tag ``hope.kind``: ``chunker``, named ``hope/<chunker>``; the
  labelled benchmark's ``labelled_chunker``, ``labelled/<chunker>``; the probe's
  ``probe_chunker``, ``probe/<chunker>``) holds the *headline keys* (``HEADLINE_SCORES``: HOPE, its
  sub-metrics, BLEU, the RAGAS indicators, labelled budget recall) in every chunker run of every
  kind, its kind's other scores, ``n_documents``, ``usage/<count>`` and ``failures/<sub-metric>``:
  a value that was not measured or is undefined for that chunker is logged as NaN, so that
  selecting chunker runs in the MLflow UI and pressing *Compare* puts them side by side. Metric
  names have one separator, ``/``, and nothing per domain or per document: those are MLflow tables
  (``domains.json``, ``documents.json``), the per-passage evidence an artifact, the prepared corpus
  and the chunk table its dataset inputs.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hope.core.result import METRICS
from hope.tracking.names import finite_mean, is_finite, name_part
from hope.tracking.store import client_for, experiment_id, with_retry
from hope.tracking.tracking_settings import TrackingSettings

PARENT_TAG = "mlflow.parentRunId"
RUN_KEY_TAG = "hope.run_key"
CHUNKER_TAG = "hope.chunker"
KIND_TAG = "hope.kind"
# A chunker run's kind: a HOPE run's chunker (``chunker``: the README's filter selects exactly
# these) or the labelled benchmark's (``labelled_chunker``); named ``hope/<chunker>`` and
# ``labelled/<chunker>`` so that two runs of one chunker tell apart in Compare.
CHILD_KIND = "chunker"
LABELLED_CHILD_KIND = "labelled_chunker"
PROBE_CHILD_KIND = "probe_chunker"
CHUNKER_KINDS = (CHILD_KIND, LABELLED_CHILD_KIND, PROBE_CHILD_KIND)
CHILD_PREFIX = {CHILD_KIND: "hope", LABELLED_CHILD_KIND: "labelled", PROBE_CHILD_KIND: "probe"}
# The kind of the parent run each kind of chunker run sits under (the hope stage's run, the
# labelled stage's, the probe stage's).
STAGE_PARENT_KIND = "stage"
LABELLED_PARENT_KIND = "labelled"
PROBE_PARENT_KIND = "probe"
PARENT_KIND = {
    CHILD_KIND: STAGE_PARENT_KIND,
    LABELLED_CHILD_KIND: LABELLED_PARENT_KIND,
    PROBE_CHILD_KIND: PROBE_PARENT_KIND,
}
# The RAGAS indicators (hope.analysis.paper.INDICATORS, not imported: that package loads plotting).
RAG_INDICATORS = (
    "answer_correctness",
    "factual_correctness",
    "context_recall",
    "response_relevancy",
)
# The headline keys every chunker run of every kind has, in this order: HOPE, its sub-metrics,
# BLEU, the RAGAS indicators and the labelled benchmark's recall at a character budget.
HEADLINE_SCORES = ("hope", *METRICS, "bleu", *RAG_INDICATORS, "budget_recall")
# The scores a HOPE chunker run has: the headline ones.
CHILD_SCORES = HEADLINE_SCORES
# LLM usage counts every chunker child has. A HOPE child has its evaluations' calls (sent, cached
# or shared with another chunker's identical request: which one sends is a race, so the evidence
# keeps no per-pair requests or tokens); the labelled slice's children have requests and tokens.
CHILD_USAGE = ("calls", "requests", "prompt_tokens", "completion_tokens", "cache_hits")
TABLE_FILE = "documents.json"
DOMAIN_TABLE = "domains.json"
CHUNKER_TABLE = "chunkers.json"
# The one separator of metric names (MLflow's chart view groups keys by what precedes it).
SEPARATOR = "/"


def new_run_key() -> str:
    return uuid.uuid4().hex


def find_runs_by_tag(client: Any, exp_id: str, tags: Mapping[str, str]) -> list[Any]:
    """Runs of ``exp_id`` carrying every tag of ``tags`` (oldest first)."""
    conditions = " and ".join(f"tags.`{k}` = '{_quoted(v)}'" for k, v in tags.items())
    runs = with_retry(
        lambda: client.search_runs([exp_id], filter_string=conditions, max_results=1000)
    )
    return sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id))


def _quoted(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("'", "\\'")


def get_or_create_parent_run(
    settings: TrackingSettings,
    run_key: str,
    *,
    run_name: str,
    tags: Mapping[str, str] | None = None,
    parent_run_id: str | None = None,
    start_time: int | None = None,
) -> tuple[str, bool]:
    """``(run id, created)`` of the parent run of the experiment run ``run_key``.

    The parent is the run of the tracking experiment tagged ``hope.run_key = run_key`` and not a
    chunker child; without one it is created (open: its creator or whoever logs last closes it with
    ``client.set_terminated``). Two processes creating it at the same moment both see the oldest
    one afterwards: the younger deletes its own. ``parent_run_id`` nests it under a sweep's run.
    """
    if not settings.enabled:
        raise ValueError("get_or_create_parent_run: tracking is disabled")
    client = client_for(settings)
    exp_id = with_retry(lambda: experiment_id(client, settings))
    key_tag = {RUN_KEY_TAG: run_key}

    def parents() -> list[Any]:
        runs = find_runs_by_tag(client, exp_id, key_tag)
        return [r for r in runs if not is_chunker_run(r)]

    existing = parents()
    if existing:
        return existing[0].info.run_id, False
    all_tags = {**(tags or {}), **key_tag}
    if parent_run_id:
        all_tags[PARENT_TAG] = parent_run_id
    run = with_retry(
        lambda: client.create_run(exp_id, tags=all_tags, run_name=run_name, start_time=start_time)
    )
    run_id = run.info.run_id
    racing = parents()
    if racing and racing[0].info.run_id != run_id:
        with_retry(lambda: client.delete_run(run_id))
        return racing[0].info.run_id, False
    return run_id, True


def is_chunker_run(run: Any) -> bool:
    """A chunker run (of HOPE or of the labelled benchmark), not a parent."""
    return run.data.tags.get(KIND_TAG) in CHUNKER_KINDS


def chunker_run_name(chunker: str, kind: str = CHILD_KIND) -> str:
    """``hope/<chunker>`` or ``labelled/<chunker>``."""
    return f"{CHILD_PREFIX.get(kind, kind)}/{chunker}"


def get_or_create_child_run(
    client: Any,
    exp_id: str,
    parent_run_id: str,
    chunker: str,
    tags: Mapping[str, str],
    kind: str = CHILD_KIND,
    start_time: int | None = None,
) -> str:
    """The chunker's child run under ``parent_run_id`` (created if it has none yet, starting at
    ``start_time``), of ``kind`` (``chunker``, ``labelled_chunker`` or ``probe_chunker``) and
    named ``chunker_run_name(chunker, kind)``."""
    found = find_runs_by_tag(client, exp_id, {PARENT_TAG: parent_run_id, CHUNKER_TAG: chunker})
    if found:
        return found[0].info.run_id
    all_tags = {**tags, PARENT_TAG: parent_run_id, CHUNKER_TAG: chunker, KIND_TAG: kind}
    name = chunker_run_name(chunker, kind)
    return with_retry(
        lambda: client.create_run(exp_id, tags=all_tags, run_name=name, start_time=start_time)
    ).info.run_id


def child_scores(scores: Sequence[str]) -> list[str]:
    """The headline scores, then ``scores``' others (a kind's own: the labelled measures ...)."""
    return [*HEADLINE_SCORES, *(s for s in scores if s not in HEADLINE_SCORES)]


def chunker_metrics(
    rows: Sequence[Mapping[str, Any]],
    *,
    usage: Mapping[str, Any] | None = None,
    failures: Mapping[str, int] | None = None,
    scores: Sequence[str] = CHILD_SCORES,
) -> dict[str, float]:
    """One chunker's metrics under the keys every chunker run shares.

    ``<score>`` for the headline scores and the others of ``scores``: the mean over its (document)
    rows where defined, NaN where none is (or the score was not computed in this run, e.g. RAGAS
    before its stage ran); ``n_documents``; the LLM usage counts (``usage/requests``, tokens,
    ``usage/cache_hits``), ``failures/total`` (failed items) and ``failures/<sub-metric>``. Per
    domain and per document: ``domain_table`` and ``table_columns``, not metric keys.
    """
    metrics: dict[str, float] = {"n_documents": float(len(rows))}
    for score in child_scores(scores):
        metrics[name_part(score)] = finite_mean((r.get(score) for r in rows), math.nan)
    usage = usage or {}
    for key in CHILD_USAGE:
        value = usage.get(key)
        metrics[f"usage/{key}"] = float(value) if is_finite(value) else math.nan
    failures = failures or {}
    metrics["failures/total"] = float(sum(failures.values()))
    for metric in METRICS:
        metrics[f"failures/{metric}"] = float(failures.get(metric, 0))
    return metrics


def domain_table(
    rows: Sequence[Mapping[str, Any]], scores: Sequence[str], *, count: str = "n_documents"
) -> dict[str, list[Any]]:
    """Per domain, then ``all``: the rows' count, each score's mean where defined (None where
    none is) and its undefined rows (``undefined_<score>``), as an MLflow table's columns."""
    groups = [(d, [r for r in rows if str(r.get("domain")) == d]) for d in _domains(rows)]
    groups.append(("all", list(rows)))
    table: dict[str, list[Any]] = {"domain": [d for d, _ in groups]}
    table[count] = [len(subset) for _, subset in groups]
    for score in scores:
        table[score] = [finite_mean(r.get(score) for r in subset) for _, subset in groups]
    for score in scores:
        table[f"undefined_{score}"] = [
            sum(1 for r in subset if not is_finite(r.get(score))) for _, subset in groups
        ]
    return table


def chunker_table(rows: Sequence[Mapping[str, Any]], scores: Sequence[str]) -> dict[str, list[Any]]:
    """A row per chunker with its documents and each score's mean (None where undefined): the
    parent's comparison of its chunker runs."""
    chunkers = sorted({str(r["chunker"]) for r in rows})
    groups = [[r for r in rows if str(r["chunker"]) == c] for c in chunkers]
    table: dict[str, list[Any]] = {"chunker": chunkers, "n_documents": [len(g) for g in groups]}
    for score in scores:
        table[score] = [finite_mean(r.get(score) for r in group) for group in groups]
    return table


def _domains(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    return sorted({str(r.get("domain")) for r in rows})


def table_columns(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Per-document rows as MLflow's table (column -> values; None for an undefined score)."""

    def cell(value: Any) -> Any:
        return None if isinstance(value, float) and not math.isfinite(value) else value

    columns = dict.fromkeys(k for row in rows for k in row)  # in order of first appearance
    return {c: [cell(row.get(c)) for row in rows] for c in columns}
