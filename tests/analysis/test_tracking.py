"""Logging paper_figures/ to MLflow, against a temporary local file store."""

from __future__ import annotations

import json
import os
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from hope.analysis.paper_tracking import (
    flatten_metrics,
    log_outputs_to_mlflow,
    resolve_tracking_uri,
)


@pytest.fixture
def out_dir(tmp_path):
    out = tmp_path / "paper_figures"
    (out / "notebooks").mkdir(parents=True)
    (out / "figure7.png").write_bytes(b"\x89PNG fake")
    (out / "table2.md").write_text("| AC |\n")
    (out / "notebooks" / "paper_outputs.ipynb").write_text("{}")
    (out / "metrics.json").write_text(
        json.dumps(
            {
                "pairs": 56,
                "table2": {"FC": {"zeta_sem": {"r": 0.4, "p": None}}},
                "best_chunker": "semantic_mpnet",
            }
        )
    )
    return out


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri


def _artifacts(client, run_id, path="paper_figures"):
    names = []
    for item in client.list_artifacts(run_id, path):
        names += _artifacts(client, run_id, item.path) if item.is_dir else [item.path]
    return sorted(names)


def test_new_run_gets_every_file_and_the_metrics(out_dir, store):
    run_id = log_outputs_to_mlflow(out_dir)
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ  # opt-out scoped to the call
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        client = MlflowClient(tracking_uri=store)
        run = client.get_run(run_id)
        assert _artifacts(client, run_id) == [
            "paper_figures/figure7.png",
            "paper_figures/metrics.json",
            "paper_figures/notebooks/paper_outputs.ipynb",
            "paper_figures/table2.md",
        ]
        # Summaries as metrics (one separator, /); Table 2's cells as a table.
        assert run.data.metrics == {"paper/pairs": 56.0}
        local = client.download_artifacts(run_id, "paper_table2.json", str(out_dir.parent))
        table = json.loads(Path(local).read_text())
        assert table["columns"] == ["indicator", "score", "r", "p", "rho", "n"]
        assert table["data"] == [["FC", "zeta_sem", 0.4, None, None, None]]
        assert run.info.status == "FINISHED"
        assert client.get_experiment(run.info.experiment_id).name == "hope"
        assert run.data.tags["hope.kind"] == "paper"
    finally:
        del os.environ["MLFLOW_ALLOW_FILE_STORE"]


def test_given_and_active_runs_are_used(out_dir, store, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=store)
    experiment = client.create_experiment("other")
    given = client.create_run(experiment).info.run_id
    assert log_outputs_to_mlflow(out_dir, given) == given
    assert "paper_figures/table2.md" in _artifacts(client, given)

    mlflow.set_tracking_uri(store)
    try:
        with mlflow.start_run(experiment_id=experiment) as active:
            assert log_outputs_to_mlflow(out_dir) == active.info.run_id
        assert "paper_figures/figure7.png" in _artifacts(client, active.info.run_id)
    finally:
        mlflow.set_tracking_uri(None)


def test_missing_folder_and_uri_resolution(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError):
        log_outputs_to_mlflow(tmp_path / "nope")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_tracking_uri() == f"sqlite:///{(tmp_path / 'mlflow.db').resolve()}"
    assert resolve_tracking_uri("sqlite:///x.db") == "sqlite:///x.db"


def test_flatten_metrics_keeps_finite_numbers_only():
    assert flatten_metrics({"a": {"b": 1, "c": None, "d": "x", "e": True}, "f": 2.5}) == {
        "a/b": 1.0,
        "f": 2.5,
    }


def test_outputs_go_to_the_parent_run_of_the_scores_they_analyse(tmp_path, monkeypatch):
    """The scoring run's parent gets the paper outputs, its chunker runs BLEU and RAGAS."""
    import math

    from hope.tracking.layout import PARENT_TAG
    from hope.tracking.record import RunRecord, log_run
    from hope.tracking.tracking_settings import TrackingSettings

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    settings = TrackingSettings.from_mapping(
        {"artifact_root": str(tmp_path / "mlruns")}, default_uri=uri
    )
    scores = tmp_path / "scores.csv"
    scores.write_text("doc_id,domain,chunker,hope\na,news,c1,0.5\na,news,c2,0.7\n")
    rows = [
        {"doc_id": "a", "domain": "news", "chunker": c, "hope": v}
        for c, v in (("c1", 0.5), ("c2", 0.7))
    ]
    from hope.tracking.stage import scores_key

    key, md5 = scores_key(scores)
    record = RunRecord(
        config={},
        rows=rows,
        score_columns=["hope"],
        objective_name="hope",
        objective=0.6,
        tags={"hope.kind": "stage", "hope.scores_md5": md5},
        run_key=key,
        repo=tmp_path,
        data_hashes={},
    )
    parent = log_run(record, settings)
    out = tmp_path / "paper_figures"
    out.mkdir()
    (out / "pairs.csv").write_text(
        "doc_id,chunker,domain,hope,bleu,context_recall\n"
        "a,c1,news,0.5,0.25,0.9\n"
        "a,c2,news,0.7,0.5,\n"
    )
    (out / "table2.md").write_text("| AC |\n")
    assert log_outputs_to_mlflow(out, scores=scores) == parent
    client = MlflowClient(tracking_uri=uri)
    assert "paper_figures/table2.md" in _artifacts(client, parent)
    children = client.search_runs(
        [client.get_run(parent).info.experiment_id],
        filter_string=f"tags.`{PARENT_TAG}` = '{parent}'",
    )
    metrics = {c.data.tags["hope.chunker"]: c.data.metrics for c in children}
    assert metrics["c1"]["bleu"] == pytest.approx(0.25) and metrics["c2"]["bleu"] == 0.5
    assert metrics["c1"]["context_recall"] == pytest.approx(0.9)
    assert math.isnan(metrics["c2"]["context_recall"])
    assert math.isnan(metrics["c1"]["answer_correctness"])  # not run: NaN, the key is there
    # Scores nobody logged: a run of its own, saying so.
    other = tmp_path / "other.csv"
    other.write_text("doc_id\n")
    alone = log_outputs_to_mlflow(out, scores=other)
    assert alone != parent and "no MLflow run" in client.get_run(alone).data.tags["hope.note"]


def test_only_this_runs_outputs_are_logged_not_a_benchmark_records_figure(
    out_dir, store, monkeypatch, repo_root
):
    """Issue #33: paper_figures/ also holds the labelled benchmark's figure (another run's, kept
    for its record in bench/results/) and a README; the stage logs only what dvc.yaml says the
    pipeline writes there."""
    from hope.analysis.paper_tracking import run_output_files

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    repo = out_dir.parent
    (repo / "dvc.yaml").write_text((repo_root / "dvc.yaml").read_text())
    (out_dir / "labelled_vs_hope.png").write_bytes(b"\x89PNG another run")
    (out_dir / "README.md").write_text("what the folder holds\n")
    files = run_output_files(out_dir, repo)
    assert files is not None and {f.name for f in files} == {
        "figure7.png",
        "metrics.json",
        "paper_outputs.ipynb",
        "table2.md",
    }
    assert run_output_files(out_dir, repo / "elsewhere") is None  # no dvc.yaml: everything
    run_id = log_outputs_to_mlflow(out_dir, files=files)
    client = MlflowClient(tracking_uri=store)
    assert _artifacts(client, run_id) == [
        "paper_figures/figure7.png",
        "paper_figures/metrics.json",
        "paper_figures/notebooks/paper_outputs.ipynb",
        "paper_figures/table2.md",
    ]


def test_the_notebooks_stage_logs_only_this_runs_outputs(out_dir, store, monkeypatch, repo_root):
    from hope.stages import notebooks_stage

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    repo = out_dir.parent
    (repo / "dvc.yaml").write_text((repo_root / "dvc.yaml").read_text())
    (out_dir / "labelled_vs_hope.png").write_bytes(b"\x89PNG another run")
    (repo / "notebook.py").write_text("# %%\nx = 1\n")
    monkeypatch.chdir(repo)  # DVC runs the stage in the repository root
    monkeypatch.setattr(notebooks_stage, "execute_notebook", lambda *args, **kwargs: None)
    logged = {}
    import hope.analysis.paper_tracking as paper_tracking  # main imports it from there

    original = paper_tracking.log_outputs_to_mlflow

    def spy(*args, **kwargs):
        logged["run"] = original(*args, **kwargs)
        return logged["run"]

    monkeypatch.setattr(paper_tracking, "log_outputs_to_mlflow", spy)
    argv = ["notebook.py", "--out-dir", "paper_figures/notebooks", "--mlflow"]
    assert notebooks_stage.main(argv) == 0
    client = MlflowClient(tracking_uri=store)
    names = _artifacts(client, logged["run"])
    assert "paper_figures/figure7.png" in names
    assert "paper_figures/labelled_vs_hope.png" not in names
    # docs/gen_results.py shows the figure with the labelled record, where it still is.
    gen_results = (repo_root / "docs" / "gen_results.py").read_text()
    assert '"labelled": ["paper_figures/labelled_vs_hope.png"]' in gen_results
    assert (repo_root / "paper_figures" / "labelled_vs_hope.png").is_file()
