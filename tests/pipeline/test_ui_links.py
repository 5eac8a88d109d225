"""``hope ui``'s links (hope.tracking.views): the runs table filtered to one chunker run kind, in
MLflow's model-training mode, and the compare view of the latest parent run's chunker runs."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from hope.cli.hope_command import main
from hope.tracking.views import compare_link, experiment_views, kind_filter, runs_link


def test_the_runs_link_opens_the_runs_table_with_the_filter_typed_in():
    link = runs_link("http://h:5000/", "7", kind_filter("probe_chunker"))
    page, query = link.split("?", 1)
    assert page == "http://h:5000/#/experiments/7/runs"
    fields = urllib.parse.parse_qs(query)
    assert fields == {
        "workflowType": ["machine_learning"],
        "searchFilter": ["tags.`hope.kind` = 'probe_chunker'"],
    }


def test_the_compare_link_lists_the_runs_and_the_experiment():
    link = compare_link("http://h:5000", "3", ["a1", "b2"])
    page, query = link.split("?", 1)
    assert page == "http://h:5000/#/compare-runs"
    fields = urllib.parse.parse_qs(query)
    assert json.loads(fields["runs"][0]) == ["a1", "b2"]
    assert json.loads(fields["experiments"][0]) == ["3"]
    assert fields["workflowType"] == ["machine_learning"]


def test_an_unknown_kind_is_refused_by_name():
    with pytest.raises(ValueError, match=r"'chunkers'.*chunker, labelled_chunker, probe_chunker"):
        kind_filter("chunkers")


def _store(tmp_path: Path) -> str:
    """Two HOPE stage runs (the older with one chunker run, the newer with two) and a labelled
    stage run without chunker runs."""
    from mlflow import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("hope", artifact_location=str(tmp_path / "mlruns"))
    for start, chunkers in ((1_000, ["old"]), (2_000, ["b", "a"])):
        parent = client.create_run(exp, start_time=start, tags={"hope.kind": "stage"})
        for name in chunkers:
            tags = {"hope.kind": "chunker", "mlflow.parentRunId": parent.info.run_id}
            client.create_run(exp, start_time=start, tags=tags, run_name=f"hope/{name}")
    client.create_run(exp, start_time=3_000, tags={"hope.kind": "labelled"})
    return uri


def test_the_views_of_a_store_compare_the_latest_parent_runs_chunker_runs(tmp_path: Path):
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=_store(tmp_path))
    exp_id, views = experiment_views(client, "hope", "http://h:5000")
    by_kind = {v.kind: v for v in views}
    assert set(by_kind) == {"chunker", "labelled_chunker", "probe_chunker"}
    hope = by_kind["chunker"]
    assert hope.chunkers == ("hope/a", "hope/b")
    runs = json.loads(urllib.parse.parse_qs(hope.compare.split("?", 1)[1])["runs"][0])
    latest = {r.info.run_id for r in client.search_runs([exp_id]) if r.info.run_name != "hope/old"}
    assert set(runs) < latest and len(runs) == 2
    assert hope.runs == runs_link("http://h:5000", exp_id, kind_filter("chunker"))
    # A labelled parent without chunker runs, and no probe run: nothing to compare.
    assert by_kind["labelled_chunker"].compare is None
    assert by_kind["labelled_chunker"].parent_run is not None
    assert by_kind["probe_chunker"].parent_run is None


def test_hope_ui_prints_the_links_and_names_a_missing_experiment(tmp_path: Path, capsys):
    uri = _store(tmp_path)
    assert main(["ui", "--tracking-uri", uri, "--print-only", "--port", "5055"]) == 0
    out = capsys.readouterr().out
    assert "HOPE chunker runs:" in out and "compare 2 runs of" in out
    assert "http://127.0.0.1:5055/#/experiments/" in out
    assert "probe chunker runs:\n  runs table: " in out and "compare: none logged yet" in out
    assert main(["ui", "--tracking-uri", uri, "--experiment", "nope", "--print-only"]) == 2
    assert "no MLflow experiment 'nope'" in capsys.readouterr().err
