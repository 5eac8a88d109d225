"""A run killed part-way (here: its server dies) resumes from the cache without redoing calls."""

from hope.core.evaluator import HopeEvaluator
from hope.core.hope_settings import load_profile
from hope.core.response_cache import ResponseCache
from hope.models.embeddings import HashingEmbedder
from hope.testing import schema_responder

from .fakes import dies_after, make_llm

DOC = " ".join(f"Fact number {i} says that item {i} weighs {i * 3} grams." for i in range(12))
PASSAGES = [DOC[i : i + 150] for i in range(0, len(DOC), 150)]


def settings():
    return load_profile("paper", progress=False, information_preservation={"n_segments": 4})


def score(llm):
    return HopeEvaluator(llm, HashingEmbedder(), settings()).evaluate(DOC, PASSAGES)


def test_interrupted_run_resumes_without_repeating_finished_calls(tmp_path):
    clean_llm, clean_client = make_llm(schema_responder)
    clean = score(clean_llm)
    total = len(clean_client.requests)

    path = tmp_path / "cache.sqlite"
    broken_llm, _ = make_llm(dies_after(20), cache=ResponseCache(path), max_retries=0)
    broken = score(broken_llm)
    assert broken.failures  # the interrupted run knows it is incomplete

    resumed_llm, resumed_client = make_llm(schema_responder, cache=ResponseCache(path))
    resumed = score(resumed_llm)
    assert resumed.scores == clean.scores
    assert resumed.failures == []
    assert len(resumed_client.requests) == total - 20
    assert resumed.usage["llm"]["cache_hits"] == 20

    warm_llm, warm_client = make_llm(schema_responder, cache=ResponseCache(path))
    assert score(warm_llm).scores == clean.scores
    assert warm_client.requests == []
