"""What the metric needs from its models, declared here so that the metric never imports a
client: any object with these methods can be injected (``hope.models`` holds the real ones: the
OpenAI-compatible ``ChatLLM`` and the sentence-transformers and OpenAI embedders; ``hope.testing``
holds test doubles). The types the metric and the clients exchange live here too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel


@dataclass
class Usage:
    requests: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    invalid_responses: int = 0
    failures: int = 0
    # Failures from an overloaded or unreachable server: not cached, so a rerun asks again.
    transient_failures: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The usage of the evaluation running in this context (tasks inherit it), beside the client's total.
usage_scope: ContextVar[Usage | None] = ContextVar("hope_usage_scope", default=None)

# What the LLM calls made in this context are for (``chunker``, ``doc_id``, ``metric``), for a
# client's call observers (traces); tasks inherit it. The metric never reads it.
call_labels: ContextVar[Mapping[str, str] | None] = ContextVar("hope_call_labels", default=None)


# Set by a sequential sampling round (hope.core.sequential_sampling) for its calls: a model that
# answers with a placeholder (a batch export, whose answers come in a later round) adds the
# request's key, and the round then draws no next round until the real answers are in.
placeholder_answers: ContextVar[list[str] | None] = ContextVar(
    "hope_placeholder_answers", default=None
)


async def labelled_calls(awaitable: Awaitable[Any], **labels: Any) -> Any:
    """Await ``awaitable`` with ``labels`` added to ``call_labels`` (in this task's context)."""
    token = call_labels.set({**(call_labels.get() or {}), **{k: str(v) for k, v in labels.items()}})
    try:
        return await awaitable
    finally:
        call_labels.reset(token)


class LLMCallError(RuntimeError):
    """A request that still failed after its retries (or failed in a way retrying cannot fix)."""

    def __init__(self, reason: str, *, attempts: int):
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


@dataclass
class StructuredResponse:
    value: BaseModel
    raw: str
    cached: bool
    attempts: int
    seed_used: int | None
    temperature_used: float


class Embedder(ABC):
    identity: str

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim) with unit-length rows."""


@runtime_checkable
class ChatModel(Protocol):
    """A chat model answering with JSON that validates against ``response_model``
    (``hope.models.llm.ChatLLM`` is the implementation; its docstring has the details)."""

    identity: str

    async def structured(
        self,
        *,
        messages: Sequence[dict[str, str]],
        response_model: type[BaseModel],
        schema_name: str,
        prompt_id: str,
        temperature: float,
        seed: int | None,
        max_tokens: int | None = None,
        invalid_retry_temperatures: Sequence[float] | None = None,
        validate: Callable[[Any], None] | None = None,
    ) -> StructuredResponse: ...

    async def aclose(self) -> None: ...
