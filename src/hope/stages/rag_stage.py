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

import sys
from collections.abc import Sequence

from hope.core.io import jsonl_lines
from hope.core.stage_records import check_passages, check_questions
from hope.pipeline import stage_support as runner
from hope.pipeline.rag_step import run_rag


def main(argv: Sequence[str] | None = None) -> int:
    def compute(args, config, _profile, cache) -> runner.StageOutput:
        questions = runner.read_records(args.questions, "questions", check_questions)
        passages = runner.read_records(args.passages, "passages", check_passages, required=False)
        records, summary = run_rag(
            questions, passages, config, cache, progress=not args.no_progress
        )
        failed = sum(summary["failed_answers_per_chunker"].values())
        message = f"{len(records)} answers ({failed} failed) -> {args.output}"
        return runner.StageOutput({args.output: jsonl_lines(records)}, message, summary)

    paths = {
        "questions": runner.DEFAULT_QUESTIONS,
        "passages": runner.DEFAULT_PASSAGES,
        "output": runner.DEFAULT_ANSWERS,
    }
    return runner.run_rag_stage("rag", __doc__, argv, paths, compute)


if __name__ == "__main__":
    sys.exit(main())
