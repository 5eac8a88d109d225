"""Issue #33: ``dvc metrics show`` printed 7 files, 559 keys and lines of 22,000 characters.

DVC prints one table: a row per metrics file and a column per key of every file, so the line
length grows with the keys of all the files together. Each stage's metrics file is now a small
headline (the detail is in its outputs and the MLflow runs) and the stages' summaries are plain
outputs. The test writes the metrics files the sample experiment's stages write, through the
stages' own code where it is cheap (the ``hope`` stage's record, the labelled stage's headline,
the analysis' headline; the probe's, whose code is not this test's, by its shape), in a scratch
copy of the project's dvc.yaml, and reads the real ``dvc metrics show``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CHUNKERS = ("fixed_500_o0", "recursive_500")  # the sample experiment's
MAX_KEYS = 80  # every metrics file's keys together
MAX_LINE = 200  # one stage's file shown alone (`dvc metrics show <file>`)
MAX_TABLE_LINE = 1500  # every file in one table (22,000 before)


def write_hope(work: Path) -> None:
    from hope.tracking.stage import record_score_stage

    out = work / "data" / "hope"
    out.mkdir(parents=True)
    header = (
        "doc_id,domain,chunker,n_passages,hope,concept_unity,semantic_independence,"
        "information_preservation"
    )
    domains = ("arxiv", "cord19", "debates", "manuals", "news", "tos", "wiki")
    rows = [
        f"{d}-1,{d},{c},3,0.{i + 2},0.{i + 3},0.{i + 4},0.5"
        for d in domains
        for i, c in enumerate(CHUNKERS)
    ]
    (out / "scores.csv").write_text("\n".join([header, *rows]) + "\n")
    summary = {
        "usage": {"requests": 98, "cache_hits": 14, "prompt_tokens": 3, "latency_s": 2.5},
        "failures_by_metric_and_chunker": {"concept_unity": {CHUNKERS[0]: 1}},
    }
    (out / "summary.json").write_text(json.dumps(summary))
    params = work / "stage_params.yaml"  # the stage's section, tracking off
    params.write_text(yaml.safe_dump({"hope": {"profile": "paper"}}))
    assert record_score_stage(params, out, [], wall_s=1.0, repo=work) is None  # tracking off


def write_labelled(work: Path) -> None:
    from hope.pipeline.labelled_step import headline_metrics

    scores = ("bleu", "size_compliance", "intra_chunk_cohesion", "contextual_coherence", "hope")
    scores += (
        "passage_count",
        "concept_unity",
        "semantic_independence",
        "information_preservation",
    )
    full = {
        f"tau_{target}": {corpus: dict.fromkeys(scores, 0.33) for corpus in ("chatlogs", "pooled")}
        for target in ("budget_recall", "recall", "iou")
    }
    full["usage"] = {"requests": 23, "cache_hits": 4}
    out = work / "data" / "labelled" / "metrics.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(headline_metrics(full), indent=2))


def write_probe(work: Path) -> None:
    # hope.pipeline.probe_step.probe_metrics' shape, for the sample's two chunkers.
    metrics = {
        "measure": "budget_recall@2500",
        "ranking": list(CHUNKERS),
        "budget_recall": dict.fromkeys(CHUNKERS, 0.61),
        "recall": dict.fromkeys(CHUNKERS, 0.7),
        "significant_pairs": 0,
        "pairs": 1,
        "questions": 21,
    }
    out = work / "data" / "probe" / "metrics.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(metrics, indent=2))


def write_paper(work: Path, tmp_path: Path) -> None:
    from hope.analysis import AnalysisConfig
    from hope.analysis import paper_files as stage
    from tests.analysis.synthetic import make_tables, write_tables

    paths = write_tables(make_tables(1, chunkers=CHUNKERS, seed=2), tmp_path / "inputs")
    inputs = {name: paths[name] for name in ("scores", "bleu", "ragas", "table1")}
    stage.run(out_dir=work / "paper_figures", config=AnalysisConfig(n_boot=50), **inputs)


def leaves(value: object) -> int:
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values())
    return 1


@pytest.fixture(scope="module")
def shown(repo_root: Path, tmp_path_factory) -> tuple[Path, Path]:
    dvc = Path(sys.executable).parent / "dvc"
    if not dvc.is_file():
        pytest.skip(f"no dvc beside {sys.executable}")
    work = tmp_path_factory.mktemp("metrics")
    subprocess.run([str(dvc), "init", "--no-scm", "-q"], cwd=work, check=True)
    write_hope(work)
    write_labelled(work)
    write_probe(work)
    write_paper(work, tmp_path_factory.mktemp("paper"))
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(repo_root / name, work / name)
    return dvc, work


def test_dvc_metrics_show_is_a_few_headline_keys_per_stage(shown):
    dvc, work = shown
    result = subprocess.run(
        [str(dvc), "metrics", "show", "--json"], cwd=work, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (revision,) = json.loads(result.stdout).values()
    files = {path: entry["data"] for path, entry in revision["data"].items()}
    assert set(files) == {
        "data/hope/metrics.json",
        "data/labelled/metrics.json",
        "data/probe/metrics.json",
        "paper_figures/metrics.json",
    }
    keys = {path: leaves(data) for path, data in files.items()}
    assert sum(keys.values()) <= MAX_KEYS, keys
    hope = files["data/hope/metrics.json"]
    assert set(hope) == {
        "hope",
        "concept_unity",
        "semantic_independence",
        "information_preservation",
        "pairs",
        "usage",
        "failures",
    }
    assert hope["pairs"] == 14 and hope["usage"] == {"requests": 98, "cache_hits": 14}
    assert hope["hope"] == pytest.approx((0.2 + 0.3) / 2) and hope["failures"] == 1
    labelled = files["data/labelled/metrics.json"]
    assert labelled == {
        "tau_budget_recall": {"hope": 0.33, "bleu": 0.33},
        "usage": {"requests": 23, "cache_hits": 4},
    }
    paper = files["paper_figures/metrics.json"]
    assert "table2" not in paper and set(paper["leaderboard_overall_hope"]) == set(CHUNKERS)


def test_each_stage_reads_in_a_terminal_and_all_of_them_in_one_table(shown):
    dvc, work = shown
    for path in ("data/hope/metrics.json", "data/labelled/metrics.json"):
        alone = subprocess.run(
            [str(dvc), "metrics", "show", path], cwd=work, capture_output=True, text=True
        )
        assert alone.returncode == 0, alone.stderr[-3000:]
        widest = max(len(line) for line in alone.stdout.splitlines())
        assert widest <= MAX_LINE, alone.stdout
    table = subprocess.run([str(dvc), "metrics", "show"], cwd=work, capture_output=True, text=True)
    assert table.returncode == 0, table.stderr[-3000:]
    lines = table.stdout.splitlines()
    assert len(lines) == 1 + 4  # the header and a row per stage's file
    assert max(len(line) for line in lines) <= MAX_TABLE_LINE, max(len(x) for x in lines)
