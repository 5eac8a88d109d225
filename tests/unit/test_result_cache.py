"""Whole-pair results kept in the response cache (hope.core.result_cache): a rerun of unchanged work
reads them back; anything that changes the result makes a new key; faults are never kept."""

import math
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from hope.core import result_cache
from hope.core.evaluator import HopeEvaluator
from hope.core.hope_settings import load_profile
from hope.core.response_cache import ResponseCache
from hope.core.result import Failure, HopeResult, MetricCount
from hope.models.embeddings import HashingEmbedder
from hope.testing import schema_responder

from .fakes import dies_after, make_llm

DOC = " ".join(f"Fact number {i} says that item {i} weighs {i * 3} grams." for i in range(12))
PASSAGES = [DOC[i : i + 150] for i in range(0, len(DOC), 150)]


def settings(**overrides):
    return load_profile(
        "paper", progress=False, information_preservation={"n_segments": 4}, **overrides
    )


def evaluator(llm, cache, **overrides):
    return HopeEvaluator(llm, HashingEmbedder(), settings(**overrides), result_cache=cache)


def test_warm_rerun_reads_the_kept_result_and_sends_nothing():
    cache = ResponseCache(None)
    cold_llm, cold_client = make_llm(schema_responder, cache=cache)
    cold = evaluator(cold_llm, cache).evaluate(DOC, PASSAGES)
    assert cold_client.requests
    assert cache.count(result_cache.NAMESPACE) == 1

    warm_llm, warm_client = make_llm(schema_responder, cache=cache)
    warm_evaluator = evaluator(warm_llm, cache)
    warm = warm_evaluator.evaluate(DOC, PASSAGES)
    assert warm_client.requests == []
    assert warm_evaluator.reused_results == 1
    assert warm.usage["reused_result"] is True
    assert warm.usage["llm"]["requests"] == 0 and warm.usage["llm"]["cache_hits"] == 0
    expected, got = cold.to_dict(), warm.to_dict()
    expected.pop("usage"), got.pop("usage")
    assert got == expected


def test_round_trip_restores_types_and_undefined_scores():
    result = HopeResult(
        hope=math.nan,
        concept_unity=0.5,
        semantic_independence=0.25,
        information_preservation=math.nan,
        passages=[{"index": 0, "concept_unity": {"score": None}}],
        segments=[],
        failures=[Failure("information_preservation", "segment 0", "invalid response")],
        counts={"concept_unity": MetricCount(1, 1, 0)},
        usage={"llm": {}},
        prompts={},
        settings={},
        models={"llm": "fake"},
        warnings=["information_preservation is undefined (NaN): no item could be scored"],
    )
    back = HopeResult.from_dict(result.to_dict())
    assert math.isnan(back.hope) and math.isnan(back.information_preservation)
    assert back.concept_unity == 0.5
    assert back.failures == result.failures
    assert back.counts == result.counts
    assert back.to_dict() == result.to_dict()


@pytest.mark.parametrize(
    "change",
    ["passages", "passage_ids", "seed", "llm", "max_tokens", "embedder", "code"],
)
def test_each_input_of_the_result_changes_its_key(change, monkeypatch):
    llm, _ = make_llm(schema_responder)
    base = {
        "document": DOC,
        "passages": PASSAGES,
        "passage_ids": [str(i) for i in range(len(PASSAGES))],
        "settings": settings().model_dump(mode="json"),
        "llm": llm,
        "embedder_identity": "hashing:256",
    }

    def key(**kw):
        values = {**base, **kw}
        return result_cache.result_key(
            values.pop("document"), values.pop("passages"), values.pop("passage_ids"), **values
        )

    before = key()
    # What does not change an answer (progress bars, concurrency) keeps the key.
    quiet, _ = make_llm(schema_responder, concurrency=9)
    assert key(llm=quiet, settings={**base["settings"], "progress": True}) == before
    if change == "passages":
        after = key(passages=[*PASSAGES[:-1], PASSAGES[-1] + " more"])
    elif change == "passage_ids":
        after = key(passage_ids=[f"p{i}" for i in range(len(PASSAGES))])
    elif change == "seed":
        after = key(settings=settings(seed=7).model_dump(mode="json"))
    elif change == "llm":
        other, _ = make_llm(schema_responder)
        other.identity = "another-model"
        after = key(llm=other)
    elif change == "max_tokens":
        other, _ = make_llm(schema_responder, max_tokens=64)
        after = key(llm=other)
    elif change == "embedder":
        after = key(embedder_identity="hashing:512")
    else:
        monkeypatch.setattr(result_cache, "code_fingerprint", lambda: "edited source")
        after = key()
    assert after != before


def test_result_touched_by_a_transient_fault_is_not_kept(tmp_path):
    path = tmp_path / "cache.sqlite"
    broken_llm, _ = make_llm(dies_after(20), cache=ResponseCache(path), max_retries=0)
    broken = evaluator(broken_llm, ResponseCache(path)).evaluate(DOC, PASSAGES)
    assert broken.failures
    assert broken.usage["llm"]["transient_failures"] > 0
    assert ResponseCache(path).count(result_cache.NAMESPACE) == 0

    resumed_llm, resumed_client = make_llm(schema_responder, cache=ResponseCache(path))
    resumed = evaluator(resumed_llm, ResponseCache(path)).evaluate(DOC, PASSAGES)
    assert resumed.failures == []
    assert len(resumed_client.requests) > 0  # asked again, not the broken result read back
    assert ResponseCache(path).count(result_cache.NAMESPACE) == 1


def test_code_fingerprint_covers_sources_and_prompts():
    digest = result_cache.code_fingerprint()
    assert len(digest) == 64 and digest == result_cache.code_fingerprint()


@pytest.mark.parametrize("reuse", [True, False])
def test_build_evaluator_follows_cache_reuse_results(reuse, tmp_path):
    from hope.core.packaged_configs import compose_config
    from hope.models.factory import build_evaluator

    cfg = compose_config(["llm=openai", "embedder=hashing", f"cache.path={tmp_path / 'c.sqlite'}"])
    OmegaConf.update(cfg, "cache.reuse_results", reuse)
    built = build_evaluator(cfg)
    assert (built.result_cache is not None) is reuse
    if reuse:
        assert built.result_cache is built.llm.cache


def test_the_code_fingerprint_covers_the_whole_package():
    """Not only hope/core, where the module lives: a changed model client, profile or prompt
    must change the key of every kept result."""
    import hope
    from hope.core.result_cache import PACKAGE_ROOT, fingerprinted_files

    assert Path(hope.__file__).resolve().parent == PACKAGE_ROOT
    names = {path.relative_to(PACKAGE_ROOT).as_posix() for path in fingerprinted_files()}
    assert {
        "models/llm.py",
        "conf/hope/paper.yaml",
        "core/prompts/qa_pairs.yaml",
        "core/metrics/equations.py",
        "pipeline/score_step.py",
    } <= names
