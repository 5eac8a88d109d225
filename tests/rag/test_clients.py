"""The caching client under ragas: schema bounds for grammar-constrained judges."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from hope.core.response_cache import ResponseCache
from hope.rag.clients import CachingChatClient, bound_schema, instructor_llm
from hope.rag.rag_config import RagConfig
from hope.testing import FakeChatClient


class Classification(BaseModel):
    statement: str
    reason: str
    verdict: int


class Output(BaseModel):
    classifications: list[Classification]
    label: str = "x"


def test_bound_schema_closes_free_strings_and_lists_only():
    schema = {
        "type": "object",
        "properties": {
            "free": {"type": "string"},
            "short": {"type": "string", "maxLength": 5},
            "choice": {"type": "string", "enum": ["a", "b"]},
            "maybe": {"type": ["string", "null"]},
            "items": {"type": "array", "items": {"type": "string"}},
            "capped": {"type": "array", "maxItems": 2, "items": {"type": "integer"}},
        },
        "$defs": {"Inner": {"type": "object", "properties": {"s": {"type": "string"}}}},
    }
    bounded = bound_schema(schema, max_string_chars=100, max_items=7)
    props = bounded["properties"]
    assert props["free"]["maxLength"] == 100
    assert props["short"]["maxLength"] == 5
    assert "maxLength" not in props["choice"]
    assert props["maybe"]["maxLength"] == 100
    assert props["items"]["maxItems"] == 7 and props["items"]["items"]["maxLength"] == 100
    assert props["capped"]["maxItems"] == 2
    assert bounded["$defs"]["Inner"]["properties"]["s"]["maxLength"] == 100
    assert "maxLength" not in schema["properties"]["free"]  # the input is left untouched


def test_bound_schema_limits_ragas_binary_verdicts_to_0_and_1():
    """ragas' ContextRecall classification model, as ragas sends it: `attributed` may be 0 or 1
    only (the 135M judge wrote 2); other integers stay open."""
    from ragas.metrics.collections.context_recall.util import ContextRecallOutput

    schema = ContextRecallOutput.model_json_schema()
    bounded = bound_schema(schema, max_string_chars=100, max_items=7)
    inner = next(d for d in bounded["$defs"].values() if "attributed" in d.get("properties", {}))
    assert inner["properties"]["attributed"]["enum"] == [0, 1]
    counts = {"type": "object", "properties": {"count": {"type": "integer"}}}
    other = bound_schema(counts, max_string_chars=100, max_items=7)
    assert "enum" not in other["properties"]["count"]


def recorder() -> FakeChatClient:
    return FakeChatClient(lambda request: '{"classifications": [], "label": "y"}')


def ask(client):
    llm = instructor_llm(client, model="m", temperature=0.0, max_tokens=64, seed=1)
    return asyncio.run(llm.agenerate("classify", Output))


def test_ragas_requests_carry_bounded_schemas_and_the_bounds_enter_the_cache_key():
    cache = ResponseCache(None)
    inner = recorder()
    bounded = CachingChatClient(
        inner, identity="x", cache=cache, schema_bounds={"max_string_chars": 50, "max_items": 3}
    )
    assert ask(bounded).label == "y"
    schema = inner.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["classifications"]["maxItems"] == 3
    assert schema["properties"]["label"]["maxLength"] == 50

    unbounded = CachingChatClient(inner, identity="x", cache=cache)
    ask(unbounded)
    assert len(inner.requests) == 2  # a different request, not the bounded one's cached answer
    plain = inner.requests[1]["response_format"]["json_schema"]["schema"]
    assert "maxItems" not in plain["properties"]["classifications"]


def test_schema_bounds_are_configurable_and_can_be_switched_off():
    assert RagConfig().ragas.schema_bounds.max_string_chars == 500
    assert RagConfig.model_validate({"ragas": {"schema_bounds": None}}).ragas.schema_bounds is None
    with pytest.raises(ValueError):
        RagConfig.model_validate({"ragas": {"schema_bounds": {"max_items": 0}}})


def test_few_shot_examples_can_be_dropped_from_every_ragas_prompt():
    from ragas.prompt.metrics.base_prompt import BasePrompt

    from hope.models.embeddings import HashingEmbedder
    from hope.rag.clients import ragas_embeddings
    from hope.rag.rag_config import RagasConfig
    from hope.rag.ragas_scoring import build_metrics

    llm = instructor_llm(
        CachingChatClient(recorder(), identity="x", cache=None),
        model="m",
        temperature=0.0,
        max_tokens=8,
        seed=1,
    )
    embeddings = ragas_embeddings(HashingEmbedder(dim=8))

    def example_counts(config):
        metrics = build_metrics(llm, embeddings, config)
        return {
            (name, attr): len(prompt.examples)
            for name, metric in metrics.items()
            for attr, prompt in vars(metric).items()
            if isinstance(prompt, BasePrompt)
        }

    stripped = example_counts(RagasConfig(few_shot_examples=False))
    assert len(stripped) == 6 and set(stripped.values()) == {0}
    kept = example_counts(RagasConfig())  # ragas' class-level examples are left untouched
    assert set(kept) == set(stripped) and all(count > 0 for count in kept.values())
