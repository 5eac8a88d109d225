"""A whole job against the simulated LLM server: outputs, the MLflow run's contents, no secrets."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from mlflow import MlflowClient
from omegaconf import OmegaConf

from hope.pipeline.run import run

from .conftest import compose, small_overrides

SECRET_ENV_VALUE = "sk-env-secret-4242"
SECRET_CONFIG_VALUE = "sk-config-secret-7777"


def _artifacts(client: MlflowClient, run_id: str, path: str | None = None) -> list[str]:
    out = []
    for item in client.list_artifacts(run_id, path):
        out += _artifacts(client, run_id, item.path) if item.is_dir else [item.path]
    return out


@pytest.mark.slow
def test_job_logs_config_metrics_prompts_evidence_and_no_secret(
    tmp_path: Path, documents_file: Path, sim_server, monkeypatch
):
    monkeypatch.setenv("HOPE_TEST_API_KEY", SECRET_ENV_VALUE)
    overrides = [
        *small_overrides(tmp_path, documents_file, sim_server.base_url),
        # A key the config holds, and one resolved from the environment into a request field.
        f"+llm.extra_body.api_key={SECRET_CONFIG_VALUE}",
        "+llm.extra_body.note=${oc.env:HOPE_TEST_API_KEY}",
    ]
    cfg = compose(overrides)
    out = tmp_path / "job"
    objective = run(cfg, output_dir=out)

    rows = list(csv.DictReader((out / "scores.csv").open()))
    assert {(r["doc_id"], r["chunker"]) for r in rows} == {
        ("tiny-news", "fixed_500_o0"),
        ("tiny-wiki", "fixed_500_o0"),
    }
    assert objective == pytest.approx(sum(float(r["hope"]) for r in rows) / 2)
    assert 0.0 <= objective <= 1.0

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("hope").experiment_id])
    (logged,) = [r for r in runs if r.data.tags["hope.kind"] == "job"]
    (child,) = [r for r in runs if r.data.tags["hope.kind"] == "chunker"]
    assert child.data.tags["mlflow.parentRunId"] == logged.info.run_id
    data = logged.data
    assert logged.info.status == "FINISHED" and child.info.status == "FINISHED"
    assert data.metrics["objective"] == pytest.approx(objective)
    # The parent: corpus level; the chunker's run: its scores; per domain and document: tables.
    for name in ("hope", "concept_unity", "semantic_independence", "information_preservation"):
        assert f"corpus/{name}" in data.metrics and name in child.data.metrics
    assert data.metrics["corpus/hope"] == pytest.approx(objective)
    assert child.data.metrics["hope"] == pytest.approx(objective)
    local = client.download_artifacts(child.info.run_id, "domains.json", str(tmp_path))
    domains = json.loads(Path(local).read_text())
    by_domain = {r[0]: r[domains["columns"].index("hope")] for r in domains["data"]}
    assert by_domain["wiki"] == pytest.approx(
        float(next(r["hope"] for r in rows if r["doc_id"] == "tiny-wiki"))
    )
    assert "corpus/bleu" in data.metrics and math.isfinite(child.data.metrics["bleu"])
    assert child.data.params["chunker.chunk_size"] == "200"
    assert {"documents.json", "evidence.jsonl"} <= set(_artifacts(client, child.info.run_id))
    assert {d.dataset.name.split("-")[0] for d in child.inputs.dataset_inputs} == {
        "corpus",
        "chunks",
    }
    linked = child.data.tags["mlflow.linkedPrompts"]
    assert "concept_statements" in linked and linked == data.tags["mlflow.linkedPrompts"]
    assert data.metrics["corpus/usage/requests"] > 0
    assert data.metrics["corpus/usage/prompt_tokens"] > 0
    assert {
        "corpus/usage/cache_hits",
        "corpus/usage/failures",
        "time/total_s",
        "time/score_s",
    } <= set(data.metrics)
    # Config, seeds, prompt versions, commit.
    assert data.params["cfg.chunker.chunk_size"] == "200"
    assert data.params["cfg.llm.extra_body.api_key"] == "***REDACTED***"
    assert len(data.params["data.documents_sha256"]) == 64
    assert data.params["seed.hope"] == "0" and data.params["seed.corpus"] == "2025"
    assert data.params["prompt.concept_statements"].startswith("concept_statements@v")
    assert len(data.tags["mlflow.source.git.commit"]) == 40
    artifacts = _artifacts(client, logged.info.run_id)
    assert {"config.yaml", "scores.csv", "summary.json", "provenance.json"} <= set(artifacts)
    assert "prompts/truth_choice.yaml" in artifacts
    prompt = Path(logged.info.artifact_uri.removeprefix("file://")) / "prompts/truth_choice.yaml"
    assert "version: " in prompt.read_text() and "user: " in prompt.read_text()

    # No secret anywhere in the store: the database file and every artifact.
    # (The traces of the job's LLM calls are in the database too: the default share is all.)
    assert client.search_traces(locations=[logged.info.experiment_id])
    stored = [tmp_path / "mlflow.db", *(p for p in (tmp_path / "mlruns").rglob("*") if p.is_file())]
    for path in stored:
        content = path.read_bytes()
        assert SECRET_ENV_VALUE.encode() not in content, path
        assert SECRET_CONFIG_VALUE.encode() not in content, path


@pytest.mark.slow
def test_tracking_none_writes_outputs_only(tmp_path: Path, documents_file: Path, sim_server):
    overrides = small_overrides(tmp_path, documents_file, sim_server.base_url)
    overrides = [o for o in overrides if not o.startswith("tracking.")]
    cfg = compose([*overrides, "tracking=none", "bleu.enabled=false", "objective=concept_unity"])
    value = run(cfg, output_dir=tmp_path / "job")
    assert not (tmp_path / "mlflow.db").exists()
    assert (tmp_path / "job" / "evidence.jsonl").stat().st_size > 0
    rows = list(csv.DictReader((tmp_path / "job" / "scores.csv").open()))
    assert "bleu" not in rows[0]
    assert math.isclose(value, sum(float(r["concept_unity"]) for r in rows) / len(rows))


@pytest.mark.slow
def test_job_streams_the_same_passages_summary_and_bleu_as_the_stages(
    tmp_path: Path, documents_file: Path, sim_server
):
    """hope-run chunks each document when its pairs' turn comes; what it writes is what the chunk
    and bleu stages give for the whole corpus at once, and the rows come sorted by pair."""
    import json

    from hope.core.io import jsonl_lines
    from hope.pipeline.bleu_step import bleu_scores
    from hope.pipeline.chunk_step import chunk_documents, passage_sizes, summarise
    from hope.pipeline.config_schema import validate_run_config
    from hope.pipeline.run import select_chunkers

    overrides = small_overrides(tmp_path, documents_file, sim_server.base_url)
    overrides = [o for o in overrides if not o.startswith("tracking.")]
    cfg = compose([*overrides, "tracking=none"])
    out = tmp_path / "job"
    run(cfg, output_dir=out)

    documents = [json.loads(line) for line in documents_file.open(encoding="utf-8")]
    chunkers = select_chunkers(validate_run_config(OmegaConf.to_container(cfg, resolve=True)))
    records = chunk_documents(documents, chunkers)
    assert (out / "passages.jsonl").read_text(encoding="utf-8") == "".join(jsonl_lines(records))
    assert json.loads((out / "chunks_summary.json").read_text()) == json.loads(
        json.dumps(summarise(passage_sizes(records), chunkers))
    )
    rows = list(csv.DictReader((out / "scores.csv").open()))
    assert [(r["doc_id"], r["chunker"]) for r in rows] == sorted(
        (d["doc_id"], c.name) for d in documents for c in chunkers
    )
    expected = {
        (b["doc_id"], b["chunker"]): b["bleu"]
        for b in bleu_scores(documents, records, tokenize=cfg.bleu.tokenize, joiner=cfg.bleu.joiner)
    }
    assert {(r["doc_id"], r["chunker"]): float(r["bleu"]) for r in rows} == pytest.approx(expected)


@pytest.mark.slow
def test_a_rerun_reads_its_chunks_from_the_cache(
    tmp_path: Path, documents_file: Path, sim_server, monkeypatch
):
    import sys

    job = sys.modules["hope.pipeline.run"]  # the package exports run() under the same name
    overrides = small_overrides(tmp_path, documents_file, sim_server.base_url)
    overrides = [o for o in overrides if not o.startswith("tracking.")]
    cfg = compose([*overrides, "tracking=none"])
    run(cfg, output_dir=tmp_path / "cold")

    def no_chunking(*args, **kwargs):
        raise AssertionError("chunked again")

    monkeypatch.setattr(job, "chunk_pair", no_chunking)
    run(cfg, output_dir=tmp_path / "warm")
    for name in ("passages.jsonl", "scores.csv", "chunks_summary.json"):
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes()
    off = compose([*overrides, "tracking=none", "cache.reuse_results=false"])
    with pytest.raises(AssertionError, match="chunked again"):
        run(off, output_dir=tmp_path / "off")


@pytest.mark.slow
def test_hope_run_samples_sequentially(tmp_path: Path, documents_file: Path, sim_server):
    """hope-run with ``hope.sampling.mode=sequential``: with epsilon 0 every item is drawn and the
    scores are the full run's; with a loose epsilon each pair stops after its first round, says
    why in its evidence, and keeps the passages it did not draw as not sampled."""
    import json

    overrides = small_overrides(tmp_path, documents_file, sim_server.base_url)
    overrides = [o for o in overrides if not o.startswith("tracking.")]
    base = [*overrides, "tracking=none", "bleu.enabled=false", "chunker.chunk_size=120"]
    base.append("hope.focus_passages=null")
    rounds = [
        "hope.sampling.mode=sequential",
        "hope.sampling.round_focus_passages=1",
        "hope.sampling.round_segments=1",
    ]

    def scores(out: Path) -> dict[tuple[str, str], dict[str, str]]:
        rows = csv.DictReader((out / "scores.csv").open())
        return {(r["doc_id"], r["chunker"]): r for r in rows}

    def evidence(out: Path) -> list[dict]:
        lines = (out / "evidence.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]

    run(compose(base), output_dir=tmp_path / "full")
    run(compose([*base, *rounds, "hope.sampling.epsilon=0"]), output_dir=tmp_path / "exact")
    run(compose([*base, *rounds, "hope.sampling.epsilon=1"]), output_dir=tmp_path / "loose")

    full, exact = scores(tmp_path / "full"), scores(tmp_path / "exact")
    assert full.keys() == exact.keys()
    for pair, row in full.items():
        for metric in (
            "concept_unity",
            "semantic_independence",
            "information_preservation",
            "hope",
        ):
            assert float(exact[pair][metric]) == pytest.approx(float(row[metric])), (pair, metric)
    assert all("sampling" not in result for result in evidence(tmp_path / "full"))
    for result in evidence(tmp_path / "exact"):
        record = result["sampling"]
        assert record["stopped"] == "exhausted"
        assert record["drawn"] == record["population"]

    loose = evidence(tmp_path / "loose")
    assert loose
    for result in loose:
        record = result["sampling"]
        assert record["stopped"] == "epsilon" and record["rounds"] == 1
        assert record["drawn"] == {"focus_passages": 1, "segments": 1}
    assert any(r["sampling"]["population"]["focus_passages"] > 1 for r in loose)
    for result in loose:
        absent = [
            p["concept_unity"] for p in result["passages"] if p["concept_unity"]["score"] is None
        ]
        assert len(absent) == result["sampling"]["population"]["focus_passages"] - 1
        for entry in absent:
            assert entry["status"] == "not_sampled"
            assert entry["reason"] == "sampling.mode sequential: stopped after round 1 (epsilon)"
