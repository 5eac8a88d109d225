"""A backend that cannot answer stops the RAG stages too (issue #13): ragas turns a failing metric
into NaN, but a fatal error (401, 403, 404, dead backend) is raised, never stored, and the rerun
after the fix completes from what was stored."""

from __future__ import annotations

import pytest

from hope.core.response_cache import ResponseCache
from hope.models.embeddings import CachingEmbedder, HashingEmbedder
from hope.models.model_errors import BackendError
from hope.rag.clients import RAGAS_CACHE_NAMESPACE
from hope.rag.rag_config import METRIC_NAMES
from hope.stages import questions_stage, rag_stage
from hope.stages import ragas_stage as ragas_eval
from hope.testing import FakeChatClient, api_status_error

from .helpers import DOCS, fake_config, passages_for
from .test_pipeline import CHUNKERS, unit_responder


@pytest.mark.slow
@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_fatal_judge_error_stops_ragas_scoring_and_nothing_of_it_is_stored(status):
    cache = ResponseCache(None)
    good = FakeChatClient(unit_responder)
    questions, _ = questions_stage.make_questions(
        DOCS, fake_config(), "sample", cache, questions_client=good
    )
    passages = passages_for(DOCS, CHUNKERS)
    embedder = CachingEmbedder(HashingEmbedder(64), cache)
    answers, _ = rag_stage.run_rag(
        questions, passages, fake_config(), cache, embedder=embedder, answer_client=good
    )
    judged = 0

    def dies_after_ten(request):
        nonlocal judged
        judged += 1
        if judged > 10:
            raise api_status_error(status, "the judge is gone")
        return unit_responder(request)

    judge_cache = ResponseCache(None)
    dying = FakeChatClient(dies_after_ten)
    with pytest.raises(BackendError) as info:
        ragas_eval.evaluate_answers(
            questions,
            answers,
            passages,
            fake_config(),
            judge_cache,
            judge_client=dying,
            embedder=embedder,
        )
    assert f"HTTP {status}" in str(info.value) and "http://fake.invalid/v1" in str(info.value)
    stored = judge_cache.count(RAGAS_CACHE_NAMESPACE)
    assert 0 < stored <= 10  # what finished is kept; no failure is stored
    # after the first fatal answer, at most the requests already on their way went out
    assert len(dying.requests) <= 10 + 4  # the caching client's bound (LLMSettings default)

    fixed = FakeChatClient(unit_responder)
    rows, _, summary = ragas_eval.evaluate_answers(
        questions,
        answers,
        passages,
        fake_config(),
        judge_cache,
        judge_client=fixed,
        embedder=embedder,
    )
    judged = {m: n for m, n in summary["failed_per_metric"].items() if m in METRIC_NAMES}
    assert judged and not any(judged.values())
    reference = ragas_eval.evaluate_answers(
        questions,
        answers,
        passages,
        fake_config(),
        ResponseCache(None),
        judge_client=FakeChatClient(unit_responder),
        embedder=embedder,
    )[0]
    assert rows == reference
    assert len(fixed.requests) == judge_cache.count(RAGAS_CACHE_NAMESPACE) - stored
