"""DVC stage ``rag``: one RAG pipeline per chunker answers every test question. This module is the
stage's work; ``hope.stages.rag_stage`` is its ``main`` (arguments, the files it reads and
writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from hope.core.response_cache import ResponseCache
from hope.core.stage_records import check_passages, check_questions
from hope.models.embeddings import Embedder
from hope.rag.answering import answer_all
from hope.rag.rag_config import RagConfig
from hope.rag.rag_retrieval import build_indexes, retrieve


def run_rag(
    questions: Sequence[Mapping[str, Any]],
    passages: Sequence[Mapping[str, Any]],
    config: RagConfig,
    cache: ResponseCache | None,
    *,
    embedder: Embedder | None = None,
    answer_client: Any | None = None,
    progress: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Answer records for every (chunker, question), chunkers in first-seen passage order."""
    from hope.rag import rag_models as models

    check_questions(questions)
    check_passages(passages)
    chunkers = list(dict.fromkeys(p["chunker"] for p in passages))
    if not chunkers:
        raise ValueError("no passages to index")
    embedder = embedder or models.build_embedder(config, cache)
    indexes = build_indexes(passages, embedder)
    hits = retrieve(questions, indexes, embedder, chunkers=chunkers, top_k=config.retrieval.top_k)
    endpoint = models.role_endpoint(config, "answer")
    make_llm = models.chat_llm_factory(endpoint, cache, answer_client)
    records = asyncio.run(
        answer_all(
            questions,
            chunkers,
            hits,
            make_llm,
            seed=config.seed,
            temperature=config.answer.temperature,
            concurrency=endpoint.settings.total_concurrency,
            progress=progress,
        )
    )
    failed = {c: sum(r["chunker"] == c and r["answer"] is None for r in records) for c in chunkers}
    summary = {
        "questions": len(questions),
        "chunkers": chunkers,
        "answers": len(records),
        "failed_answers_per_chunker": failed,
        "top_k": config.retrieval.top_k,
        "llm": endpoint.identity,
        "embedder": getattr(embedder, "identity", type(embedder).__name__),
        "usage": {
            key: sum(r["usage"][key] for r in records)
            for key in ("requests", "cache_hits", "prompt_tokens", "completion_tokens", "failures")
        },
        "seed": config.seed,
    }
    return records, summary
