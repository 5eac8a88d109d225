"""Secret redaction, metric aggregation and provenance helpers, on hand-made data."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
import yaml

from hope.core.result import METRICS
from hope.tracking.names import aggregate_metrics, flatten, name_part
from hope.tracking.provenance import dvc_hashes, file_md5s, git_commit
from hope.tracking.secrets import REDACTED, redact
from hope.tracking.stage import enabled_stage_settings, input_md5s, record_score_stage
from hope.tracking.tracking_settings import TrackingSettings


def test_redact_removes_secret_keys_and_secret_env_values_but_keeps_ordinary_keys():
    env = {"MY_SERVICE_TOKEN": "tok-live-123456", "HOME": "/home/me", "SHORT_KEY": "1"}
    config = {
        "llm": {
            "api_key": "sk-inline-999",
            "api_key_env": "OPENAI_API_KEY",  # the variable's name, not a secret
            "max_tokens": 512,
            "extra_body": {"header": "Bearer tok-live-123456", "password": "hunter22"},
        },
        "paths": ["/home/me/data", "x tok-live-123456 y"],
        "token": None,
        "retries": 1,
    }
    clean = redact(config, env)
    assert clean["llm"]["api_key"] == REDACTED
    assert clean["llm"]["extra_body"] == {"header": f"Bearer {REDACTED}", "password": REDACTED}
    assert clean["llm"]["api_key_env"] == "OPENAI_API_KEY" and clean["llm"]["max_tokens"] == 512
    assert clean["paths"] == ["/home/me/data", f"x {REDACTED} y"]  # HOME is not secret-looking
    assert clean["token"] is None and clean["retries"] == 1
    assert config["llm"]["api_key"] == "sk-inline-999"  # the input is not modified


def test_redact_removes_secrets_from_hydra_override_strings():
    overrides = ["llm.api_key=sk-inline-999", "+llm.extra_body.token=abc", "llm.max_tokens=64"]
    assert redact({"hope": {"overrides": overrides}}, {})["hope"]["overrides"] == [
        f"llm.api_key={REDACTED}",
        f"+llm.extra_body.token={REDACTED}",
        "llm.max_tokens=64",
    ]
    assert redact(["api_key_env=OPENAI_API_KEY", "a=b=c"], {}) == [
        "api_key_env=OPENAI_API_KEY",
        "a=b=c",
    ]


ROWS = [
    {"doc_id": "a", "domain": "news", "chunker": "c1", "hope": 0.2, "bleu": 10.0},
    {"doc_id": "b", "domain": "news", "chunker": "c1", "hope": 0.6, "bleu": None},
    {"doc_id": "c", "domain": "wiki", "chunker": "c1", "hope": None, "bleu": 30.0},
    {"doc_id": "a", "domain": "news", "chunker": "c2", "hope": 1.0, "bleu": 50.0},
]


def test_aggregate_metrics_at_corpus_domain_chunker_and_pair_level():
    m = aggregate_metrics(ROWS, ["hope", "bleu"])
    assert m["corpus/hope"] == pytest.approx((0.2 + 0.6 + 1.0) / 3)
    assert m["corpus/bleu"] == pytest.approx(30.0)
    assert m["corpus/n_pairs"] == 4 and m["corpus/undefined/hope"] == 1
    assert m["domain/news/hope"] == pytest.approx(0.6)
    assert "domain/wiki/hope" not in m and m["domain/wiki/undefined/hope"] == 1
    assert m["chunker/c1/hope"] == pytest.approx(0.4)
    assert m["chunker/c2/domain/news/hope"] == pytest.approx(1.0)
    assert m["pair/c1/b/hope"] == pytest.approx(0.6) and "pair/c1/b/bleu" not in m
    assert all(math.isfinite(v) for v in m.values())


def test_one_chunker_gives_chunker_free_names_so_sweep_runs_compare():
    m = aggregate_metrics(ROWS[:3], ["hope"], per_pair=False)
    assert not any(k.startswith(("chunker/", "pair/")) for k in m)
    assert m["corpus/hope"] == pytest.approx(0.4)


def test_names_and_params_are_safe_for_mlflow():
    assert name_part("doc#1 (v2)/../x") == "doc_1 _v2____x"  # no extra levels, no ..
    flat = flatten({"a": {"b": [1, 2], "c": None, "d": {}}, "e": "x" * 7000})
    assert flat == {"a.b": "[1, 2]", "a.c": "None", "a.d": "{}", "e": "x" * 6000}


def test_dvc_hashes_reads_the_outs_of_every_stage(tmp_path: Path):
    lock = tmp_path / "dvc.lock"
    lock.write_text(
        "schema: '2.0'\nstages:\n  prepare:\n    outs:\n    - path: data/prepared/documents.jsonl\n"
        "      md5: abc\n    - path: data/prepared/manifest.json\n      md5: def\n"
        "  chunk:\n    deps:\n    - path: src\n      md5: zzz\n    outs:\n"
        "    - path: data/chunks\n      md5: 123.dir\n"
    )
    assert dvc_hashes(lock) == {
        "data/chunks": "123.dir",
        "data/prepared/documents.jsonl": "abc",
        "data/prepared/manifest.json": "def",
    }
    assert dvc_hashes(tmp_path / "missing.lock") == {}


def test_git_commit_outside_a_repository_is_none(tmp_path: Path):
    assert git_commit(tmp_path) == (None, None)


def test_git_commit_of_this_repository(repo_root: Path):
    commit, dirty = git_commit(repo_root)
    assert commit is not None and len(commit) == 40 and isinstance(dirty, bool)


def test_file_md5s_are_the_md5s_dvc_lock_records(tmp_path: Path):
    (tmp_path / "a.txt").write_bytes(b"abc")
    assert file_md5s([tmp_path / "a.txt"]) == {
        str(tmp_path / "a.txt"): "900150983cd24fb0d6963f7d28e17f72"  # md5("abc")
    }


def test_tracking_uri_is_the_config_then_the_environment_then_the_default(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert TrackingSettings.from_mapping({"uri": "sqlite:///a.db"}, default_uri="x").uri == (
        "sqlite:///a.db"
    )
    assert TrackingSettings.from_mapping({"uri": None}, default_uri="sqlite:///d.db").uri == (
        "sqlite:///d.db"
    )
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///env.db")
    assert TrackingSettings.from_mapping({}, default_uri="sqlite:///d.db").uri == "sqlite:///env.db"
    assert not TrackingSettings.from_mapping({"enabled": False, "uri": "x"}).enabled
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    with pytest.raises(ValueError, match=r"tracking\.uri"):
        TrackingSettings.from_mapping({"uri": None})


# What the `hope` stage writes, by hand: three pairs, one of them with HOPE undefined.
SCORES_CSV = (
    "doc_id,domain,chunker,n_passages,hope,concept_unity,semantic_independence,"
    "information_preservation,concept_unity_scored,concept_unity_failed,"
    "semantic_independence_scored,semantic_independence_failed,"
    "information_preservation_scored,information_preservation_failed\n"
    "a,news,c1,3,0.2,0.4,0.1,0.1,1,0,1,0,2,0\n"
    "b,wiki,c1,2,,0.5,,0.3,1,0,0,1,2,0\n"
    "a,news,c2,4,0.6,0.8,0.6,0.4,1,0,1,0,2,0\n"
)
SUMMARY = {
    "pairs": 3,
    "usage": {"requests": 5, "cache_hits": 1, "latency_s": 2.5},
    "failures_by_metric_and_chunker": {"semantic_independence": {"c1": 1}},
    "prompts": {"concept_statements": {"id": "concept_statements@v1#abc", "user": "Read {n}"}},
    "settings": {"profile": "paper", "seed": 3},
    "models": {"llm": "openai:sim|model", "embedder": "hashing:256"},
}


def stage_outputs(tmp_path: Path, tracking: dict | None) -> tuple[Path, Path, list[Path]]:
    out = tmp_path / "data" / "hope"
    out.mkdir(parents=True)
    (out / "scores.csv").write_text(SCORES_CSV)
    (out / "summary.json").write_text(json.dumps(SUMMARY))
    (out / "evidence.jsonl").write_text('{"doc_id": "a"}\n')
    inputs = [tmp_path / "documents.jsonl", tmp_path / "passages.jsonl"]
    for path in inputs:
        path.write_text(path.stem)
    params = {
        "corpora": {"profile": "sample", "seed": 2025, "min_chars": 500, "sources": {"x": 1}},
        "chunkers": ["c1", "c2"],
        "hope": {"profile": "paper", "seed": 3, "llm": "llamacpp_server", "overrides": []},
    }
    if tracking is not None:
        params["tracking"] = tracking
    params_path = tmp_path / "params.yaml"
    params_path.write_text(yaml.safe_dump(params))
    return params_path, out, inputs


def test_stage_metrics_file_by_hand_and_no_run_without_tracking(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for tracking in (None, {"enabled": False}):
        params_path, out, inputs = stage_outputs(tmp_path / str(bool(tracking)), tracking)
        assert record_score_stage(params_path, out, inputs, wall_s=12.34) is None
        metrics = json.loads((out / "metrics.json").read_text())
        # The headline only (dvc metrics show): per domain and chunker, scores.csv and MLflow.
        assert metrics["hope"] == pytest.approx((0.2 + 0.6) / 2)
        assert metrics["semantic_independence"] == pytest.approx((0.1 + 0.6) / 2)
        assert metrics["pairs"] == 3 and metrics["failures"] == 1
        # No wall time or latency in the DVC output (they stay in the log and the MLflow run).
        assert metrics["usage"] == {"requests": 5, "cache_hits": 1}
        assert set(metrics) == {
            "hope",
            "concept_unity",
            "semantic_independence",
            "information_preservation",
            "pairs",
            "usage",
            "failures",
        }
    assert not (tmp_path / "mlflow.db").exists() and not list(tmp_path.rglob("mlflow.db"))


def test_stage_logs_a_parent_run_and_a_child_run_per_chunker(tmp_path: Path, monkeypatch):
    from mlflow import MlflowClient

    from hope.tracking.layout import CHILD_SCORES, CHILD_USAGE

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, inputs = stage_outputs(tmp_path, tracking)
    (out / "evidence.jsonl").write_text(
        "".join(
            json.dumps({"doc_id": d, "chunker": c, "usage": {"llm": {"requests": n}}}) + "\n"
            for d, c, n in (("a", "c1", 2), ("b", "c1", 1), ("a", "c2", 2))
        )
    )
    run_id = record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path)
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"  # the default store: mlflow.db in the repo
    client = MlflowClient(tracking_uri=store)
    run = client.get_run(run_id)
    assert (
        run.info.status == "FINISHED" and run.info.run_name == "dvc hope: sample/2 chunkers/paper"
    )
    metrics = run.data.metrics
    metrics_file = json.loads((out / "metrics.json").read_text())
    assert metrics["corpus/hope"] == pytest.approx(metrics_file["hope"])
    # Per pair and per chunker: the children's metrics and tables, not hundreds of parent keys.
    assert not any(k.startswith(("pair/", "chunker/")) for k in metrics)
    assert metrics["objective"] == pytest.approx(0.4)
    assert metrics["corpus/failures/semantic_independence"] == 1
    assert metrics["corpus/usage/requests"] == 5
    params = run.data.params
    assert params[f"dvc.{name_part(inputs[0])}"] == file_md5s([inputs[0]])[str(inputs[0])]
    assert params["seed.hope"] == "3" and params["seed.corpus"] == "2025"
    assert params["prompt.concept_statements"] == "concept_statements@v1#abc"
    assert (
        params["cfg.models.llm"] == "openai:sim|model" and params["cfg.chunkers"] == '["c1", "c2"]'
    )
    tags = run.data.tags
    assert tags["hope.kind"] == "stage" and tags["hope.chunkers"] == "c1,c2"
    assert tags["hope.scores_md5"] == file_md5s([out / "scores.csv"])[str(out / "scores.csv")]
    artifacts = {a.path for a in client.list_artifacts(run_id)}
    assert {"scores.csv", "summary.json", "metrics.json", "provenance.json"} <= artifacts
    assert str(tmp_path / "mlruns") in run.info.artifact_uri

    children = client.search_runs(
        [run.info.experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{run_id}'"
    )
    by_chunker = {c.data.tags["hope.chunker"]: c for c in children}
    assert set(by_chunker) == {"c1", "c2"}
    keys = {name: set(c.data.metrics) for name, c in by_chunker.items()}
    assert keys["c1"] == keys["c2"]  # the same keys in every child: Compare lines them up
    usage = {f"usage/{k}" for k in CHILD_USAGE}
    assert {*CHILD_SCORES, *usage, "failures/total", "n_documents"} <= keys["c1"]
    c1, c2 = by_chunker["c1"].data.metrics, by_chunker["c2"].data.metrics
    assert c1["hope"] == pytest.approx(0.2) and c2["concept_unity"] == pytest.approx(0.8)
    assert math.isnan(c1["bleu"])  # not measured by this stage
    assert c1["usage/requests"] == 3 and c2["usage/requests"] == 2  # the chunker's evidence
    assert c1["failures/semantic_independence"] == 1 and c2["failures/total"] == 0
    assert c1["n_documents"] == 2
    for name, child in by_chunker.items():
        assert child.info.status == "FINISHED" and child.data.params["chunker"] == name
        files = {a.path for a in client.list_artifacts(child.info.run_id)}
        assert {"documents.json", "domains.json", "evidence.jsonl"} <= files
        if name == "c1":  # per domain: a table (HOPE undefined for wiki's one document)
            local = client.download_artifacts(child.info.run_id, "domains.json", str(tmp_path))
            domains = json.loads(Path(local).read_text())
            rows = {r[0]: dict(zip(domains["columns"], r, strict=True)) for r in domains["data"]}
            assert rows["news"]["hope"] == pytest.approx(0.2) and rows["wiki"]["hope"] is None
            assert rows["wiki"]["undefined_hope"] == 1 and rows["all"]["n_documents"] == 2
        local = client.download_artifacts(child.info.run_id, "documents.json", str(tmp_path))
        table = json.loads(Path(local).read_text())
        assert {r[table["columns"].index("doc_id")] for r in table["data"]} == (
            {"a", "b"} if name == "c1" else {"a"}
        )
        evidence = client.download_artifacts(child.info.run_id, "evidence.jsonl", str(tmp_path))
        assert {json.loads(x)["chunker"] for x in Path(evidence).read_text().splitlines()} == {name}
        inputs_logged = {d.dataset.name: d.dataset.digest for d in child.inputs.dataset_inputs}
        md5s = file_md5s(inputs)
        assert inputs_logged == {
            f"corpus-{md5s[str(inputs[0])]}": md5s[str(inputs[0])],
            f"chunks-{md5s[str(inputs[1])]}": md5s[str(inputs[1])],
        }

    # Logging the same scores again (a forced rerun) reuses the parent and the children, and
    # replaces their tables (MlflowClient.log_table appends: every row would be there twice).
    again = record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path)
    assert again == run_id
    assert len(client.search_runs([run.info.experiment_id])) == 3

    def table_rows(run: str, name: str) -> list:
        local = client.download_artifacts(run, name, str(tmp_path / "again" / run))
        return json.loads(Path(local).read_text())["data"]

    assert [r[0] for r in table_rows(run_id, "domains.json")] == ["news", "wiki", "all"]
    assert len(table_rows(run_id, "chunkers.json")) == 2
    c1_run = by_chunker["c1"].info.run_id
    assert len(table_rows(c1_run, "documents.json")) == 2
    assert len(table_rows(c1_run, "domains.json")) == 3


def test_the_hope_stage_logs_its_own_run_once(tmp_path: Path, monkeypatch):
    """The DVC stage itself (hope.stages.score_stage.main) against the simulated LLM: one scoring,
    one
    run, whose numbers are those of the scores.csv it wrote."""
    from mlflow import MlflowClient

    from hope.stages.score_stage import main
    from hope.testing import SimulatedServer

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)  # DVC runs stages in the repository root: mlflow.db lands here
    text = "The mill opened in 1901. It ground wheat. It closed in 1950. A museum opened in 1990."
    Path("documents.jsonl").write_text(
        json.dumps({"doc_id": "d1", "domain": "news", "text": text}) + "\n"
    )
    pieces = [text[:45], text[45:]]
    Path("passages.jsonl").write_text(
        "".join(
            json.dumps(
                {"passage_id": f"d1::c::{i}", "doc_id": "d1", "chunker": "c", "index": i, "text": t}
            )
            + "\n"
            for i, t in enumerate(pieces)
        )
    )
    with SimulatedServer(latency_s=0.0) as server:
        params = {
            "corpora": {"profile": "sample", "seed": 1},
            "hope": {
                "profile": "paper",
                "llm": "llamacpp_server",
                "embedder": "hashing",
                "cache": "cache.sqlite",
                "overrides": [f"llm.base_url={server.base_url}"],
            },
            "tracking": {"enabled": True, "uri": None, "artifact_root": "mlruns"},
        }
        Path("params.yaml").write_text(yaml.safe_dump(params))
        argv = [
            "--documents",
            "documents.jsonl",
            "--passages",
            "passages.jsonl",
            "--out-dir",
            "out",
        ]
        assert main(argv) == 0
        assert server.requests > 0
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("hope")
    runs = client.search_runs([experiment.experiment_id])
    parents = [r for r in runs if r.data.tags["hope.kind"] == "stage"]
    (child,) = [r for r in runs if r.data.tags["hope.kind"] == "chunker"]
    assert len(runs) == 2 and len(parents) == 1  # one experiment run: a parent, one chunker
    assert child.data.tags["mlflow.parentRunId"] == parents[0].info.run_id
    (row,) = csv.DictReader(Path("out/scores.csv").read_text().splitlines())
    assert parents[0].data.metrics["corpus/hope"] == pytest.approx(float(row["hope"]))
    assert child.data.metrics["hope"] == pytest.approx(float(row["hope"]))
    # A chunker's calls (sent, cached or shared): which pair sends a shared request is a race.
    parent = parents[0].data.metrics
    calls = parent["corpus/usage/requests"] + parent["corpus/usage/cache_hits"]
    assert child.data.metrics["usage/calls"] == calls > 0
    # Every LLM call of the stage is a trace (the default share is 1), linked to the chunker run
    # whose evaluation made it, and tagged with the chunker, the document and the sub-metric.
    traces = client.search_traces(locations=[experiment.experiment_id])
    assert len(traces) == calls
    assert {t.info.request_metadata.get("mlflow.sourceRun") for t in traces} == {child.info.run_id}
    assert {t.info.tags["hope.parent_run"] for t in traces} == {parents[0].info.run_id}
    assert {t.info.tags["hope.chunker"] for t in traces} == {"c"}
    assert {t.info.tags["hope.doc_id"] for t in traces} == {"d1"}
    assert {t.info.tags["hope.domain"] for t in traces} == {"news"}
    assert {t.info.tags["hope.metric"] for t in traces} == set(METRICS)
    # "Which calls made this score": one filter from the chunker run's id and the sub-metric.
    found = client.search_traces(
        locations=[experiment.experiment_id],
        filter_string="tags.`hope.metric` = 'semantic_independence'",
        run_id=child.info.run_id,
    )
    assert found and len(found) < len(traces)
    assert all(
        "answer_question" in t.info.tags["hope.prompt"]
        or "question_generation" in t.info.tags["hope.prompt"]
        for t in found
    )
    runs = parents
    assert (
        runs[0].data.params["dvc.documents.jsonl"]
        == file_md5s(["documents.jsonl"])["documents.jsonl"]
    )
    assert json.loads(Path("out/metrics.json").read_text())["pairs"] == 1


def test_stage_datasets_and_provenance_name_each_input_by_its_own_path_and_dvc_hash(
    tmp_path: Path, monkeypatch, repo_root: Path
):
    """Issue #33: the ``corpus-…`` dataset is the prepared documents and ``chunks-…`` the passages,
    with the paths and md5s the ``hope`` stage's deps get in dvc.lock (the stage's real paths,
    read from dvc.yaml: ``data/chunks/…`` sorts before ``data/prepared/…``)."""
    import hashlib

    from mlflow import MlflowClient

    stage = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]["hope"]
    cmd = stage["cmd"].split()
    documents, passages = cmd[cmd.index("--documents") + 1], cmd[cmd.index("--passages") + 1]
    assert {documents, passages} <= set(stage["deps"])
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, _ = stage_outputs(tmp_path, tracking)
    for path, text in ((documents, "the documents\n"), (passages, "the passages\n")):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    # dvc.lock records a file dependency's md5: the md5 of its bytes.
    lock = {p: hashlib.md5(Path(p).read_bytes()).hexdigest() for p in (documents, passages)}
    run_id = record_score_stage(params_path, out, [documents, passages], wall_s=1.0, repo=tmp_path)
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    children = client.search_runs(
        [client.get_run(run_id).info.experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{run_id}'",
    )
    assert len(children) == 2
    expected = {"corpus": documents, "chunks": passages}
    for child in children:
        logged = {}
        for item in child.inputs.dataset_inputs:
            tags = {t.key: t.value for t in item.tags}
            source = json.loads(item.dataset.source)
            logged[tags["hope.role"]] = (item.dataset.name, item.dataset.digest, source)
        assert set(logged) == set(expected)
        for role, path in expected.items():
            name, digest, source = logged[role]
            assert name == f"{role}-{lock[path]}" and digest == lock[path]
            assert json.dumps(source).endswith(f'{(tmp_path / path).as_posix()}"}}')
    local = client.download_artifacts(run_id, "provenance.json", str(tmp_path))
    provenance = json.loads(Path(local).read_text())
    assert provenance["datasets"] == {
        role: {"path": path, "md5": lock[path]} for role, path in expected.items()
    }
    assert provenance["dvc_hashes"] == lock


def scratch_checkout(tmp_path: Path, repo_root: Path) -> Path:
    """A committed scratch repository with the project's dvc.yaml, a dvc.lock, code and the
    git-tracked outputs DVC rewrites (metrics files with ``cache: false``)."""
    from tests.unit.scratch_git import git

    repo = tmp_path / "clone"
    (repo / "src").mkdir(parents=True)
    (repo / "dvc.yaml").write_text((repo_root / "dvc.yaml").read_text())
    (repo / "dvc.lock").write_text("schema: '2.0'\nstages: {}\n")
    (repo / "src" / "code.py").write_text("X = 1\n")
    for out in ("data/hope/metrics.json", "paper_figures/metrics.json"):
        (repo / out).parent.mkdir(parents=True, exist_ok=True)
        (repo / out).write_text("{}\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "clone")
    return repo


def test_git_dirty_ignores_what_dvc_rewrites_during_repro(tmp_path: Path, repo_root: Path):
    """Issue #33: a run from a fresh clone starts while DVC rewrites dvc.lock and the tracked
    outputs of the earlier stages; that is not a dirty tree, an edit of the code is."""
    repo = scratch_checkout(tmp_path, repo_root)
    commit, dirty = git_commit(repo)
    assert commit is not None and dirty is False
    (repo / "dvc.lock").write_text("schema: '2.0'\nstages: {hope: {}}\n")
    (repo / "data" / "hope" / "metrics.json").write_text('{"corpus": {}}\n')
    (repo / "paper_figures" / "metrics.json").unlink()
    assert git_commit(repo) == (commit, False)
    (repo / "src" / "code.py").write_text("X = 2\n")
    assert git_commit(repo) == (commit, True)
    (repo / "src" / "code.py").write_text("X = 1\n")
    (repo / "dvc.yaml").write_text((repo / "dvc.yaml").read_text() + "\n# edited\n")
    assert git_commit(repo) == (commit, True)  # dvc.yaml is the pipeline: an edit counts


def test_stage_run_shows_its_source_and_commit_and_a_clean_tree(
    tmp_path: Path, monkeypatch, repo_root: Path
):
    from mlflow import MlflowClient

    repo = scratch_checkout(tmp_path, repo_root)
    commit, _ = git_commit(repo)
    (repo / "dvc.lock").write_text("schema: '2.0'\nstages: {rewritten: {}}\n")  # DVC at work
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, inputs = stage_outputs(tmp_path / "outputs", tracking)
    run_id = record_score_stage(params_path, out, inputs, wall_s=1.0, repo=repo)
    client = MlflowClient(tracking_uri=f"sqlite:///{repo / 'mlflow.db'}")
    runs = client.search_runs([client.get_run(run_id).info.experiment_id])
    assert len(runs) == 3  # the parent and two chunker runs
    for run in runs:
        tags = run.data.tags
        assert tags["mlflow.source.git.commit"] == commit
        assert tags["mlflow.source.name"] == "dvc.yaml:hope"
        assert tags["mlflow.source.type"] == "LOCAL"
        assert tags["hope.git_dirty"] == "false"


def test_the_prompts_belong_to_the_runs_experiment_not_the_default_one(tmp_path: Path, monkeypatch):
    """Issue #33: the stage's prompts were linked to experiment 0 (MLflow links a new prompt to
    the process's current experiment), so the ``hope`` experiment's Prompts tab was empty."""
    import threading

    from mlflow import MlflowClient

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, inputs = stage_outputs(tmp_path, tracking)

    def links_done() -> None:
        for thread in threading.enumerate():  # MLflow links a new prompt in a thread of its own
            if thread.name.startswith("link_prompt_to_experiment"):
                thread.join(timeout=120)

    run_id = record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path)
    links_done()
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_run(run_id).info.experiment_id
    assert experiment != "0"

    def prompts_of(exp_id: str) -> set[str]:
        found = client.search_prompts(filter_string=f"experiment_id = '{exp_id}'")
        return {p.name for p in found}

    assert prompts_of(experiment) == {"concept_statements"}
    assert prompts_of("0") == set()
    # A second run in another experiment adds that one; the prompt keeps the first.
    tracking["experiment_name"] = "hope-other"
    params = yaml.safe_load(params_path.read_text())
    params["tracking"] = tracking
    params_path.write_text(yaml.safe_dump(params))
    other = record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path)
    links_done()  # under load the second link can still be running: wait for it as for the first
    other_experiment = client.get_run(other).info.experiment_id
    assert prompts_of(other_experiment) == {"concept_statements"} == prompts_of(experiment)


def test_chunker_runs_are_named_by_kind_and_carry_their_chunkers_settings(
    tmp_path: Path, monkeypatch, repo_root: Path
):
    """Issue #33: HOPE's chunker runs are ``hope/<chunker>`` (``hope.kind = chunker``), the
    labelled benchmark's ``labelled/<chunker>`` (``labelled_chunker``): one filter selects one
    kind; every chunker run has its chunker's settings as params."""
    from mlflow import MlflowClient

    from hope.pipeline.labelled_step import chunker_settings
    from hope.tracking.labelled_run import labelled_record
    from hope.tracking.record import log_run

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, inputs = stage_outputs(tmp_path, tracking)
    # The chunk stage's summary.json beside the passages: each chunker's config.
    configs = {
        "c1": {"name": "c1", "_target_": "hope.chunking.FixedSizeChunker", "chunk_size": 500},
        "c2": {"name": "c2", "_target_": "hope.chunking.RecursiveChunker", "chunk_size": 2000},
    }
    summary = {name: {"documents": 2, "config": config} for name, config in configs.items()}
    (inputs[1].parent / "summary.json").write_text(json.dumps(summary))
    run_id = record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path)
    settings = TrackingSettings.from_mapping(
        tracking, default_uri=f"sqlite:///{tmp_path / 'mlflow.db'}"
    )
    (tmp_path / "labelled").mkdir()
    for name in ("results.json", "chunkers.csv", "metrics.json"):
        (tmp_path / "labelled" / name).write_text("{}")
    rows = [
        {"doc_id": "chatlogs", "domain": "chatlogs", "chunker": c, "budget_recall": r}
        for c, r in (("fixed_500_o0", 0.5), ("c1", 0.4))
    ]
    labelled_configs = chunker_settings(["fixed_500_o0", "c1"], repo_root / "conf" / "chunker")
    assert labelled_configs["fixed_500_o0"]["chunk_size"] == 500 and "c1" not in labelled_configs
    record = labelled_record(
        {"labelled": {"corpora": ["chatlogs"]}},
        tmp_path / "labelled",
        {},
        rows,
        {},
        {},
        tmp_path,
        chunker_configs=labelled_configs,
    )
    labelled_id = log_run(record, settings)
    client = MlflowClient(tracking_uri=settings.uri)
    experiment = client.get_run(run_id).info.experiment_id

    def names(kind: str) -> dict[str, object]:
        found = client.search_runs([experiment], filter_string=f"tags.`hope.kind` = '{kind}'")
        return {r.info.run_name: r for r in found}

    hope_runs, labelled_runs = names("chunker"), names("labelled_chunker")
    assert set(hope_runs) == {"hope/c1", "hope/c2"}
    assert set(labelled_runs) == {"labelled/fixed_500_o0", "labelled/c1"}
    assert {r.data.tags["mlflow.parentRunId"] for r in hope_runs.values()} == {run_id}
    assert {r.data.tags["mlflow.parentRunId"] for r in labelled_runs.values()} == {labelled_id}
    c1 = hope_runs["hope/c1"].data.params
    assert c1["chunker"] == "c1" and c1["chunker.chunk_size"] == "500"
    assert c1["chunker._target_"] == "hope.chunking.FixedSizeChunker"
    assert hope_runs["hope/c2"].data.params["chunker.chunk_size"] == "2000"
    fixed = labelled_runs["labelled/fixed_500_o0"].data.params
    assert fixed["chunker.chunk_size"] == "500" and fixed["chunker.chunk_overlap"] == "0"
    # The parents are found as parents, not as chunker runs (a rerun reuses them).
    assert record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path) == run_id
    assert log_run(record, settings) == labelled_id
    assert len(client.search_runs([experiment])) == 2 + 2 + 2


# The views of issue #33 on runs the real code paths log: the `hope` stage with the paper's seven
# domains and three chunkers, the analysis of its scores, the labelled and the probe stages' runs.
DOMAINS = ("arxiv", "cord19", "debates", "manuals", "news", "tos", "wiki")
CHUNKERS = ("fixed_500_o0", "recursive_500", "semantic_minilm")
MAX_METRIC_KEYS = 60
RAG = ("answer_correctness", "factual_correctness", "context_recall", "response_relevancy")


def seven_domain_stage(tmp_path: Path, wall_s: float = 1.0) -> tuple[str, str]:
    """(parent run id, store uri) of the ``hope`` stage's run over 7 domains x 3 chunkers, with the
    analysis of its scores (BLEU, RAGAS and paper_figures/metrics.json) logged to it."""
    from hope.analysis.paper_tracking import log_outputs_to_mlflow

    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, inputs = stage_outputs(tmp_path, tracking)
    header = SCORES_CSV.splitlines()[0]
    lines = [header]
    for d, domain in enumerate(DOMAINS):
        for c, chunker in enumerate(CHUNKERS):
            value = (d + c + 1) / 20
            lines.append(f"{domain}-1,{domain},{chunker},3,{value},{value},{value},,1,0,1,0,2,0")
    (out / "scores.csv").write_text("\n".join(lines) + "\n")
    run_id = record_score_stage(params_path, out, inputs, wall_s=wall_s, repo=tmp_path)
    paper = tmp_path / "paper_figures"
    paper.mkdir()
    pairs = ["doc_id,chunker,domain,hope,bleu,context_recall,answer_correctness"]
    pairs += [f"{d}-1,{c},{d},0.5,0.3,0.6,0.7" for d in DOMAINS for c in CHUNKERS]
    (paper / "pairs.csv").write_text("\n".join(pairs) + "\n")
    cells = {"r": 0.2, "p": 0.4, "rho": 0.1, "n": 21}
    indicators = ("AC", "FC", "CR", "RR")
    paper_metrics = {
        "pairs": 21,
        "documents": 7,
        "chunkers": 3,
        "missing_pairs": {"bleu": 0, "ragas": 0},
        "table2": {
            i: {s: cells for s in ("BLEU", "HOPE", "zeta_con", "zeta_sem")} for i in indicators
        },
        "table2_significant_cells": 0,
        "figure7_gain_pct": dict.fromkeys(indicators, 5.0),
        "range_fraction": {"hope": 0.5},
        "leaderboard_overall_hope": dict.fromkeys(CHUNKERS, 0.5),
        "best_chunker": CHUNKERS[0],
        "best_chunker_hope": 0.5,
        "settings": {"seed": 1, "n_boot": 2000},
    }
    (paper / "metrics.json").write_text(json.dumps(paper_metrics))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert log_outputs_to_mlflow(paper, scores=out / "scores.csv", tracking_uri=uri) == run_id
    return run_id, uri


def labelled_and_probe_runs(tmp_path: Path, uri: str) -> None:
    """The labelled stage's run (its rows as chunkers.csv writes them) and the probe's, logged by
    their modules into ``uri``."""
    from hope.tracking.labelled_run import labelled_record
    from hope.tracking.probe_run import probe_record
    from hope.tracking.record import log_run

    settings = TrackingSettings.from_mapping(
        {"uri": uri, "artifact_root": str(tmp_path / "mlruns")}
    )
    for name in ("labelled", "probe"):
        (tmp_path / name).mkdir()
        for file in ("results.json", "chunkers.csv", "metrics.json"):
            (tmp_path / name / file).write_text(name)
    measures = ("budget_recall", "recall", "precision", "iou", "mean_chars", "n_passages")
    baselines = ("size_compliance", "intra_chunk_cohesion", "contextual_coherence")
    scores = ("bleu", *baselines, "passage_count", "hope", *METRICS)
    corpora = ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")
    rows = [
        {"doc_id": corpus, "domain": corpus, "chunker": c, **dict.fromkeys(measures + scores, 0.5)}
        for corpus in corpora
        for c in CHUNKERS
    ]
    tau = {
        f"tau_{t}": {k: dict.fromkeys(scores, 0.1) for k in (*corpora, "pooled")}
        for t in ("budget_recall", "recall", "iou")
    }
    metrics = {**tau, "usage": {"requests": 3, "cache_hits": 0}}
    record = labelled_record(
        {"labelled": {"corpora": list(corpora)}},
        tmp_path / "labelled",
        metrics,
        rows,
        {"labelled": 2.0},
        {},
        tmp_path,
    )
    log_run(record, settings)
    probe_measures = ("recall", "precision", "iou", "budget_recall", "budget_recall_1000")
    probe_rows = [
        {
            "doc_id": d,
            "domain": d,
            "chunker": c,
            "n_passages": 3,
            **dict.fromkeys(probe_measures, 0.4),
        }
        for d in (*DOMAINS, "pooled")
        for c in CHUNKERS
    ]
    probe = probe_record(
        {"seed": 0},
        tmp_path / "probe",
        {"ranking": list(CHUNKERS), "budget_recall": {CHUNKERS[0]: 0.4}, "questions": 70},
        probe_rows,
        {"probe": 3.0},
        {},
        tmp_path,
        {c: {"name": c, "chunk_size": 100 * (i + 1)} for i, c in enumerate(CHUNKERS)},
    )
    log_run(probe, settings)


def test_every_run_has_few_metric_keys_one_separator_and_the_same_headline_keys(
    tmp_path: Path, monkeypatch
):
    """Issue #33: 379 metric keys across the runs, ``/`` in the parents and ``.`` in the children,
    per-domain keys in every run. Now: at most 60 keys a run, one separator, the headline keys in
    every chunker run of every kind, per domain in tables, and parents that do not repeat their
    children's keys."""
    from mlflow import MlflowClient

    chunker_kinds = ("chunker", "labelled_chunker", "probe_chunker")
    headline = ("hope", *METRICS, "bleu", *RAG, "budget_recall")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    parent_id, uri = seven_domain_stage(tmp_path)
    labelled_and_probe_runs(tmp_path, uri)
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("hope").experiment_id
    runs = client.search_runs([experiment], max_results=1000)
    kinds = [r.data.tags["hope.kind"] for r in runs]
    assert sorted(set(kinds)) == [
        "chunker",
        "labelled",
        "labelled_chunker",
        "probe",
        "probe_chunker",
        "stage",
    ]
    chunker_runs = [r for r in runs if r.data.tags["hope.kind"] in chunker_kinds]
    parents = [r for r in runs if r.data.tags["hope.kind"] not in chunker_kinds]
    assert len(chunker_runs) == 9 and len(parents) == 3
    for run in runs:
        keys = set(run.data.metrics)
        assert len(keys) <= MAX_METRIC_KEYS, (run.info.run_name, len(keys), sorted(keys))
        assert not any("." in k for k in keys), (run.info.run_name, sorted(keys))
        assert not any(d in k for k in keys for d in DOMAINS), (run.info.run_name, sorted(keys))
    # The headline keys in every chunker run, whatever its kind (NaN where not measured).
    for run in chunker_runs:
        assert set(headline) <= set(run.data.metrics), run.info.run_name
    hope_runs = [r for r in chunker_runs if r.data.tags["hope.kind"] == "chunker"]
    assert len({frozenset(r.data.metrics) for r in hope_runs}) == 1
    by_name = {r.info.run_name: r.data.metrics for r in chunker_runs}
    assert by_name["hope/recursive_500"]["hope"] == pytest.approx(
        sum((d + 2) / 20 for d in range(7)) / 7
    )
    assert by_name["hope/recursive_500"]["bleu"] == pytest.approx(0.3)
    assert by_name["labelled/recursive_500"]["budget_recall"] == pytest.approx(0.5)
    assert by_name["probe/recursive_500"]["budget_recall"] == pytest.approx(0.4)
    assert math.isnan(by_name["hope/recursive_500"]["budget_recall"])
    # A probe chunker run carries its chunker's settings, as HOPE and labelled ones do.
    params = {r.info.run_name: r.data.params for r in chunker_runs}
    assert params["probe/recursive_500"]["chunker.chunk_size"] == "200"
    # Parents: summaries and comparisons, not their children's keys.
    child_keys = {k for r in chunker_runs for k in r.data.metrics}
    for parent in parents:
        assert not set(parent.data.metrics) & child_keys, parent.info.run_name
    stage = client.get_run(parent_id)
    assert stage.data.metrics["corpus/hope"] == pytest.approx(
        sum((d + c + 1) / 20 for d in range(7) for c in range(3)) / 21
    )
    assert stage.data.metrics["paper/best_chunker_hope"] == 0.5
    # Per domain and per chunker: tables.
    parent_files = {a.path for a in client.list_artifacts(parent_id)}
    assert {"domains.json", "chunkers.json", "paper_table2.json"} <= parent_files
    local = client.download_artifacts(parent_id, "domains.json", str(tmp_path))
    table = json.loads(Path(local).read_text())
    assert [row[0] for row in table["data"]] == [*DOMAINS, "all"]
    child = next(r for r in hope_runs if r.info.run_name == "hope/recursive_500")
    local = client.download_artifacts(child.info.run_id, "domains.json", str(tmp_path / "c"))
    table = json.loads(Path(local).read_text())
    hope_column = [row[table["columns"].index("hope")] for row in table["data"]]
    assert hope_column[:2] == [pytest.approx(2 / 20), pytest.approx(3 / 20)]


def test_the_experiment_opens_on_its_runs(tmp_path: Path, monkeypatch):
    """Issue #33: MLflow 3 opened the ``hope`` experiment on the GenAI trace overview (it infers
    that kind for an experiment with traces); tagged as a machine-learning experiment
    (``mlflow.experimentKind`` = ``custom_model_development``) it opens on the runs."""
    from mlflow import MlflowClient

    from hope.analysis.paper_tracking import log_outputs_to_mlflow

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, inputs = stage_outputs(tmp_path, tracking)
    run_id = record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path)
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment(client.get_run(run_id).info.experiment_id)
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    # An experiment made before (no kind) gets it; one whose kind was chosen keeps it.
    client.create_experiment("older")
    client.create_experiment("chosen", tags={"mlflow.experimentKind": "genai_development"})
    for name in ("older", "chosen"):
        params = yaml.safe_load(params_path.read_text())
        params["tracking"]["experiment_name"] = name
        params_path.write_text(yaml.safe_dump(params))
        record_score_stage(params_path, out, inputs, wall_s=1.0, repo=tmp_path)
    kinds = {
        n: client.get_experiment_by_name(n).tags["mlflow.experimentKind"]
        for n in ("older", "chosen")
    }
    assert kinds == {"older": "custom_model_development", "chosen": "genai_development"}
    # The analysis' own run, where no scoring run exists, creates the experiment the same way.
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "table2.md").write_text("| AC |\n")
    uri = f"sqlite:///{tmp_path / 'other.db'}"
    alone = log_outputs_to_mlflow(paper, tracking_uri=uri)
    other = MlflowClient(tracking_uri=uri)
    tags = other.get_experiment(other.get_run(alone).info.experiment_id).tags
    assert tags["mlflow.experimentKind"] == "custom_model_development"


def test_a_runs_duration_is_the_work_it_records(tmp_path: Path, monkeypatch):
    """Issue #33: the run's duration said 4.2 s where ``time/score_s`` was 259.7: the run was
    created when the scoring had ended. It starts ``wall_s`` before it is logged now, and so do
    its chunker runs (scored together, in the stage's work)."""
    from mlflow import MlflowClient

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    tracking = {"enabled": True, "uri": None, "artifact_root": "mlruns", "experiment_name": "hope"}
    params_path, out, inputs = stage_outputs(tmp_path, tracking)
    run_id = record_score_stage(params_path, out, inputs, wall_s=259.7, repo=tmp_path)
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = client.get_run(run_id)
    assert run.data.metrics["time/score_s"] == pytest.approx(259.7)
    runs = client.search_runs([run.info.experiment_id])
    assert len(runs) == 3
    for each in runs:
        duration_s = (each.info.end_time - each.info.start_time) / 1000
        assert 259.7 <= duration_s < 259.7 + 60, (each.info.run_name, duration_s)


def test_a_merged_sweep_logs_per_chunker_means_as_a_table_not_keys(tmp_path: Path):
    """A sharded sweep's merged result: the means over every pair as ``merged/<score>``, each
    chunker's in the table ``merged/chunkers.json`` (a key per chunker and score grew with the
    chunkers)."""
    from mlflow import MlflowClient

    from hope.tracking.sweep import log_merged_result, start_parent_run

    settings = TrackingSettings.from_mapping(
        {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "artifact_root": str(tmp_path / "mlruns")}
    )
    run_id = start_parent_run(settings, run_name="sweep", params={}, repo=tmp_path)
    merged = tmp_path / "merged"
    merged.mkdir()
    (merged / "scores.csv").write_text(SCORES_CSV)
    (merged / "summary.json").write_text("{}")
    metrics = log_merged_result(settings, run_id, merged, 2)
    assert metrics["merged/hope"] == pytest.approx(0.4) and metrics["merged/pairs"] == 3
    assert not any(k.startswith(("merged/c1", "merged/c2")) for k in metrics)
    client = MlflowClient(tracking_uri=settings.uri)
    local = client.download_artifacts(run_id, "merged/chunkers.json", str(tmp_path))
    table = json.loads(Path(local).read_text())
    rows = {r[0]: dict(zip(table["columns"], r, strict=True)) for r in table["data"]}
    assert rows["c1"]["hope"] == pytest.approx(0.2) and rows["c2"]["hope"] == pytest.approx(0.6)


def test_input_md5s_hash_the_files_given_and_every_file_under_a_folder(tmp_path):
    """The stages' ``dvc.*`` params: the probe stage reads files, the labelled stage a folder."""
    folder = tmp_path / "source"
    (folder / "corpora").mkdir(parents=True)
    for name, text in {"questions.jsonl": "q", "corpora/b.md": "b", "corpora/a.md": "a"}.items():
        (folder / name).write_text(text, encoding="utf-8")
    single = tmp_path / "documents.jsonl"
    single.write_text("d", encoding="utf-8")
    hashes = input_md5s([single, folder, tmp_path / "missing.jsonl"])
    under = sorted(str(p) for p in folder.rglob("*") if p.is_file())
    assert list(hashes) == [str(single), *under]
    assert hashes == file_md5s([single, *map(Path, under)])


def test_enabled_stage_settings_resolve_the_artifact_root_or_are_none_when_off(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"tracking": {"enabled": False}}), encoding="utf-8")
    assert enabled_stage_settings(params, tmp_path) is None
    tracking = {"enabled": True, "artifact_root": "artifacts"}
    params.write_text(yaml.safe_dump({"tracking": tracking}), encoding="utf-8")
    settings = enabled_stage_settings(params, tmp_path)
    assert settings is not None
    assert settings.artifact_root == str((tmp_path / "artifacts").resolve())
