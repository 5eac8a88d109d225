"""DVC stage ``questions``: the open-book test questions of section 4.2, per domain.

Reads ``data/prepared/documents.jsonl``, the RAG config (conf/rag/<rag.config>.yaml with the
``rag:`` overrides and ``corpora.profile`` of params.yaml) and writes

* ``data/questions/questions.jsonl``: one question per line: ``question_id``, ``domain``,
  ``doc_id`` (the document it was generated from, the join key of the aggregation),
  ``question``, ``reference`` (answer), ``reference_contexts``, ``source_doc_ids``,
  ``generator`` (``ragas`` | ``fallback``), ``generator_detail`` (ragas synthesizer or prompt id)
  and ``fallback_reason``;
* ``data/questions/summary.json``: per domain what each generator produced, what failed and why,
  the LLM usage and the config.

LLM responses are cached (``--cache``, default $HOPE_CACHE or .cache/hope/cache.sqlite), so a
rerun with the same config sends no request and a killed run resumes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from hope import stage_runner as runner
from hope.cache import ResponseCache
from hope.io import jsonl_lines
from hope.rag.config import RagConfig
from hope.rag.questions import generate_questions, ragas_testset
from hope.records import check_documents


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
    from hope.rag import models

    check_documents(documents)
    endpoint = models.role_endpoint(config, "questions")
    make_llm = models.chat_llm_factory(endpoint, cache, questions_client)
    fallback_llm = make_llm()
    qcfg = config.questions
    ragas_generate = None
    ragas_client = None
    if qcfg.generator != "fallback":
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
        context_chars=qcfg.context_chars,
        max_attempts=qcfg.max_attempts,
        progress=progress,
    )
    summary = {
        "profile": profile,
        "questions": len(questions),
        "per_generator": {
            g: sum(q["generator"] == g for q in questions) for g in ("ragas", "fallback")
        },
        "domains": report,
        "llm": endpoint.identity,
        "usage": {
            "fallback": fallback_llm.usage.to_dict(),
            "ragas": ragas_client.usage() if ragas_client is not None else None,
        },
        "config": config.questions.model_dump(),
        "seed": config.seed,
    }
    return questions, summary


def main(argv: Sequence[str] | None = None) -> int:
    def compute(args, config, profile, cache) -> runner.StageOutput:
        documents = runner.read_records(args.documents, "documents", check_documents)
        questions, summary = make_questions(
            documents, config, profile, cache, progress=not args.no_progress
        )
        message = f"{len(questions)} questions ({summary['per_generator']}) -> {args.output}"
        return runner.StageOutput({args.output: jsonl_lines(questions)}, message, summary)

    paths = {"documents": runner.DEFAULT_DOCUMENTS, "output": runner.DEFAULT_QUESTIONS}
    errors = (ValueError, FileNotFoundError, RuntimeError)
    return runner.run_rag_stage("questions", __doc__, argv, paths, compute, errors)


if __name__ == "__main__":
    sys.exit(main())
