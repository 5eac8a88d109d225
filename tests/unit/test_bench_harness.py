"""One bench harness (issue #31, part 4): every record in bench/results/ starts with the one
provenance block of bench/harness.py, the harness fills every field of it, and no bench script
imports another bench script or a private name of ``hope``."""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path

import pytest

from tests.unit.scratch_git import git

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
RECORDS = sorted((BENCH / "results").glob("*.json"))
# The library modules a bench script may import (the rest of bench/ are scripts): the harness,
# the shared workloads and statistics, and bench_probe's comparison, writer-choice and LLM-writer
# parts.
SHARED = {
    "harness",
    "workloads",
    "sampling_stats",
    "probe_vs_real",
    "probe_llm_runs",
    "probe_choice",
    "perfect_probe",
    "sequential_runs",
    "sequential_sample",
}
BLOCK_KEYS = [
    "commit",
    "dirty",
    "changed_files",
    "machine",
    "load_at_start",
    "started_utc",
    "finished_utc",
    "command",
    "missing",
]
MACHINE_KEYS = ["cpu", "cores", "cores_usable", "ram_gib", "os", "python"]


@pytest.fixture(scope="module")
def harness():
    spec = importlib.util.spec_from_file_location("bench_harness", BENCH / "harness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def blocks(value, path="$"):
    """Every ``provenance`` block in a record, with where it is: the top one and those of parts
    measured by other runs (model entries, sections, sizes)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "provenance":
                yield f"{path}.provenance", item
            else:
                yield from blocks(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from blocks(item, f"{path}[{i}]")


def test_there_are_records():
    assert len(RECORDS) >= 15


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_every_record_starts_with_the_one_provenance_block(path, harness):
    record = json.loads(path.read_text(encoding="utf-8"))
    assert next(iter(record)) == "provenance", f"{path.name}: the block is not the first key"
    top = record["provenance"]
    assert list(top) == BLOCK_KEYS
    assert list(top["machine"]) == MACHINE_KEYS
    commit = top["commit"]
    if commit is None:
        assert "commit" in top["missing"]
    else:
        assert len(commit) == 40 and set(commit) <= set("0123456789abcdef")
    for where, block in blocks(record):
        assert harness.check_block(block) == [], where


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_no_provenance_key_outside_the_block(path):
    # The old keys (six helpers filed the commit under commit, git or code) are gone.
    record = json.loads(path.read_text(encoding="utf-8"))
    assert not {"commit", "git", "code", "machine", "dirty", "command"} & set(record)


def test_check_block_names_what_is_wrong(harness):
    good = harness.provenance_block(commit="a" * 40, dirty=False, changed_files=0)
    assert harness.check_block(good) == []
    assert "commit" not in good["missing"] and "command" in good["missing"]
    assert "machine.cpu" in good["missing"]
    assert harness.check_block({**good, "commit": "abc1234"})  # short
    assert harness.check_block({**good, "dirty": "no"})
    assert harness.check_block({**good, "changed_files": True})
    assert harness.check_block({**good, "missing": []})  # nulls not named
    assert harness.check_block({**good, "started_utc": "yesterday"})
    assert harness.check_block({k: v for k, v in good.items() if k != "command"})
    assert harness.check_block({**good, "machine": {"cpus": 2}})
    with pytest.raises(ValueError, match="not provenance fields"):
        harness.provenance_block(code={})


def test_a_run_fills_every_field_and_writes_the_block_first(harness, tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "x")
    (tmp_path / "bench").mkdir()
    script = tmp_path / "bench" / "bench_x.py"
    run = harness.start([str(script), "--runs", "5", "--label", "a b"], repo=tmp_path)
    (tmp_path / "edited.py").write_text("x")  # after the start: the run measured a clean tree
    out = tmp_path / "bench" / "results" / "x.json"
    written = run.write_record(out, {"benchmark": "x", "value": float("nan")})
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record == written
    assert list(record) == ["provenance", "benchmark", "value"]
    assert record["value"] is None  # NaN is not JSON
    block = record["provenance"]
    assert harness.check_block(block) == []
    assert block["missing"] == []
    assert all(value is not None for value in block["machine"].values())
    assert len(block["commit"]) == 40 and block["dirty"] is False and block["changed_files"] == 0
    assert block["command"] == "python bench/bench_x.py --runs 5 --label 'a b'"
    assert block["started_utc"] <= block["finished_utc"]
    assert len(block["load_at_start"]) == 3
    # A record written again (partial records are rewritten as the run goes) keeps the start.
    again = run.write_record(out, {"benchmark": "x"})["provenance"]
    assert again["started_utc"] == block["started_utc"] and again["commit"] == block["commit"]
    # The next run sees the edit; bench/results/ is not code.
    assert harness.start(["x"], repo=tmp_path).git == {
        "commit": block["commit"],
        "dirty": True,
        "changed_files": 1,
    }


def test_a_section_merged_into_another_record_carries_its_own_block(harness, tmp_path):
    path = tmp_path / "validity.json"
    first = harness.start(["bench/bench_validity.py"])
    first.write_record(path, {"benchmark": "validity", "score": 1})
    second = harness.start(["bench/bench_rag_control.py"])
    record = second.merge_section(path, "control", {"wins": 2})
    assert record["provenance"]["command"] == "python bench/bench_validity.py"
    assert record["control"]["provenance"]["command"] == "python bench/bench_rag_control.py"
    assert record["score"] == 1 and record["control"]["wins"] == 2
    fresh = second.merge_section(tmp_path / "new.json", "control", {"wins": 3})
    assert fresh["provenance"]["command"] == "python bench/bench_rag_control.py"


# --- imports -----------------------------------------------------------------------------------


def bench_modules() -> set[str]:
    return {p.stem for p in BENCH.glob("*.py")}


def import_problems(source: str, modules: set[str]) -> list[str]:
    """Another bench script imported (harness and workloads apart), or a private name of hope
    imported or reached as a module attribute (``hope.core.result._x``)."""
    problems = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in modules - SHARED:
                    problems.append(f"line {node.lineno}: imports bench script {alias.name}")
                if top == "hope" and any(p.startswith("_") for p in alias.name.split(".")):
                    problems.append(f"line {node.lineno}: imports private {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            if top in modules - SHARED:
                problems.append(f"line {node.lineno}: imports from bench script {node.module}")
            if top == "hope":
                private = [a.name for a in node.names if a.name.startswith("_")]
                private += [p for p in node.module.split(".") if p.startswith("_")]
                problems += [f"line {node.lineno}: private {node.module}.{p}" for p in private]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            chain, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id == "hope":
                problems.append(f"line {node.lineno}: hope.{'.'.join(reversed(chain))}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            problems.append(f"line {node.lineno}: __import__")
    return problems


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_no_bench_script_imports_another_or_a_private_hope_name(path):
    assert import_problems(path.read_text(encoding="utf-8"), bench_modules()) == []


def test_the_import_check_sees_what_it_forbids():
    modules = {"bench_engine", "harness", "workloads"}
    bad = [
        "from bench_engine import workload",
        "import bench_engine",
        "from hope.core.result import _nan_to_none",
        "from hope.models.openai_client import aiohttp_transport, _x",
        "import hope.core.result\nhope.result._nan_to_none({})",
        "from hope._private import thing",
    ]
    for source in bad:
        assert import_problems(source, modules), source
    good = (
        "import harness\nfrom workloads import workload\nfrom hope.core.result import nan_to_none"
    )
    assert import_problems(good, modules) == []
