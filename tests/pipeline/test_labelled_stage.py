"""The DVC stages of the labelled benchmark: labelled_data (copy and check) and labelled (measure,
analyse, write), on a real slice of Chroma's evaluation set with the hashing embedder, no LLM."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from hope.pipeline import REPO_ROOT
from hope.pipeline import labelled_step as labelled_work
from hope.pipeline.params import compose_params
from hope.stages import labelled_data_stage as labelled_data
from hope.stages import labelled_stage as labelled
from hope.tracking.labelled_run import flat_tau, labelled_record, tau_table

SOURCE = REPO_ROOT.parent / "shared" / "benchmarks" / "chroma-general-eval"
needs_data = pytest.mark.skipif(not SOURCE.is_dir(), reason="../shared benchmarks not present")


def write_params(path: Path, **labelled_keys) -> Path:
    params = compose_params()
    # The whole set's settings and checksums (experiment=labelled), then the test's keys.
    params["labelled"] = compose_params(["experiment=labelled"])["labelled"]
    params["labelled"].update(source=str(SOURCE), **labelled_keys)
    params["tracking"] = {"enabled": False}
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return path


@needs_data
def test_labelled_data_copies_the_checked_files(tmp_path, capsys):
    params = write_params(tmp_path / "params.yaml", corpora=["chatlogs", "wikitexts"])
    out = tmp_path / "source"
    assert labelled_data.main(["--params", str(params), "--out", str(out)]) == 0
    copied = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert copied == ["LICENSE", "corpora/chatlogs.md", "corpora/wikitexts.md", "questions.jsonl"]
    checksums = compose_params(["experiment=labelled"])["labelled"]["checksums"]
    for name in copied:
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == checksums[name]


def test_the_sample_slice_ships_with_the_package(tmp_path, monkeypatch):
    """make repro's slice reads nothing outside the repository: labelled.source is relative to
    the repository root and the files match the composed checksums."""
    params = compose_params()
    params["tracking"] = {"enabled": False}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    monkeypatch.chdir(REPO_ROOT)
    out = tmp_path / "source"
    assert labelled_data.main(["--params", str(path), "--out", str(out)]) == 0
    assert not Path(params["labelled"]["source"]).is_absolute()
    questions = (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(questions) == 56 and all(json.loads(q)["corpus"] == "chatlogs" for q in questions)
    assert (out / "corpora" / "chatlogs.md").stat().st_size == 40013


@needs_data
def test_labelled_data_refuses_a_changed_file_and_writes_nothing(tmp_path, capsys):
    source = tmp_path / "copy"
    shutil.copytree(SOURCE, source)
    with (source / "corpora" / "chatlogs.md").open("a", encoding="utf-8") as handle:
        handle.write("one more line\n")
    params = write_params(tmp_path / "params.yaml", corpora=["chatlogs"])
    data = yaml.safe_load(params.read_text())
    data["labelled"]["source"] = str(source)
    params.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    assert labelled_data.main(["--params", str(params), "--out", str(out)]) == 1
    assert "chatlogs.md: sha256" in capsys.readouterr().err
    assert not out.exists()

    data["labelled"]["source"] = str(tmp_path / "missing")
    params.write_text(yaml.safe_dump(data))
    assert labelled_data.main(["--params", str(params), "--out", str(out)]) == 1
    assert "labelled.source" in capsys.readouterr().err and not out.exists()


@needs_data
def test_labelled_stage_writes_the_same_bytes_in_two_folders(tmp_path):
    """Measures, baselines and tau without HOPE (no profile): every output is a pure function of
    the inputs, whatever the folder."""
    outputs = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        params = write_params(
            folder / "params.yaml",
            corpora=["chatlogs"],
            chunkers=["fixed_2000_o0", "fixed_500_o0", "recursive_500"],
            embedder="hashing",
            profiles=[],
            resamples=100,
        )
        assert labelled_data.main(["--params", str(params), "--out", str(folder / "src")]) == 0
        argv = ["--params", str(params), "--data", str(folder / "src"), "--out-dir"]
        argv += [str(folder / "out"), "--conf-dir", str(REPO_ROOT / "conf" / "chunker")]
        argv += ["--cache", str(folder / "cache.sqlite")]
        assert labelled.main(argv) == 0
        outputs.append({p.name: p.read_bytes() for p in (folder / "out").iterdir()})
    assert outputs[0] == outputs[1]
    assert set(outputs[0]) == {"results.json", "chunkers.csv", "metrics.json"}
    assert str(tmp_path).encode() not in b"".join(outputs[0].values())

    rows = list(csv.DictReader(outputs[0]["chunkers.csv"].decode().splitlines()))
    assert [r["chunker"] for r in rows] == ["fixed_2000_o0", "fixed_500_o0", "recursive_500"]
    assert {r["doc_id"] for r in rows} == {"chatlogs"}
    # fixed_2000 passages hold 2,000 characters; the others at most 500
    assert [float(r["mean_chars"]) for r in rows][:2] == [2000.0, 500.0]
    assert all(0 <= float(r["budget_recall"]) <= 1 for r in rows)
    metrics = json.loads(outputs[0]["metrics.json"])
    # The headline for `dvc metrics show`: pooled τ of HOPE and BLEU, the usage; every τ is in
    # results.json (and the MLflow run's table).
    assert metrics["usage"] == {"requests": 0, "cache_hits": 0}
    assert set(metrics) == {"tau_budget_recall", "usage"}
    full = labelled_work.tau_metrics(json.loads(outputs[0]["results.json"]), "")
    chatlogs = full["tau_budget_recall"]["chatlogs"]
    assert "hope" not in chatlogs and {"bleu", "size_compliance"} <= set(chatlogs)
    assert full["tau_budget_recall"]["pooled"] == chatlogs  # one corpus
    assert metrics["tau_budget_recall"] == {"hope": None, "bleu": chatlogs["bleu"]}
    flat = flat_tau(full)  # pooled τ as metrics, per corpus in the table tau.json
    assert flat["tau/budget_recall/bleu"] == chatlogs["bleu"]
    # What each score tracks beyond passage length: τ with the mean passage length and the
    # partial τ given it, in results.json and the run's table tau.json; not as metrics, which
    # would take the labelled run past 60 keys (62 in a real make repro).
    results = json.loads(outputs[0]["results.json"])
    assert results["corpora"]["chatlogs"]["passage_length"]["mean_chars"]["fixed_2000_o0"] == 2000
    with_length = full["tau_passage_length"]["chatlogs"]
    assert full["tau_passage_length"]["pooled"] == with_length and "bleu" in with_length
    assert set(full["tau_budget_recall_given_length"]["pooled"]) == set(chatlogs)
    assert not any("length" in key for key in flat)
    table = tau_table(full)
    rows = list(zip(table["target"], table["corpus"], table["score"], table["tau"], strict=True))
    assert ("passage_length", "chatlogs", "bleu", with_length["bleu"]) in rows
    assert any(r[0] == "budget_recall_given_length" for r in rows)


def test_bad_labelled_settings_name_the_key(tmp_path, capsys):
    params = write_params(tmp_path / "params.yaml", k=0)
    argv = ["--params", str(params), "--data", str(tmp_path), "--out-dir", str(tmp_path / "out")]
    assert labelled.main(argv) == 1
    err = capsys.readouterr().err
    assert "params.yaml: labelled.k: Input should be greater than or equal to 1" in err, err
    assert not (tmp_path / "out").exists()


def test_score_columns_name_the_profile_beyond_the_first():
    assert labelled_work.column("hope[paper]", "paper") == "hope"
    assert labelled_work.column("concept_unity[robust]", "paper") == "concept_unity_robust"
    assert labelled_work.column("bleu", "paper") == "bleu"


def test_each_chunker_usage_sums_its_hope_runs_and_reaches_its_child_record(tmp_path):
    def cell(*requests):
        return {"hope": {p: {"llm": {"requests": r, "cache_hits": 1}} for p, r in requests}}

    report = {
        "corpora": {
            "a": {"chunkers": {"x": cell(("paper", 3), ("robust", 4)), "y": cell(("paper", 2))}},
            "b": {"chunkers": {"x": cell(("paper", 5)), "y": {"hope": {}}}},
        }
    }
    usage = labelled_work.usage_by_chunker(report)
    assert usage == {"x": {"requests": 12, "cache_hits": 3}, "y": {"requests": 2, "cache_hits": 1}}
    (tmp_path / "results.json").write_text("{}")
    metrics = {"usage": {"requests": 14, "cache_hits": 4}}
    record = labelled_record({}, tmp_path, metrics, [], {}, {}, tmp_path, usage)
    assert record.usage == metrics["usage"]
    assert record.usage_by_chunker == usage
