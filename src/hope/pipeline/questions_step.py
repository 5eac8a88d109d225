"""DVC stage ``questions``: the open-book test questions of section 4.2, per domain. This module is
the stage's work; ``hope.stages.questions_stage`` is its ``main`` (arguments, the files it reads
and writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from hope.core.response_cache import ResponseCache
from hope.core.stage_records import check_documents
from hope.pipeline import stage_support as runner
from hope.rag.question_generation import GENERATORS, generate_questions, ragas_testset
from hope.rag.rag_config import RagConfig


def make_questions(
    documents: Sequence[Mapping[str, Any]],
    config: RagConfig,
    profile: str,
    cache: ResponseCache | None,
    *,
    questions_client: Any | None = None,
    embedder: Any | None = None,
    progress: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Questions and their summary; ``questions_client`` replaces the configured LLM's transport
    (tests), ``embedder`` the configured embedder (used by ragas' generator only)."""
    from hope.rag import rag_models as models

    check_documents(documents)
    endpoint = models.role_endpoint(config, "questions")
    fallback_llm = models.chat_llm_factory(endpoint, cache, questions_client)()
    judge_endpoint = models.role_endpoint(config, "judge")
    judge = models.chat_llm_factory(judge_endpoint, cache, questions_client)()
    qcfg = config.questions
    ragas_generate = ragas_client = None
    if qcfg.generator in ("auto", "ragas"):
        llm, ragas_client, embeddings = runner.ragas_models(
            config,
            endpoint,
            cache,
            purpose="ragas-testset",
            client=questions_client,
            embedder=embedder,
        )
        ragas_generate = partial(
            ragas_testset,
            llm=llm,
            embeddings=embeddings,
            seed=config.seed,
            call_timeout_s=qcfg.ragas_timeout_s,
            max_workers=endpoint.settings.total_concurrency,
        )
    questions, report = generate_questions(
        documents,
        per_domain=qcfg.count_for(profile),
        mode=qcfg.generator,
        seed=config.seed,
        fallback_llm=fallback_llm,
        ragas_generate=ragas_generate,
        backup=qcfg.backup,
        extractive_writer=qcfg.extractive_writer,
        judge_llm=judge,
        candidates_per_question=qcfg.candidates_per_question,
        duplicate_jaccard=qcfg.duplicate_jaccard,
        context_chars=qcfg.context_chars,
        max_attempts=qcfg.max_attempts,
        progress=progress,
    )
    # Each domain counts a reason only once it rejected something (counts >= 1), so none drops.
    rejected = sum((Counter(e["rejected"]) for e in report.values()), Counter())
    summary = {
        "profile": profile,
        "questions": len(questions),
        "requested": sum(e["requested"] for e in report.values()),
        "tried": sum(e["tried"] for e in report.values()),
        "shortfall": sum(e["shortfall"] for e in report.values()),
        "rejected": dict(sorted(rejected.items())),
        "per_generator": {g: sum(q["generator"] == g for q in questions) for g in GENERATORS},
        "domains": report,
        "llm": endpoint.identity,
        "judge_llm": judge_endpoint.identity,
        "usage": {
            "fallback": fallback_llm.usage.to_dict(),
            "judge": judge.usage.to_dict(),
            "ragas": ragas_client.usage() if ragas_client is not None else None,
        },
        "config": config.questions.model_dump(),
        "seed": config.seed,
    }
    return questions, summary
