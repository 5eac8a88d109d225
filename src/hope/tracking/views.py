"""Links into the MLflow UI that open on the answer: the chunker runs of one kind, filtered, and
the compare view of the latest experiment run's chunker runs.

MLflow 3.17's UI keeps its *GenAI | Model training* switch in the browser (localStorage
``mlflow.workflowType``, GenAI unless the user flips it) and, with that switch, ignores the
experiment's ``mlflow.experimentKind`` tag; no server setting changes it. A link that carries
``workflowType=machine_learning`` opens the experiment on its runs table whatever the browser
remembers, and the runs page reads its search box from ``searchFilter``.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass

from hope.tracking.layout import CHILD_PREFIX, KIND_TAG, PARENT_KIND, PARENT_TAG

RUNS_VIEW = "workflowType=machine_learning"


def kind_filter(kind: str) -> str:
    """The runs-table filter that selects the chunker runs of one kind and nothing else."""
    if kind not in CHILD_PREFIX:
        raise ValueError(f"unknown chunker run kind {kind!r} (known: {', '.join(CHILD_PREFIX)})")
    return f"tags.`{KIND_TAG}` = '{kind}'"


def runs_link(base: str, experiment_id: str, search_filter: str = "") -> str:
    """The experiment's runs table (not the GenAI overview), with ``search_filter`` typed in."""
    query = RUNS_VIEW
    if search_filter:
        query += "&searchFilter=" + urllib.parse.quote(search_filter, safe="")
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs?{query}"


def compare_link(base: str, experiment_id: str, run_ids: list[str]) -> str:
    """MLflow's compare view of ``run_ids``: a row per metric, a column per run."""
    runs = urllib.parse.quote(json.dumps(run_ids), safe="")
    experiments = urllib.parse.quote(json.dumps([experiment_id]), safe="")
    return f"{base.rstrip('/')}/#/compare-runs?runs={runs}&experiments={experiments}&{RUNS_VIEW}"


@dataclass(frozen=True)
class KindView:
    """One chunker run kind's links: its filtered runs table and the compare view of the chunker
    runs under its latest parent run (``parent_run``; none when the kind has no run yet)."""

    kind: str
    runs: str
    compare: str | None
    parent_run: str | None
    chunkers: tuple[str, ...]


def experiment_views(client, experiment_name: str, base: str) -> tuple[str, list[KindView]]:
    """(experiment id, a view per chunker run kind) of ``experiment_name`` in ``client``'s store.
    Raises ``LookupError`` naming the experiment when the store has none of that name."""
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        raise LookupError(
            f"no MLflow experiment {experiment_name!r} in {client.tracking_uri}: run "
            "`make repro` (or a stage with tracking on) first"
        )
    exp_id = experiment.experiment_id
    views = []
    for kind, parent_kind in PARENT_KIND.items():
        parents = client.search_runs(
            [exp_id],
            filter_string=f"tags.`{KIND_TAG}` = '{parent_kind}'",
            order_by=["attributes.start_time DESC"],
            max_results=1,
        )
        compare = parent_id = None
        chunkers: tuple[str, ...] = ()
        if parents:
            parent_id = parents[0].info.run_id
            children = client.search_runs(
                [exp_id],
                filter_string=f"{kind_filter(kind)} and tags.`{PARENT_TAG}` = '{parent_id}'",
                order_by=["attributes.run_name ASC"],
                max_results=1000,
            )
            if children:
                compare = compare_link(base, exp_id, [c.info.run_id for c in children])
                chunkers = tuple(c.info.run_name for c in children)
        views.append(
            KindView(kind, runs_link(base, exp_id, kind_filter(kind)), compare, parent_id, chunkers)
        )
    return exp_id, views
