"""The helpers behind the reproducibility checks: dvc.lock output comparison and the
benchmark record (median and spread, commit, machine) shared by bench/*.py (bench/harness.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from hope.pipeline.lock import lock_differences, lock_outputs
from tests.unit.scratch_git import git

REPO = Path(__file__).resolve().parents[2]


def bench_records():
    spec = importlib.util.spec_from_file_location("bench_harness", REPO / "bench" / "harness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOCK = {
    "schema": "2.0",
    "stages": {
        "download@news": {
            "deps": [{"path": "src/x.py", "hash": "md5", "md5": "d" * 32}],
            "outs": [{"path": "data/raw/news", "hash": "md5", "md5": "a" * 32 + ".dir"}],
        },
        "hope": {
            "outs": [
                {"path": "data/hope/scores.csv", "hash": "md5", "md5": "b" * 32},
                {"path": "data/hope/metrics.json", "hash": "md5", "md5": "c" * 32},
            ]
        },
    },
}


def test_lock_outputs_lists_every_stage_output_and_no_dependency(tmp_path):
    path = tmp_path / "dvc.lock"
    path.write_text(yaml.safe_dump(LOCK))
    assert lock_outputs(path) == {
        "data/raw/news": "a" * 32 + ".dir",
        "data/hope/scores.csv": "b" * 32,
        "data/hope/metrics.json": "c" * 32,
    }


def test_lock_differences_names_changed_missing_and_extra_outputs():
    expected = lock_outputs(LOCK)
    assert lock_differences(expected, dict(expected)) == []
    actual = {**expected, "data/hope/scores.csv": "e" * 32, "extra.csv": "f" * 32}
    del actual["data/raw/news"]
    assert lock_differences(expected, actual) == [
        f"data/hope/scores.csv: {'b' * 32} != {'e' * 32}",
        f"data/raw/news: missing (expected {'a' * 32}.dir)",
        f"extra.csv: not expected (got {'f' * 32})",
    ]


def test_lock_outputs_rejects_what_is_not_a_lock(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nowhere\.lock"):
        lock_outputs(tmp_path / "nowhere.lock")
    (tmp_path / "params.yaml").write_text("hope: {}\n")
    with pytest.raises(ValueError, match=r"params\.yaml: no 'stages'"):
        lock_outputs(tmp_path / "params.yaml")
    bad = {"stages": {"hope": {"outs": [{"path": "a"}, {"path": "a", "md5": "1"}]}}}
    with pytest.raises(ValueError, match="stage hope, output a: no hash"):
        lock_outputs(bad)


def test_spread_gives_median_min_max_iqr_and_mad():
    records = bench_records()
    summary = records.spread([5.0, 1.0, 3.0, 2.0, 4.0])
    assert summary == {
        "n": 5,
        "median": 3.0,
        "min": 1.0,
        "max": 5.0,
        "iqr": 2.0,  # quartiles 2 and 4 (inclusive method)
        "mad": 1.0,
        "best_of_n": 1.0,
        "runs": [5.0, 1.0, 3.0, 2.0, 4.0],
    }
    assert records.spread([20.0, 50.0, 30.0, 40.0, 10.0], higher_is_better=True)["best_of_n"] == 50
    with pytest.raises(ValueError, match="at least one"):
        records.spread([])
    with pytest.raises(ValueError, match="--runs 3: at least 5"):
        records.check_runs(3)


def test_git_state_sees_a_dirty_tree_and_machine_names_the_cpu(tmp_path):
    records = bench_records()
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "x")
    clean = records.git_state(tmp_path)
    assert len(clean["commit"]) == 40 and clean["dirty"] is False
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "engine.json").write_text("{}")
    assert records.git_state(tmp_path)["dirty"] is False  # a result is not the code measured
    (tmp_path / "new.txt").write_text("x")
    assert records.git_state(tmp_path)["dirty"] is True
    with pytest.raises(RuntimeError, match="not a git checkout"):
        records.git_state(Path("/"))
    machine = records.machine()
    assert machine["cores"] >= 1 and machine["cpu"] and machine["python"].count(".") == 2


def bench_repro(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    spec = importlib.util.spec_from_file_location("bench_repro", REPO / "bench" / "bench_repro.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_repro_compares_the_clone_lock_with_the_committed_one(monkeypatch, tmp_path):
    module = bench_repro(monkeypatch)
    committed, produced = tmp_path / "committed.lock", tmp_path / "dvc.lock"
    committed.write_text(yaml.safe_dump(LOCK))
    produced.write_text(yaml.safe_dump(LOCK))
    assert module.compare_lock(committed, produced) == {"equal": True, "differences": []}
    changed = yaml.safe_load(yaml.safe_dump(LOCK))
    changed["stages"]["hope"]["outs"][0]["md5"] = "e" * 32
    produced.write_text(yaml.safe_dump(changed))
    assert module.compare_lock(committed, produced) == {
        "equal": False,
        "differences": [f"data/hope/scores.csv: {'b' * 32} != {'e' * 32}"],
    }
    assert module.compare_lock(tmp_path / "none.lock", produced)["equal"] is None


def test_bench_repro_summary_takes_medians_and_flags_a_dirty_clone(monkeypatch):
    module = bench_repro(monkeypatch)

    def run(cold: float, warm: float, equal: bool, status: list[str]) -> dict:
        return {
            "cold_wall_s": cold,
            "cold_steps_s": {},
            "llm_requests": {"hope": 3},
            "pairs": 14,
            "lock": {"equal": equal, "differences": [] if equal else ["x: a != b"]},
            "git_status_after_cold": status,
            "warm_wall_s": warm,
            "warm_steps_s": {},
            "warm_outputs_rewritten": [],
            "git_status_after_warm": [],
            "cpu": "Some CPU",
            "cpu_emulated": None,
        }

    runs = [run(600 + i, 10 + i, True, []) for i in range(4)] + [run(1000, 70, True, [])]
    runs[1]["cpu_emulated"] = {"ATEN_CPU_CAPABILITY": "default"}
    report = module.summarise(runs)
    assert report["cpu_each"] == ["Some CPU"] * 5
    assert report["cpu_emulated_each"][:2] == [None, {"ATEN_CPU_CAPABILITY": "default"}]
    assert report["cold"]["wall_s"]["median"] == 602 and report["cold"]["wall_s"]["max"] == 1000
    assert report["met"] == {
        "cold_within_15_min": True,  # the median, not the slowest run
        "warm_within_1_min": True,
        "lock_equals_committed": True,
        "git_status_clean": True,
    }
    runs[0] = run(600, 10, False, [" M dvc.lock"])
    report = module.summarise(runs)
    assert report["met"]["lock_equals_committed"] is False
    assert report["met"]["git_status_clean"] is False
    assert report["lock_differences_first_run"] == ["x: a != b"]
    assert report["git_status_first_run"]["after_cold"] == [" M dvc.lock"]


def test_a_model_entry_merges_into_its_record_keeping_the_others(tmp_path):
    records = bench_records()
    path = tmp_path / "probe.json"
    first, second = records.start(["bench/x.py"]), records.start(["bench/x.py", "--second"])
    first.merge_entry(path, {"benchmark": "probe"}, "small", {"score": float("nan")})
    second.merge_entry(path, {"benchmark": "probe", "what": "w"}, "large", {"score": 0.5})
    second.merge_entry(path, {"benchmark": "probe"}, "small", {"score": 0.25})
    record = json.loads(path.read_text())
    # The block at the top is the run that wrote the header last; each entry has its run's.
    assert next(iter(record)) == "provenance"
    assert set(record) == {"provenance", "benchmark", "what", "models"}
    assert record["provenance"]["command"] == "python bench/x.py --second"
    assert {k: v["score"] for k, v in record["models"].items()} == {"small": 0.25, "large": 0.5}
    for entry in record["models"].values():
        assert records.check_block(entry["provenance"]) == []
        assert entry["provenance"]["command"] == "python bench/x.py --second"


def test_bench_repro_reads_every_stage_usage_block(monkeypatch, tmp_path):
    module = bench_repro(monkeypatch)
    files = {
        "data/hope/summary.json": {"usage": {"requests": 98, "cache_hits": 3}},
        # One block per LLM role: their requests are summed.
        "data/questions/summary.json": {
            "usage": {"generator": {"requests": 30}, "x": {"requests": 5}}
        },
        "data/labelled/metrics.json": {"usage": {"requests": 23, "cache_hits": 4}},
    }
    for path, content in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(json.dumps(content))
    counts = module.llm_requests(tmp_path)
    assert counts == {"hope": 98, "questions": 35, "rag": None, "ragas": None, "labelled": 23}
