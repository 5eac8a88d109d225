"""DVC stage ``ragas``: the four RAGAS indicators of section 4.2 for every (question, chunker), and
beside them the judge-free reference-span recall (hope.rag.span_recall, beyond the paper).

Reads the questions, the answers and the passages (for the texts of the retrieved ids) and writes
to ``data/ragas/``:

* ``per_question.jsonl``: ``question_id``, ``chunker``, ``doc_id``, ``domain``, ``generator`` and
  per indicator its value (null when ragas could not produce it) and ``<indicator>_error`` (the
  reason, null on success);
* ``per_doc_chunker.csv``: join key ``doc_id, chunker`` (plus ``domain``, ``n_questions``); per
  indicator the mean over the document's questions that scored (a question belongs to the
  document it was generated from), ``<indicator>_n`` and ``<indicator>_n_failed``; ``NaN`` when
  every question of the pair failed. Pairs without questions have no row;
* ``summary.json``: NaN counts per indicator and chunker, reasons per indicator, LLM usage.

Judge LLM requests go through the response cache: a rerun sends none, a killed run resumes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hope.core.stage_records import check_questions
from hope.pipeline import stage_support as runner
from hope.pipeline.ragas_step import (
    DEFAULT_OUT_DIR,
    evaluate_answers,
    per_question_lines,
    table_csv,
)


def main(argv: Sequence[str] | None = None) -> int:
    def compute(args, config, _profile, cache) -> runner.StageOutput:
        questions = runner.read_records(
            args.questions, "questions", check_questions, required=False
        )
        answers = runner.read_records(args.answers, "answers")
        passages = runner.read_records(args.passages, "passages", required=False)
        rows, table, summary = evaluate_answers(
            questions, answers, passages, config, cache, progress=not args.no_progress
        )
        out = args.out_dir
        return runner.StageOutput(
            files={
                out / "per_question.jsonl": per_question_lines(rows),
                out / "per_doc_chunker.csv": table_csv(table),
            },
            message=f"{len(rows)} (question, chunker) items, NaN per metric "
            f"{summary['failed_per_metric']} -> {out}",
            summary=summary,
        )

    paths = {
        "questions": runner.DEFAULT_QUESTIONS,
        "answers": runner.DEFAULT_ANSWERS,
        "passages": runner.DEFAULT_PASSAGES,
        "out_dir": DEFAULT_OUT_DIR,
    }
    return runner.run_rag_stage("ragas", __doc__, argv, paths, compute)


if __name__ == "__main__":
    sys.exit(main())
