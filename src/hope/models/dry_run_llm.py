"""A stand-in for ``ChatLLM`` that sends nothing: the dry run's model.

It answers from the real model's response cache where it can and otherwise returns a synthetic,
schema-valid answer, recording every request it was asked, so that the real evaluator can run
against it and show what a run would send.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from hope.models.llm import ChatLLM, LLMCallError, StructuredResponse, Usage, json_schema_of
from hope.models.schema_instances import schema_instance


def max_output_chars(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> int:
    """The longest JSON text an answer valid under ``schema`` can be (unbounded strings: 200)."""
    root = root or schema
    if "$ref" in schema:
        return max_output_chars(root["$defs"][schema["$ref"].split("/")[-1]], root)
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return 2 + sum(len(k) + 4 + max_output_chars(v, root) for k, v in props.items())
    if kind == "array":
        items = int(schema.get("maxItems", schema.get("minItems", 1)))
        return 2 + items * (max_output_chars(schema.get("items", {}), root) + 2)
    if kind == "string":
        return int(schema.get("maxLength", 200)) + 2
    if kind == "boolean":
        return 5
    return 20


def output_token_bound(
    response_model: type[BaseModel], max_tokens: int, chars_per_token: float
) -> int:
    """Most tokens an answer can take: the schema's longest answer, capped at ``max_tokens``."""
    chars = max_output_chars(json_schema_of(response_model))
    return min(max_tokens, math.ceil(chars / chars_per_token))


@dataclass
class RecordedRequest:
    kind: str
    key: str
    cached: bool
    prompt_chars: int
    output_tokens: int


class DryRunLLM:
    """``structured`` as ``ChatLLM`` has it, over ``real``'s cache and cache keys; never sends."""

    def __init__(self, real: ChatLLM, chars_per_token: float = 4.0):
        self.real = real
        self.identity = real.identity
        self.settings = real.settings
        self.usage = Usage()
        self.chars_per_token = chars_per_token
        self.requests: list[RecordedRequest] = []

    async def aclose(self) -> None:
        """Nothing to close: no client was opened."""

    async def structured(self, **request: Any) -> StructuredResponse:
        """``ChatLLM.structured``'s arguments; its retry options are moot (nothing is sent)."""
        key = self.real.request_key(request)
        messages, response_model = request["messages"], request["response_model"]
        validate, seed = request.get("validate"), request.get("seed")
        cap = request.get("max_tokens") or self.settings.max_tokens
        record = RecordedRequest(
            request["schema_name"],
            key,
            True,
            sum(len(m["content"]) for m in messages),
            output_token_bound(response_model, cap, self.chars_per_token),
        )
        self.requests.append(record)
        hit = self.real.lookup(key, response_model, validate)  # a cached failure fails here too
        if hit is not None:
            return hit
        record.cached = False
        value, raw = synthetic_answer(response_model, messages, seed, validate)
        return StructuredResponse(value, raw, False, 1, seed, request["temperature"])


def synthetic_answer(
    response_model: type[BaseModel],
    messages: Sequence[dict[str, str]],
    seed: int | None,
    validate: Callable[[Any], None] | None,
    *,
    words: Callable[[str], Sequence[str]] = lambda text: [w for w in text.split() if w.isalpha()],
    mark: Callable[[Any, Mapping[str, Any]], Any] | None = None,
    purpose: str = "dry run",
) -> tuple[BaseModel, str]:
    """A schema-valid answer made of the prompt's ``words``, seeded by the request; ``mark``
    rewrites the instance (given the schema) before validation, e.g. to flag it as a placeholder."""
    schema = json_schema_of(response_model)
    vocabulary = sorted({w for m in messages for w in words(m["content"])}) or ["x"]
    for attempt in range(20):
        value = schema_instance(schema, random.Random(f"{seed}:{attempt}"), vocabulary)
        raw = json.dumps(value if mark is None else mark(value, schema))
        try:
            answer = response_model.model_validate_json(raw)
            if validate is not None:
                validate(answer)
            return answer, raw
        except (ValidationError, ValueError):
            continue
    raise LLMCallError(f"{purpose}: no synthetic answer passes validation", attempts=0)
