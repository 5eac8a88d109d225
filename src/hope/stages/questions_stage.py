"""DVC stage ``questions``: the open-book test questions of section 4.2, per domain.

Reads ``data/prepared/documents.jsonl``, the RAG config (the ``rag:`` section of params.yaml,
composed from conf/'s ``rag`` group, and its ``corpora.profile``) and writes

* ``data/questions/questions.jsonl``: one question per line: ``question_id``, ``domain``,
  ``doc_id`` (the document it was generated from, the join key of the aggregation),
  ``question``, ``reference`` (answer), ``reference_contexts``, ``source_doc_ids``,
  ``generator`` (``ragas`` | ``fallback`` | ``extractive``), ``generator_detail`` (ragas
  synthesizer or prompt id), ``fallback_reason``, ``gates`` (each quality gate's result, the
  judge's verdict where one was asked) and, for extractive questions, ``reference_span``
  (character offsets of the reference answer in the document);
* ``data/questions/summary.json``: per domain what each generator tried and what passed the
  quality gates (hope.rag.gates), the rejections with their reasons, what failed, the shortfall,
  the LLM usage and the config.

LLM responses are cached (``--cache``, default $HOPE_CACHE or .cache/hope/cache.sqlite), so a
rerun with the same config sends no request and a killed run resumes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hope.core.io import jsonl_lines
from hope.core.stage_records import check_documents
from hope.pipeline import stage_support as runner
from hope.pipeline.questions_step import make_questions


def main(argv: Sequence[str] | None = None) -> int:
    def compute(args, config, profile, cache) -> runner.StageOutput:
        documents = runner.read_records(args.documents, "documents", check_documents)
        questions, summary = make_questions(
            documents, config, profile, cache, progress=not args.no_progress
        )
        message = (
            f"{len(questions)} questions ({summary['per_generator']}; {summary['tried']} tried, "
            f"rejected {summary['rejected']}, shortfall {summary['shortfall']}) -> {args.output}"
        )
        return runner.StageOutput({args.output: jsonl_lines(questions)}, message, summary)

    paths = {"documents": runner.DEFAULT_DOCUMENTS, "output": runner.DEFAULT_QUESTIONS}
    errors = (ValueError, FileNotFoundError, RuntimeError)
    return runner.run_rag_stage("questions", __doc__, argv, paths, compute, errors)


if __name__ == "__main__":
    sys.exit(main())
