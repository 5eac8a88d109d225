"""Building the configured models of the RAG side (lazily: nothing starts until a request misses
the cache)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hope.core.response_cache import ResponseCache
from hope.core.seeding import derive_seed
from hope.models.embeddings import CachingEmbedder
from hope.models.llm import ChatLLM
from hope.rag.clients import CachingChatClient, instructor_llm, ragas_embeddings
from hope.rag.rag_config import ModelEndpoint, RagConfig, model_endpoint, resolve_llm_config


def role_endpoint(config: RagConfig, role: str) -> ModelEndpoint:
    return model_endpoint(
        resolve_llm_config(getattr(config.llm, role), f"rag.llm.{role}"), f"rag.llm.{role}"
    )


def chat_llm_factory(
    endpoint: ModelEndpoint, cache: ResponseCache | None, client: Any | None = None
) -> Callable[[], ChatLLM]:
    """Fresh ``ChatLLM`` objects (own usage counters) over one shared lazy client and cache."""
    shared = client if client is not None else endpoint.client()

    def make() -> ChatLLM:
        return ChatLLM(endpoint.settings, identity=endpoint.identity, client=shared, cache=cache)

    return make


def build_embedder(config: RagConfig, cache: ResponseCache | None) -> CachingEmbedder:
    from hope.models.factory import build_embedder as factory_build_embedder

    options = {k: v for k, v in config.embedder.items() if k != "_target_"}
    return factory_build_embedder(**options, cache=cache)


def judge_llm(
    config: RagConfig,
    endpoint: ModelEndpoint,
    cache: ResponseCache | None,
    *,
    purpose: str,
    temperature: float,
    client: Any | None = None,
) -> tuple[Any, CachingChatClient]:
    """ragas ``InstructorLLM`` for ``endpoint`` and the caching client that counts its requests.

    ``purpose`` enters the seed so that test-set generation and scoring draw differently.
    """
    settings = endpoint.settings
    caching = CachingChatClient(
        client if client is not None else endpoint.client(),
        identity=endpoint.identity,
        cache=cache,
        concurrency=settings.total_concurrency,
        schema_bounds=bounds.model_dump() if (bounds := config.ragas.schema_bounds) else None,
    )
    llm = instructor_llm(
        caching,
        model=settings.model,
        temperature=temperature,
        max_tokens=settings.max_tokens,
        seed=derive_seed(config.seed, purpose) if settings.send_seed else None,
        extra_body=settings.extra_body,
        parse_retries=config.ragas.parse_retries,
    )
    return llm, caching


__all__ = [
    "build_embedder",
    "chat_llm_factory",
    "judge_llm",
    "ragas_embeddings",
    "role_endpoint",
]
