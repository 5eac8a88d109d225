"""The tracking of the sample pipeline against a real ``mlflow server`` (a subprocess on a free
local port, SQLite store and artifacts in tmp), checked through the server's REST API only: the
parent run and its chunker runs with uniform metric keys, the datasets, the registered and linked
prompts, the LLM call traces, the paper outputs on the parent, and no secret anywhere."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from .conftest import SENTENCES
from .mlflow_views import Rest, mlflow_server

pytestmark = pytest.mark.slow

SECRET_ENV_VALUE = "sk-env-secret-5150"
SECRET_CONFIG_VALUE = "sk-config-secret-8080"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``mlflow server`` with a SQLite store and proxied artifacts, one for the module."""
    root = tmp_path_factory.mktemp("mlflow-server")
    with mlflow_server(root / "mlflow.db", root / "artifacts", root / "server.log") as base:
        yield base, root


def _write_inputs(work: Path) -> tuple[Path, Path]:
    """Two documents (news, wiki), each cut by two chunkers."""
    documents = work / "documents.jsonl"
    passages = work / "passages.jsonl"
    texts = {"d-news": " ".join(SENTENCES), "d-wiki": " ".join(reversed(SENTENCES))}
    documents.write_text(
        "".join(
            json.dumps({"doc_id": d, "domain": d.split("-")[1], "text": t}) + "\n"
            for d, t in texts.items()
        )
    )
    lines = []
    for doc_id, text in texts.items():
        for chunker, size in (("halves", len(text) // 2 + 1), ("thirds", len(text) // 3 + 1)):
            pieces = [text[i : i + size] for i in range(0, len(text), size)]
            lines += [
                json.dumps(
                    {
                        "passage_id": f"{doc_id}::{chunker}::{i}",
                        "doc_id": doc_id,
                        "chunker": chunker,
                        "index": i,
                        "text": piece,
                    }
                )
                for i, piece in enumerate(pieces)
            ]
    passages.write_text("\n".join(lines) + "\n")
    return documents, passages


def test_sample_pipeline_tracking_in_a_real_server(server, tmp_path: Path, monkeypatch):
    from hope.analysis.paper_tracking import log_outputs_to_mlflow
    from hope.stages.score_stage import main
    from hope.testing import SimulatedServer
    from hope.tracking.layout import CHILD_SCORES, CHILD_USAGE
    from hope.tracking.provenance import file_md5s

    base, root = server
    rest = Rest(base)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", base)
    monkeypatch.setenv("HOPE_TEST_API_KEY", SECRET_ENV_VALUE)
    documents, passages = _write_inputs(tmp_path)
    with SimulatedServer(latency_s=0.0) as llm_server:
        params = {
            "corpora": {"profile": "sample", "seed": 1},
            "chunkers": ["halves", "thirds"],
            "hope": {
                "profile": "paper",
                "llm": "llamacpp_server",
                "embedder": "hashing",
                "cache": "cache.sqlite",
                "overrides": [
                    f"llm.base_url={llm_server.base_url}",
                    "hope.focus_passages=1",
                    "hope.concept_unity.n_items=2",
                    "hope.semantic_independence.n_questions=1",
                    "hope.information_preservation.n_segments=2",
                    # A secret in the config, and one from the environment in a request field.
                    f"+llm.extra_body.api_key={SECRET_CONFIG_VALUE}",
                    "+llm.extra_body.note=${oc.env:HOPE_TEST_API_KEY}",
                ],
            },
            "tracking": {"enabled": True, "uri": None, "trace_share": 1.0},
        }
        Path("params.yaml").write_text(yaml.safe_dump(params))
        argv = ["--documents", str(documents), "--passages", str(passages), "--out-dir", "out"]
        assert main(argv) == 0
        assert llm_server.requests > 0

    # The analysis of those scores (the paper_outputs stage): BLEU and RAGAS per pair.
    scores = _csv_rows(Path("out/scores.csv"))
    paper = tmp_path / "paper_figures"
    paper.mkdir()
    header = "doc_id,chunker,domain,hope,bleu,context_recall,response_relevancy"
    lines = [header] + [
        f"{r['doc_id']},{r['chunker']},{r['domain']},{r['hope']},"
        f"{0.2 if r['chunker'] == 'halves' else 0.4},0.5,"
        for r in scores
    ]
    (paper / "pairs.csv").write_text("\n".join(lines) + "\n")
    (paper / "table2.md").write_text("| AC |\n")
    parent_id = log_outputs_to_mlflow(paper, scores=Path("out/scores.csv"), tracking_uri=base)

    # --- through the REST API only -----------------------------------------------------------
    experiment = rest.call("/api/2.0/mlflow/experiments/get-by-name", experiment_name="hope")
    exp_id = experiment["experiment"]["experiment_id"]
    # An ML experiment: MLflow 3's UI opens it on its runs, not on the GenAI trace overview.
    experiment_tags = {t["key"]: t["value"] for t in experiment["experiment"]["tags"]}
    assert experiment_tags["mlflow.experimentKind"] == "custom_model_development"
    runs = rest.runs(exp_id)
    tags = {r["info"]["run_id"]: {t["key"]: t["value"] for t in r["data"]["tags"]} for r in runs}
    parents = [r for r in runs if tags[r["info"]["run_id"]]["hope.kind"] == "stage"]
    children = [r for r in runs if tags[r["info"]["run_id"]]["hope.kind"] == "chunker"]
    assert len(runs) == 3 and len(parents) == 1 and len(children) == 2
    assert {c["info"]["run_name"] for c in children} == {"hope/halves", "hope/thirds"}
    (parent,) = parents
    assert parent["info"]["run_id"] == parent_id and parent["info"]["status"] == "FINISHED"
    assert {tags[c["info"]["run_id"]]["mlflow.parentRunId"] for c in children} == {parent_id}
    assert {tags[c["info"]["run_id"]]["hope.chunker"] for c in children} == {"halves", "thirds"}

    # The parent: config, seeds, commit, DVC hashes, objective; the paper outputs.
    parent_params = {p["key"]: p["value"] for p in parent["data"]["params"]}
    assert parent_params["seed.corpus"] == "1" and parent_params["objective"] == "hope"
    md5s = file_md5s([documents, passages])
    assert md5s[str(documents)] in parent_params.values()
    # (No commit tag: the stage ran outside a git checkout here; test_run.py checks the commit.)
    assert "mlflow.source.git.commit" not in tags[parent_id]
    assert tags[parent_id]["mlflow.source.name"] == "dvc.yaml:hope"
    parent_metrics = {m["key"]: m["value"] for m in parent["data"]["metrics"]}
    assert "objective" in parent_metrics and parent_metrics["corpus/usage/requests"] > 0
    assert not any(k.startswith(("pair/", "chunker/", "domain/")) for k in parent_metrics)
    assert {
        "paper_figures/table2.md",
        "paper_figures/pairs.csv",
        "scores.csv",
        "domains.json",
        "chunkers.json",
    } <= set(rest.artifacts(parent_id))
    # One filter selects the HOPE chunker runs and nothing else.
    selected = rest.runs(exp_id, "tags.`hope.kind` = 'chunker'")
    assert {r["info"]["run_name"] for r in selected} == {"hope/halves", "hope/thirds"}
    # No run has more than 60 metric keys; one separator, /.
    for run in runs:
        keys = [m["key"] for m in run["data"]["metrics"]]
        assert len(keys) <= 60 and not any("." in k for k in keys), run["info"]["run_name"]

    # The chunker runs: the same metric keys, BLEU and RAGAS from the analysis, NaN where unrun.
    metrics = {
        tags[c["info"]["run_id"]]["hope.chunker"]: {
            m["key"]: m["value"] for m in c["data"]["metrics"]
        }
        for c in children
    }
    assert metrics["halves"].keys() == metrics["thirds"].keys()
    expected = {*CHILD_SCORES, *(f"usage/{k}" for k in CHILD_USAGE), "failures/total"}
    assert expected <= metrics["halves"].keys()
    assert not set(parent_metrics) & metrics["halves"].keys()  # parents: summaries, not these
    assert metrics["halves"]["bleu"] == pytest.approx(0.2)
    assert metrics["thirds"]["bleu"] == pytest.approx(0.4)
    assert metrics["thirds"]["context_recall"] == pytest.approx(0.5)
    assert metrics["halves"]["answer_correctness"] == "NaN"  # not run: the key, no number
    assert math.isnan(float(metrics["thirds"]["response_relevancy"]))
    by_chunker = {r["chunker"]: r for r in scores}
    for name, values in metrics.items():
        if by_chunker[name]["hope"]:
            hope = [float(r["hope"]) for r in scores if r["chunker"] == name and r["hope"]]
            assert values["hope"] == pytest.approx(sum(hope) / len(hope))
    # Each chunker's calls (sent, cached or shared with another chunker's identical request).
    assert sum(m["usage/calls"] for m in metrics.values()) == (
        parent_metrics["corpus/usage/requests"] + parent_metrics["corpus/usage/cache_hits"]
    )

    # Per-document rows as an MLflow table, the evidence, the datasets named by their md5.
    for child in children:
        run_id = child["info"]["run_id"]
        assert {"documents.json", "domains.json", "evidence.jsonl"} <= set(rest.artifacts(run_id))
        datasets = {d["dataset"]["name"]: d["dataset"] for d in child["inputs"]["dataset_inputs"]}
        assert set(datasets) == {
            f"corpus-{md5s[str(documents)]}",
            f"chunks-{md5s[str(passages)]}",
        }
        assert {d["digest"] for d in datasets.values()} == set(md5s.values())
        assert all(str(tmp_path) in d["source"] for d in datasets.values())

    # Every prompt the stage used, registered under its name with its version, linked to runs.
    summary = json.loads(Path("out/summary.json").read_text())
    assert summary["prompts"]
    for name, prompt in summary["prompts"].items():
        model = rest.call("/api/2.0/mlflow/registered-models/get", name=name)["registered_model"]
        (latest,) = model["latest_versions"]
        version_tags = {t["key"]: t["value"] for t in latest["tags"]}
        # The prompt belongs to the runs' experiment: its Prompts tab lists it.
        prompt_tags = {t["key"]: t["value"] for t in model.get("tags", [])}
        assert f",{exp_id}," in prompt_tags.get("_mlflow_experiment_ids", ""), prompt_tags
        assert ",0," not in prompt_tags.get("_mlflow_experiment_ids", "")
        assert version_tags["mlflow.prompt.is_prompt"] == "true"
        assert version_tags["hope.prompt_id"] == prompt["id"]
        assert version_tags["hope.version"] == str(prompt["version"])
        for run_id in [parent_id, *(c["info"]["run_id"] for c in children)]:
            linked = json.loads(tags[run_id]["mlflow.linkedPrompts"])
            assert {"name": name, "version": latest["version"]} in linked

    # Every LLM call (share 1.0) is a trace of its chunker run: prompt, answer, seed, latency,
    # tagged with the chunker, the document and the sub-metric it was for.
    body = {
        "locations": [
            {"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": exp_id}}
        ],
        "max_results": 500,
    }
    traces = rest.call("/api/3.0/mlflow/traces/search", body).get("traces", [])
    calls = parent_metrics["corpus/usage/requests"] + parent_metrics["corpus/usage/cache_hits"]
    assert len(traces) == calls
    child_ids = {tags[c["info"]["run_id"]]["hope.chunker"]: c["info"]["run_id"] for c in children}
    for trace in traces:
        trace_tags = trace["tags"]
        assert trace["trace_metadata"]["mlflow.sourceRun"] == child_ids[trace_tags["hope.chunker"]]
        assert trace_tags["hope.parent_run"] == parent_id
        assert trace_tags["hope.doc_id"] in {"d-news", "d-wiki"}
        assert trace_tags["hope.metric"] in {
            "concept_unity",
            "semantic_independence",
            "information_preservation",
        }
    prompt_ids = {p["id"] for p in summary["prompts"].values()}
    assert {t["tags"]["hope.prompt"] for t in traces} <= prompt_ids
    one = rest.call(
        "/api/3.0/mlflow/traces/get", trace_id=traces[0]["trace_id"], allow_partial="false"
    )
    span_text = json.dumps(one)
    for attribute in ("hope.seed", "hope.latency_s", "hope.cache_hit", "messages", "response"):
        assert attribute in span_text, attribute

    # No secret anywhere: the database, every artifact, what the API serves.
    stored = [root / "mlflow.db", *(p for p in (root / "artifacts").rglob("*") if p.is_file())]
    assert len(stored) > 10
    served = json.dumps([runs, traces, one])
    for secret in (SECRET_ENV_VALUE, SECRET_CONFIG_VALUE):
        assert secret not in served
        for path in stored:
            assert secret.encode() not in path.read_bytes(), path


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))
