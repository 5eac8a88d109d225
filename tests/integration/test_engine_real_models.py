"""HOPE with the real embedded SmolLM2 server and the real MiniLM on a real Wikipedia article.

Slow (a minute or two on 2 cores); CI runs it. Settings are shrunk so each run makes ~20 calls.
"""

import json
import math

import pyarrow.parquet as pq
import pytest

from hope.cli.hope_command import main
from hope.core.evaluator import HopeEvaluator
from hope.core.hope_settings import load_profile
from hope.core.response_cache import ResponseCache
from hope.models.factory import default_embedder, default_llm

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def article(corpora_dir):
    table = pq.read_table(corpora_dir / "wiki" / "20231101.en" / "train-00000-of-00001.parquet")
    row = table.slice(5, 1).to_pylist()[0]
    text = row["text"][:1500]
    return text, [text[i : i + 500] for i in range(0, len(text), 500)]


@pytest.fixture(scope="module")
def embedder():
    return default_embedder(ResponseCache(None))


def small_settings(profile="paper"):
    return load_profile(
        profile,
        progress=False,
        concept_unity={"n_items": 2, "min_items": 1 if profile == "reference" else 2},
        semantic_independence={"n_questions": 1},
        information_preservation={"n_segments": 2},
    )


def comparable(result):
    data = result.to_dict()
    data.pop("usage")
    return data


@pytest.fixture(scope="module")
def cache_file(tmp_path_factory):
    return tmp_path_factory.mktemp("cache") / "cache.sqlite"


@pytest.fixture(scope="module")
def cold_runs(article, embedder, cache_file):
    """Two cold runs: the first fills a cache file (the warm test reuses it), the second none."""
    text, passages = article
    runs = []
    for cache in (ResponseCache(cache_file), ResponseCache(None)):
        llm = default_llm(cache)
        runs.append(HopeEvaluator(llm, embedder, small_settings()).evaluate(text, passages))
    return runs


def test_real_models_produce_scores_with_evidence(cold_runs):
    result = cold_runs[0]
    for name in ("concept_unity", "semantic_independence", "information_preservation"):
        count = result.counts[name]
        assert count.scored + count.failed == count.total
        value = getattr(result, name)
        assert (0.0 <= value <= 1.0) if count.scored else math.isnan(value)
    assert len(result.failures) == sum(c.failed for c in result.counts.values())
    scored = [p for p in result.passages if p["concept_unity"]["status"] == "ok"]
    assert scored and all(len(p["concept_unity"]["statements"]) == 2 for p in scored)
    assert result.models["llm"].startswith("embedded:gguf:SmolLM2-135M-Instruct")
    assert result.models["embedder"] == "st:sentence-transformers/all-MiniLM-L6-v2@f64-grid18"
    assert result.usage["llm"]["requests"] > 0
    json.loads(result.to_json())


def test_same_seed_same_numbers_from_a_cold_start(cold_runs):
    assert comparable(cold_runs[0]) == comparable(cold_runs[1])


def test_warm_rerun_makes_no_llm_call(article, embedder, cold_runs, cache_file):
    text, passages = article
    warm_llm = default_llm(ResponseCache(cache_file))
    warm = HopeEvaluator(warm_llm, embedder, small_settings()).evaluate(text, passages)
    assert warm.usage["llm"]["requests"] == 0
    assert warm.usage["llm"]["cache_hits"] > 0
    assert comparable(cold_runs[0]) == comparable(warm)


def test_reference_profile_runs_on_real_models(article, embedder):
    text, passages = article
    result = HopeEvaluator(
        default_llm(ResponseCache(None)), embedder, small_settings("reference")
    ).evaluate(text, passages)
    assert result.settings["profile"] == "reference"
    cu = [p["concept_unity"] for p in result.passages if p["concept_unity"]["status"] == "ok"]
    assert all("critic_keep" in c and len(c["qa_pairs"]) == 2 for c in cu)


def test_cli_on_the_real_models(repo_root, tmp_path, capsys):
    out = tmp_path / "result.json"
    code = main(
        [
            "score",
            "--document",
            str(repo_root / "examples" / "sample_document.txt"),
            "--passages",
            str(repo_root / "examples" / "sample_passages.jsonl"),
            "--output",
            str(out),
            f"cache.path={tmp_path / 'cache.sqlite'}",
            "hope.progress=false",
            "hope.concept_unity.n_items=2",
            "hope.semantic_independence.n_questions=1",
            "hope.information_preservation.n_segments=2",
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert len(data["passages"]) == 5
    assert data["models"]["llm"].startswith("embedded:")


def test_a_passage_longer_than_the_context_is_a_recorded_failure(embedder):
    # ~9,900 tokens against SmolLM2's 8,192: the server refuses with 400, which is not retried
    long_passage = "The quick brown fox jumps over the lazy dog near the river bank. " * 700
    short_passage = "Foxes are small omnivorous mammals. They live on every continent but one."
    settings = small_settings()
    llm = default_llm(ResponseCache(None))
    result = HopeEvaluator(llm, embedder, settings).evaluate(
        short_passage + " " + long_passage, [short_passage, long_passage]
    )
    cu = result.passages[1]["concept_unity"]
    assert cu["status"] == "failed"
    assert "exceeds the available context size" in cu["reason"]
    assert "after 1 attempt" in cu["reason"]
    assert result.passages[0]["concept_unity"]["status"] == "ok"
    assert result.counts["concept_unity"].failed == 1
