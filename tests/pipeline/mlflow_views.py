"""A real ``mlflow server`` for the tests, its REST API as a browser sees it, and the checks of
issue #33 on a store that ``dvc repro`` wrote: what a researcher meets when comparing chunkers.

Shared by ``test_mlflow_server`` (the stage's tracking on a store of its own), the browser test
and ``test_dvc_e2e`` (the store of a whole ``dvc repro``, the chain ``make repro`` runs).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from hope.tracking.layout import CHILD_PREFIX, CHUNKER_KINDS, HEADLINE_SCORES

MAX_METRIC_KEYS = 60
# MLflow 3.17's UI keeps its GenAI / model-training switch in the browser (localStorage) and opens
# every experiment in GenAI mode by default; this query opens the experiment on its runs.
RUNS_VIEW_QUERY = "workflowType=machine_learning"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Rest:
    """The tracking server's REST API, as a browser or ``curl`` sees it."""

    def __init__(self, base: str):
        self.base = base

    def call(self, endpoint: str, body: dict[str, Any] | None = None, **query: Any) -> dict:
        url = f"{self.base}{endpoint}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            url,
            data=data,
            headers={"Content-Type": "application/json"},
            method="POST" if body is not None else "GET",
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    def runs(self, experiment_id: str, filter_string: str = "") -> list[dict]:
        body = {"experiment_ids": [experiment_id], "filter": filter_string, "max_results": 1000}
        return self.call("/api/2.0/mlflow/runs/search", body).get("runs", [])

    def artifacts(self, run_id: str, path: str = "") -> list[str]:
        listed = self.call("/api/2.0/mlflow/artifacts/list", run_id=run_id, path=path)
        names: list[str] = []
        for item in listed.get("files", []):
            names += self.artifacts(run_id, item["path"]) if item["is_dir"] else [item["path"]]
        return names

    def traces(self, experiment_id: str) -> list[dict]:
        location = {
            "type": "MLFLOW_EXPERIMENT",
            "mlflow_experiment": {"experiment_id": experiment_id},
        }
        found: list[dict] = []
        token = None
        while True:
            body: dict[str, Any] = {"locations": [location], "max_results": 500}
            if token:
                body["page_token"] = token
            page = self.call("/api/3.0/mlflow/traces/search", body)
            found += page.get("traces", [])
            token = page.get("next_page_token")
            if not token:
                return found


@contextlib.contextmanager
def mlflow_server(store: Path, artifacts: Path, log: Path) -> Iterator[str]:
    """``mlflow server`` on the SQLite ``store`` (artifacts served from ``artifacts``); its URL."""
    port = free_port()
    with log.open("w") as handle:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mlflow",
                "server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
                "--backend-store-uri",
                f"sqlite:///{store}",
                "--artifacts-destination",
                str(artifacts),
            ],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"},
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                        if response.status == 200:
                            break
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    handle.flush()
                    raise RuntimeError(f"mlflow server did not start: {log.read_text()[-3000:]}")
                time.sleep(0.5)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _tags(entity: dict) -> dict[str, str]:
    return {t["key"]: t["value"] for t in entity.get("tags", [])}


def _lock_md5s(repo: Path, stage: str) -> dict[str, str]:
    """The md5 ``dvc.lock`` records for each dependency of ``stage``."""
    lock = yaml.safe_load((repo / "dvc.lock").read_text())
    return {dep["path"]: dep["md5"] for dep in lock["stages"][stage]["deps"] if "md5" in dep}


def check_repro_store(rest: Rest, repo: Path) -> dict[str, Any]:
    """Issue #33's done-when on the runs of a ``dvc repro`` in ``repo`` (its params.yaml, its
    chunker configs under conf/chunker, its dvc.lock), through the server only. Returns what it
    counted, for the caller's own checks."""
    params = yaml.safe_load((repo / "params.yaml").read_text())
    experiment = rest.call(
        "/api/2.0/mlflow/experiments/get-by-name",
        experiment_name=params["tracking"]["experiment_name"],
    )["experiment"]
    exp_id = experiment["experiment_id"]
    # The classic kind: the UI opens it on its runs with RUNS_VIEW_QUERY (the browser test).
    assert _tags(experiment)["mlflow.experimentKind"] == "custom_model_development"
    runs = rest.runs(exp_id)
    assert runs, "the experiment lists no run"
    by_kind: dict[str, list[dict]] = {}
    for run in runs:
        by_kind.setdefault(_tags(run["data"]).get("hope.kind", ""), []).append(run)

    # One filter selects the HOPE chunker runs of this repro, and nothing else.
    selected = rest.runs(exp_id, "tags.`hope.kind` = 'chunker'")
    assert sorted(r["info"]["run_name"] for r in selected) == sorted(
        f"hope/{c}" for c in params["chunkers"]
    )

    # Every chunker run of every kind: the same headline keys, its chunker's settings as params.
    chunker_runs = [r for kind in CHUNKER_KINDS for r in by_kind.get(kind, [])]
    for run in chunker_runs:
        tags = _tags(run["data"])
        name, kind, chunker = run["info"]["run_name"], tags["hope.kind"], tags["hope.chunker"]
        assert name == f"{CHILD_PREFIX[kind]}/{chunker}", name
        keys = {m["key"] for m in run["data"]["metrics"]}
        assert set(HEADLINE_SCORES) <= keys, (name, set(HEADLINE_SCORES) - keys)
        logged = {p["key"]: p["value"] for p in run["data"].get("params", [])}
        config = yaml.safe_load((repo / "conf" / "chunker" / f"{chunker}.yaml").read_text())
        settings = {k: v for k, v in config.items() if k not in {"name", "_target_"}}
        for key, value in settings.items():
            shown = json.dumps(value) if isinstance(value, list | dict) else str(value)
            assert logged.get(f"chunker.{key}") == shown, (name, key, logged)

    # No run has more than 60 metric keys; one separator.
    for run in runs:
        keys = [m["key"] for m in run["data"]["metrics"]]
        assert len(keys) <= MAX_METRIC_KEYS, (run["info"]["run_name"], len(keys))
        assert not any("." in k for k in keys), run["info"]["run_name"]

    # The HOPE chunker runs' datasets: named and digested by the md5s dvc.lock records.
    md5s = _lock_md5s(repo, "hope")
    expected = {
        f"corpus-{md5s['data/prepared/documents.jsonl']}": "data/prepared/documents.jsonl",
        f"chunks-{md5s['data/chunks/passages.jsonl']}": "data/chunks/passages.jsonl",
    }
    for run in by_kind["chunker"]:
        datasets = {d["dataset"]["name"]: d["dataset"] for d in run["inputs"]["dataset_inputs"]}
        assert set(datasets) == set(expected), (run["info"]["run_name"], set(datasets))
        for name, dataset in datasets.items():
            assert dataset["digest"] == name.split("-", 1)[1]
            assert json.loads(dataset["source"])["uri"].endswith(expected[name]), dataset

    # Every prompt a run links to belongs to the runs' experiment (its Prompts tab lists it).
    linked = {
        (p["name"], p["version"])
        for run in runs
        for p in json.loads(_tags(run["data"]).get("mlflow.linkedPrompts", "[]"))
    }
    assert linked, "no run links a prompt"
    for name, _ in linked:
        model = rest.call("/api/2.0/mlflow/registered-models/get", name=name)["registered_model"]
        owners = _tags(model).get("_mlflow_experiment_ids", "")
        assert f",{exp_id}," in owners and ",0," not in owners, (name, owners)

    # The LLM calls' traces: each tagged with its chunker and document, under a HOPE chunker run.
    traces = rest.traces(exp_id)
    assert traces, "no trace in the experiment"
    hope_children = {_tags(r["data"])["hope.chunker"]: r["info"]["run_id"] for r in selected}
    for trace in traces:
        tags = trace["tags"]
        assert tags.get("hope.chunker") and tags.get("hope.doc_id"), tags
        if tags["hope.chunker"] in hope_children and "hope.parent_run" in tags:
            assert (
                trace["trace_metadata"]["mlflow.sourceRun"] == hope_children[tags["hope.chunker"]]
            )
    return {
        "experiment_id": exp_id,
        "runs": len(runs),
        "chunker_runs": len(chunker_runs),
        "traces": len(traces),
        "prompts": len(linked),
    }
