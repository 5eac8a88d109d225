"""The evaluator starts at most ``max_items`` items at a time over every pair it scores at once, so
a run's memory follows that bound, not the size of the documents in flight."""

import asyncio

import pytest

from hope.core.evaluator import HopeEvaluator
from hope.core.hope_settings import load_profile
from hope.core.metrics.concept_unity import ConceptUnity
from hope.core.metrics.information_preservation import InformationPreservation
from hope.core.metrics.semantic_independence import SemanticIndependence
from hope.models.embeddings import HashingEmbedder
from hope.testing import schema_responder

from .fakes import make_llm

DOC = " ".join(f"Fact number {i} says that item {i} weighs {i * 3} grams." for i in range(40))
PASSAGES = [DOC[i : i + 120] for i in range(0, len(DOC), 120)]


@pytest.fixture
def tracked(monkeypatch):
    state = {"now": 0, "most": 0}

    async def item(record):
        state["now"] += 1
        state["most"] = max(state["most"], state["now"])
        await asyncio.sleep(0.001)
        state["now"] -= 1
        return record

    async def passage_score(self, index, *args):
        return await item({"index": index, "score": 0.5, "status": "ok"})

    async def segment_score(self, *args):
        return await item({"status": "ok", "correct": True})

    monkeypatch.setattr(ConceptUnity, "score_passage", passage_score)
    monkeypatch.setattr(SemanticIndependence, "score_passage", passage_score)
    monkeypatch.setattr(InformationPreservation, "score_segment", segment_score)
    return state


def evaluator(**kw):
    llm, _ = make_llm(schema_responder, concurrency=2)
    settings = load_profile("paper", progress=False, information_preservation={"n_segments": 6})
    return HopeEvaluator(llm, HashingEmbedder(), settings, **kw)


def test_items_of_concurrent_pairs_share_the_bound(tracked):
    scorer = evaluator(max_items=3)

    async def both():
        return await asyncio.gather(
            scorer.aevaluate(DOC, PASSAGES), scorer.aevaluate(DOC, PASSAGES[:-1])
        )

    first, second = asyncio.run(both())
    assert tracked["most"] == 3
    assert first.concept_unity == second.concept_unity == 0.5
    assert first.information_preservation == 1.0


def test_default_bound_is_twice_the_llm_concurrency_with_a_floor(tracked):
    assert evaluator().max_items == 16  # 2 x 2 requests in flight, raised to the floor of 16
    llm, _ = make_llm(schema_responder, concurrency=32)
    assert HopeEvaluator(llm, HashingEmbedder(), load_profile("paper")).max_items == 64
    unbounded = evaluator(max_items=1000)
    unbounded.evaluate(DOC, PASSAGES)
    assert tracked["most"] == 2 * len(PASSAGES) + 6  # every item at once when the bound allows


def test_bound_must_be_positive():
    with pytest.raises(ValueError, match="max_items"):
        evaluator(max_items=0)


def test_failures_come_out_in_item_order_whatever_order_items_finish(monkeypatch):
    async def failing_passage(self, index, *args):
        await asyncio.sleep(0.001 * (20 - index))  # later passages finish first
        self.ctx.fail("concept_unity", f"passage {index}", "invalid response")
        return {"index": index, "score": None, "status": "failed"}

    async def segment_score(self, *args):
        return {"status": "ok", "correct": True}

    async def passage_score(self, index, *args):
        return {"index": index, "score": 0.5, "status": "ok"}

    monkeypatch.setattr(ConceptUnity, "score_passage", failing_passage)
    monkeypatch.setattr(SemanticIndependence, "score_passage", passage_score)
    monkeypatch.setattr(InformationPreservation, "score_segment", segment_score)
    result = evaluator().evaluate(DOC, PASSAGES)
    items = [f.item for f in result.failures]
    assert items == [f"passage {i}" for i in range(len(PASSAGES))]
