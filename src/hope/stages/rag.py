"""DVC stage ``rag``: one RAG pipeline per chunker answers every test question.

For each chunker, all passages of a domain's documents form one index (embedder of the RAG
config); each question retrieves its top-k passages by cosine similarity (ties by passage id) from
its domain's index and the answer LLM answers from them. Writes ``data/rag/answers.jsonl`` with one
line per (chunker, question): ``question_id``, ``chunker``, ``doc_id``, ``domain``, ``answer``
(null when the LLM failed, with the reason in ``error``), ``retrieved_passage_ids``,
``retrieved_doc_ids``, ``retrieved_scores`` and ``usage`` (that answer's LLM requests, cache hits
and tokens), plus ``data/rag/summary.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.cache import ResponseCache
from hope.models.embeddings import Embedder
from hope.rag.answering import answer_all
from hope.rag.config import RagConfig, load_rag_config
from hope.rag.retrieval import build_indexes, check_passages, retrieve
from hope.stages.chunk import read_jsonl
from hope.stages.questions import DEFAULT_OUTPUT as DEFAULT_QUESTIONS
from hope.stages.questions import add_common_args, jsonl_lines, open_stage_cache, run_stage

DEFAULT_PASSAGES = Path("data/chunks/passages.jsonl")
DEFAULT_OUTPUT = Path("data/rag/answers.jsonl")
QUESTION_FIELDS = ("question_id", "domain", "doc_id", "question", "reference")


def check_questions(questions: Sequence[Mapping[str, Any]], source: str = "questions") -> None:
    seen: set[str] = set()
    for position, question in enumerate(questions, start=1):
        missing = [f for f in QUESTION_FIELDS if f not in question]
        if missing:
            raise ValueError(f"{source}: question #{position} lacks field(s) {missing}")
        if question["question_id"] in seen:
            raise ValueError(f"{source}: duplicate question_id {question['question_id']!r}")
        seen.add(question["question_id"])


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
    from hope.rag import models

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
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(hits), desc="rag answers", file=sys.stderr)
    try:
        records = asyncio.run(
            answer_all(
                questions,
                chunkers,
                hits,
                make_llm,
                seed=config.seed,
                temperature=config.answer.temperature,
                concurrency=endpoint.settings.concurrency,
                progress=bar,
            )
        )
    finally:
        if bar is not None:
            bar.close()
    failed: dict[str, int] = {c: 0 for c in chunkers}
    for record in records:
        failed[record["chunker"]] += record["answer"] is None
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


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--passages", type=Path, default=DEFAULT_PASSAGES)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    add_common_args(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def compute():
        config, _profile = load_rag_config(args.params, conf_dir=args.conf_dir)
        questions = read_jsonl(args.questions)
        if not questions:
            raise ValueError(f"{args.questions}: no questions")
        check_questions(questions, str(args.questions))
        passages = read_jsonl(args.passages)
        check_passages(passages, str(args.passages))
        records, summary = run_rag(
            questions, passages, config, open_stage_cache(args.cache), progress=not args.no_progress
        )
        failed = sum(summary["failed_answers_per_chunker"].values())
        message = f"{len(records)} answers ({failed} failed) -> {args.output}"
        return (
            {args.output: jsonl_lines(records)},
            args.output.parent / "summary.json",
            summary,
            message,
        )

    return run_stage("rag", compute)


if __name__ == "__main__":
    sys.exit(main())
