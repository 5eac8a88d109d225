"""`dvc repro` of the whole chain in a scratch copy of the repository, offline and fast.

Both LLM sides (HOPE and RAG/RAGAS) talk to the simulated OpenAI-compatible server and the
embedders are the hashing double, so what is tested is the pipeline itself: every stage runs
from a clean state, outputs join, the paper outputs appear, and a second `dvc repro` is a no-op
that sends no request.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from hope.testing import SimulatedServer

from .mlflow_views import Rest, check_repro_store, mlflow_server

pytestmark = pytest.mark.slow

COPIED = ["dvc.yaml", "params.yaml", ".dvcignore", "conf", "notebooks", "src"]


def scratch_repo(repo_root: Path, work: Path, base_url: str) -> None:
    for name in COPIED:
        source = repo_root / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, work / name)
    (work / ".venv").symlink_to(repo_root / ".venv")
    params = yaml.safe_load((work / "params.yaml").read_text())
    params["chunkers"] = ["fixed_500_o0", "recursive_500"]
    params["hope"].update(
        llm="llamacpp_server",
        embedder="hashing",
        cache=str(work / "cache.sqlite"),
        overrides=[*params["hope"]["overrides"], f"llm.base_url={base_url}"],
    )
    simulated = {"preset": "llamacpp_server", "overrides": {"base_url": base_url}}
    params["rag"].update(
        llm={"questions": simulated, "answer": simulated, "judge": simulated},
        embedder={"backend": "hashing"},
        # Cloze questions (no LLM): the simulated LLM's random questions fail the quality gates.
        questions={"per_domain": {"sample": 1}, "generator": "extractive"},
    )
    # Every RAG indicator (the sample experiment runs two), so that both plots draw all four.
    params["rag"]["ragas"]["metrics"] = [
        "answer_correctness",
        "factual_correctness",
        "context_recall",
        "response_relevancy",
    ]
    params["analysis"].update(bootstrap=200, min_n=3, bins=3, min_bin_size=2)
    # The labelled slice (conf/experiment/sample.yaml, its data in the package) on the simulated
    # LLM and the hashing embedder.
    params["labelled"].update(
        llm="llamacpp_server",
        embedder="hashing",
        overrides=[f"llm.base_url={base_url}"],
        resamples=200,
    )
    # The probe on the hashing embedder (code-written questions: no LLM).
    params["probe"].update(embedder="hashing", resamples=200)
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def dvc(work: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(work / ".venv" / "bin" / "dvc"), *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def stage_runs(work: Path) -> list:
    """The MLflow runs the `hope` stage logged into the scratch repo's store."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{work / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("hope")
    assert experiment is not None, "the hope stage logged no MLflow run"
    return client.search_runs(
        [experiment.experiment_id], filter_string="tags.`hope.kind` = 'stage'"
    )


def chunker_runs(work: Path, parent) -> list:
    """The chunker runs below the `hope` stage's parent run."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{work / 'mlflow.db'}")
    return client.search_runs(
        [parent.info.experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'",
    )


def check_metrics_and_plots(work: Path, env: dict[str, str]) -> None:
    """`dvc metrics show` lists every stage summary; `dvc plots show` renders the templates."""
    shown = dvc(work, "metrics", "show", "--json", env=env)
    assert shown.returncode == 0, shown.stderr[-3000:]
    # One revision: the workspace (named "" outside git).
    (revision,) = json.loads(shown.stdout).values()
    files = revision["data"]
    # A small headline per stage (the stages' summaries are plain outputs): one readable table.
    assert set(files) == {
        "data/hope/metrics.json",
        "data/labelled/metrics.json",
        "data/probe/metrics.json",
        "paper_figures/metrics.json",
    }
    assert not any("error" in f for f in files.values()), files

    def leaves(value):
        return sum(leaves(v) for v in value.values()) if isinstance(value, dict) else 1

    assert sum(leaves(f["data"]) for f in files.values()) <= 80
    table = dvc(work, "metrics", "show", env=env)
    assert max(len(line) for line in table.stdout.splitlines()) <= 1500
    hope = files["data/hope/metrics.json"]["data"]
    assert hope["pairs"] == 14 and 0 <= hope["hope"] <= 1
    chunks = json.loads((work / "data/chunks/summary.json").read_text())
    assert chunks["recursive_500"]["documents"] == 7
    # The labelled slice: the pooled tau of HOPE and BLEU with budget recall (every tau of every
    # score, target and corpus in results.json).
    labelled = files["data/labelled/metrics.json"]["data"]
    assert set(labelled["tau_budget_recall"]) == {"hope", "bleu"}
    assert all(-1 <= v <= 1 for v in labelled["tau_budget_recall"].values()), labelled
    assert labelled["usage"]["requests"] > 0
    # The probe: a ranking of the experiment's chunkers from questions written per domain.
    probe = files["data/probe/metrics.json"]["data"]
    assert "ranking" not in probe  # DVC leaves a list out of `dvc metrics show`: the file has it
    ranking = json.loads((work / "data/probe/metrics.json").read_text())["ranking"]
    assert sorted(ranking) == ["fixed_500_o0", "recursive_500"]
    assert probe["questions"] >= 7 and probe["pairs"] == 1
    assert all(0 <= v <= 1 for v in probe["budget_recall"].values()), probe

    plots = dvc(work, "plots", "show", "--json", env=env)
    assert plots.returncode == 0, plots.stderr[-3000:]
    rendered = json.loads(plots.stdout)
    assert not rendered.get("errors"), rendered.get("errors")
    indicators = {
        "answer_correctness",
        "factual_correctness",
        "context_recall",
        "response_relevancy",
    }
    # The simulated LLM quotes the passages and contexts it is given (hope.testing.
    # schema_responder), so ζ_sem has spread (Figure 7 has bins) and every RAG indicator has
    # values: both plots must draw a series for every indicator.
    spread = {
        r["semantic_independence"]
        for r in csv.DictReader((work / "paper_figures/pairs.csv").open())
    }
    assert len(spread - {""}) >= 2, spread
    series = list(csv.DictReader((work / "paper_figures/figure7_series.csv").open()))
    assert len(series) >= 2, series
    # An indicator left undefined for a pair has its reason recorded per question; here the
    # only one expected is the hashing double's: a negative cosine in response relevancy
    # (its signed features), which RAGAS's [0, 1] range check rejects.
    pairs = list(csv.DictReader((work / "paper_figures/pairs.csv").open()))
    defined = {i: sum(r[i] not in ("", "nan", "NaN") for r in pairs) for i in indicators}
    reasons = {
        str(q.get(f"{i}_error"))
        for q in map(json.loads, (work / "data/ragas/per_question.jsonl").open())
        for i in indicators
        if q.get(i) is None
    }
    assert all(r.startswith("out of range: -") for r in reasons), reasons
    assert defined["response_relevancy"] >= len(pairs) // 2, defined
    assert len(pairs) == 14 and {defined[i] for i in indicators - {"response_relevancy"}} == {14}
    for name, mark, rows in (
        ("hope_vs_rag_indicators", '"point"', defined),
        ("figure7_rag_indicators_by_semantic_independence", '"line"', dict.fromkeys(defined, 2)),
    ):
        assert rendered["data"].get(name), f"DVC drew nothing for {name}"
        (plot,) = rendered["data"][name]
        assert plot["type"] == "vega" and mark in json.dumps(plot["content"])
        values = plot["content"]["data"]["values"]
        assert {v["field"] for v in values} == indicators  # one series per indicator
        for indicator in indicators:
            points = [
                v for v in values if v["field"] == indicator and v["dvc_inferred_y_value"] != ""
            ]
            assert len(points) >= rows[indicator], (name, indicator, len(points))
    (plot,) = rendered["data"]["labelled_budget_recall_vs_label_free_scores"]
    values = plot["content"]["data"]["values"]
    assert {v["field"] for v in values} == {
        "hope",
        "size_compliance",
        "intra_chunk_cohesion",
        "contextual_coherence",
    }
    assert len(values) == 4 * 3  # four scores x three chunkers on one corpus
    html = dvc(work, "plots", "show", env=env)
    assert html.returncode == 0, html.stderr[-3000:]
    page = (work / "dvc_plots" / "index.html").read_text()
    assert "vega" in page and "figure7_rag_indicators_by_semantic_independence" in page


def test_dvc_repro_runs_every_stage_and_a_second_run_does_nothing(repo_root, tmp_path):
    work = tmp_path / "repo"
    work.mkdir()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "MPLBACKEND": "Agg",
        "HOPE_CACHE": str(work / "cache.sqlite"),
        "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlflow.db'}",
    }
    with SimulatedServer(latency_s=0.0) as server:
        scratch_repo(repo_root, work, server.base_url)
        assert dvc(work, "init", "--no-scm", "-q", env=env).returncode == 0
        first = dvc(work, "repro", env=env)
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        requests_after_first = server.requests
        assert requests_after_first > 0

        rows = list(csv.DictReader((work / "data/hope/scores.csv").open()))
        assert len(rows) == 7 * 2  # seven sample documents x two chunkers
        assert {r["chunker"] for r in rows} == {"fixed_500_o0", "recursive_500"}
        ragas = list(csv.DictReader((work / "data/ragas/per_doc_chunker.csv").open()))
        assert ragas and {r["chunker"] for r in ragas} <= {"fixed_500_o0", "recursive_500"}
        figures = work / "paper_figures"
        for name in (
            "table1.md",
            "table2.md",
            "table2.tex",
            "leaderboard.md",
            "figure6.png",
            "figure7.png",
            "figure_probe_vs_hope.png",
            "notebooks/paper_outputs.ipynb",
            "metrics.json",
        ):
            assert (figures / name).stat().st_size > 0, name
        # The probe's retrieval ranking beside HOPE on the leaderboard (issue #32).
        assert "| vs best | Retrieval (probe) |" in (figures / "leaderboard.md").read_text()

        # One experiment run: exactly one parent run (the hope stage's; nothing scored HOPE
        # again), with a child run per chunker sharing its metric keys, and the paper outputs.
        hope_runs = stage_runs(work)
        assert len(hope_runs) == 1
        assert hope_runs[0].data.metrics["corpus/n_pairs"] == 14
        children = chunker_runs(work, hope_runs[0])
        assert {c.data.tags["hope.chunker"] for c in children} == {"fixed_500_o0", "recursive_500"}
        assert children[0].data.metrics.keys() == children[1].data.metrics.keys()
        from mlflow import MlflowClient

        client = MlflowClient(tracking_uri=f"sqlite:///{work / 'mlflow.db'}")
        logged = {a.path for a in client.list_artifacts(hope_runs[0].info.run_id, "paper_figures")}
        assert "paper_figures/table2.md" in logged
        check_metrics_and_plots(work, env)
        # The labelled stage's run, beside the hope stage's: a child per chunker, the same keys.
        (labelled,) = client.search_runs(
            [hope_runs[0].info.experiment_id], filter_string="tags.`hope.kind` = 'labelled'"
        )
        assert -1 <= labelled.data.metrics["tau/budget_recall/hope"] <= 1
        labelled_children = chunker_runs(work, labelled)
        assert {c.data.tags["hope.chunker"] for c in labelled_children} == {
            "fixed_2000_o0",
            "fixed_500_o0",
            "recursive_500",
        }
        assert {"budget_recall", "iou", "hope", "size_compliance"} <= set(
            labelled_children[0].data.metrics
        )
        # Each child's LLM usage comes from results.json; together they are the stage's.
        child_requests = [c.data.metrics["usage/requests"] for c in labelled_children]
        assert all(r >= 0 for r in child_requests), child_requests
        assert sum(child_requests) == labelled.data.metrics["corpus/usage/requests"] > 0
        # Issue #33's views, through a real `mlflow server` on the store this repro wrote.
        store_log = tmp_path / "mlflow-server.log"
        with mlflow_server(work / "mlflow.db", tmp_path / "served", store_log) as base:
            counted = check_repro_store(Rest(base), work)
        # HOPE (2), labelled (3) and probe chunker runs; every HOPE call traced.
        assert counted["chunker_runs"] >= 5 and counted["traces"] > 0 and counted["prompts"] > 0

        second = dvc(work, "repro", env=env)
        assert second.returncode == 0, second.stderr[-3000:]
        assert "up to date" in second.stdout
        assert server.requests == requests_after_first
        assert len(stage_runs(work)) == 1
        assert len(chunker_runs(work, stage_runs(work)[0])) == 2


def test_dvc_exp_run_with_a_changed_parameter(repo_root, tmp_path):
    work = tmp_path / "repo"
    work.mkdir()
    identity = {
        "GIT_AUTHOR_NAME": "hope",
        "GIT_AUTHOR_EMAIL": "hope@localhost",
        "GIT_COMMITTER_NAME": "hope",
        "GIT_COMMITTER_EMAIL": "hope@localhost",
    }
    env = {**os.environ, **identity, "HF_HUB_OFFLINE": "1", "HOPE_CACHE": str(work / "c.sqlite")}
    with SimulatedServer(latency_s=0.0) as server:
        scratch_repo(repo_root, work, server.base_url)
        (work / ".gitignore").write_text(".venv\ncache.sqlite\n")
        for command in (
            ["git", "init", "-q"],
            ["git", "add", "-A"],
            ["git", "commit", "-qm", "scratch"],
        ):
            subprocess.run(command, cwd=work, env=env, check=True, capture_output=True)
        assert dvc(work, "init", "-q", env=env).returncode == 0
        # The repository's DVC config: Hydra composition of conf/dvc_params.yaml for `-S`.
        shutil.copy2(repo_root / ".dvc" / "config", work / ".dvc" / "config")
        subprocess.run(["git", "add", "-A"], cwd=work, env=env, check=True, capture_output=True)
        subprocess.run(
            ["git", "commit", "-qm", "dvc init"],
            cwd=work,
            env=env,
            check=True,
            capture_output=True,
        )
        # With Hydra, `-S` recomposes params.yaml from conf/ (scratch_repo's edits of params.yaml
        # are gone), so the simulated models come in as overrides too; llamacpp_server reads its
        # base_url from LLAMACPP_BASE_URL.
        overrides = [
            "hope.seed=7",
            "hope.llm=llamacpp_server",
            "hope.embedder=hashing",
            "hope.cache=cache.sqlite",
            "chunkers=[fixed_500_o0,recursive_500]",
        ]
        run = dvc(
            work,
            "exp",
            "run",
            *(arg for o in overrides for arg in ("-S", o)),
            "hope",
            env={**env, "LLAMACPP_BASE_URL": server.base_url},
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        params = yaml.safe_load((work / "params.yaml").read_text())
        assert params["hope"]["seed"] == 7 and params["chunkers"] == [
            "fixed_500_o0",
            "recursive_500",
        ]
        assert params["hope"]["overrides"][0] == "hope.focus_passages=1"  # conf/experiment/sample
        assert params["corpora"]["sources"]  # conf/corpora/sources.yaml
        assert server.requests > 0
        shown = dvc(work, "exp", "show", "--csv", env=env)
        assert shown.returncode == 0 and "hope.seed" in shown.stdout
        header, *rows = list(csv.reader(shown.stdout.splitlines()))
        seeds = {row[header.index("hope.seed")] for row in rows}
        assert "7" in seeds
        # The hope stage's metrics.json is a DVC metric: the experiment shows its corpus HOPE.
        # Its column is `hope`, or `<file>:hope` where another metrics file has a `hope` key too.
        column = next(h for h in header if h in ("hope", "data/hope/metrics.json:hope"))
        hope = {row[header.index("hope.seed")]: row[header.index(column)] for row in rows}
        assert 0 <= float(hope["7"]) <= 1
