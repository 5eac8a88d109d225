"""Secret redaction, metric aggregation and provenance helpers, on hand-made data."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hope.tracking.names import aggregate_metrics, flatten, name_part
from hope.tracking.provenance import dvc_hashes, git_commit
from hope.tracking.secrets import REDACTED, redact


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
