"""DVC stage ``ragas``: the four RAGAS indicators of section 4.2 for every (question, chunker).

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

import argparse
import asyncio
import csv
import io
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.cache import ResponseCache
from hope.rag.config import RagConfig, load_rag_config
from hope.rag.scoring import aggregate, build_metrics, failure_summary, score_all
from hope.stages.chunk import read_jsonl
from hope.stages.questions import DEFAULT_OUTPUT as DEFAULT_QUESTIONS
from hope.stages.questions import add_common_args, open_stage_cache, run_stage
from hope.stages.rag import DEFAULT_OUTPUT as DEFAULT_ANSWERS
from hope.stages.rag import DEFAULT_PASSAGES, check_questions

DEFAULT_OUT_DIR = Path("data/ragas")


def attach_contexts(
    answers: Sequence[Mapping[str, Any]], passages: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Answer records with the texts of their retrieved passages (``retrieved_contexts``)."""
    texts = {p["passage_id"]: p["text"] for p in passages}
    items = []
    for answer in answers:
        ids = answer.get("retrieved_passage_ids")
        if not isinstance(ids, list):
            raise ValueError(f"answer {answer.get('question_id')!r} has no retrieved_passage_ids")
        unknown = [i for i in ids if i not in texts]
        if unknown:
            raise ValueError(
                f"answer {answer['question_id']!r} ({answer['chunker']}) retrieved unknown "
                f"passage(s) {unknown[:3]}"
            )
        items.append({**answer, "retrieved_contexts": [texts[i] for i in ids]})
    return items


def evaluate_answers(
    questions: Sequence[Mapping[str, Any]],
    answers: Sequence[Mapping[str, Any]],
    passages: Sequence[Mapping[str, Any]],
    config: RagConfig,
    cache: ResponseCache | None,
    *,
    metrics: Mapping[str, Any] | None = None,
    judge_client: Any | None = None,
    embedder: Any | None = None,
    progress: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """``(per-question rows, per-(doc, chunker) table, summary)``.

    ``metrics`` replaces the ragas metric objects (tests); otherwise they are built over the judge
    LLM (``judge_client`` replaces its transport) and the configured embedder.
    """
    from hope.rag import models

    check_questions(questions)
    by_id = {q["question_id"]: q for q in questions}
    items = attach_contexts(answers, passages)
    caching = None
    identity = None
    if metrics is None:
        endpoint = models.role_endpoint(config, "judge")
        identity = endpoint.identity
        llm, caching = models.judge_llm(
            config,
            endpoint,
            cache,
            purpose="ragas-metrics",
            temperature=config.ragas.temperature,
            client=judge_client,
        )
        embeddings = models.ragas_embeddings(embedder or models.build_embedder(config, cache))
        metrics = build_metrics(llm, embeddings, config.ragas)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc="ragas", file=sys.stderr)
    try:
        rows = asyncio.run(
            score_all(
                items,
                by_id,
                metrics,
                timeout_s=config.ragas.timeout_s,
                concurrency=config.ragas.concurrency,
                progress=bar,
            )
        )
    finally:
        if bar is not None:
            bar.close()
    table = aggregate(rows)
    summary = {
        **failure_summary(rows),
        "judge": identity,
        "usage": caching.usage() if caching is not None else None,
        "config": config.ragas.model_dump(),
        "seed": config.seed,
    }
    return rows, table, summary


def _json_value(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def per_question_lines(rows: Sequence[Mapping[str, Any]]):
    for row in rows:
        clean = {k: _json_value(v) for k, v in row.items()}
        yield json.dumps(clean, ensure_ascii=False, allow_nan=False) + "\n"


def table_csv(table: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    if not table:
        return ""
    writer = csv.DictWriter(buffer, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    for record in table:
        writer.writerow(
            {k: ("NaN" if isinstance(v, float) and math.isnan(v) else v) for k, v in record.items()}
        )
    return buffer.getvalue()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--answers", type=Path, default=DEFAULT_ANSWERS)
    parser.add_argument("--passages", type=Path, default=DEFAULT_PASSAGES)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    add_common_args(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def compute():
        config, _profile = load_rag_config(args.params, conf_dir=args.conf_dir)
        questions = read_jsonl(args.questions)
        answers = read_jsonl(args.answers)
        passages = read_jsonl(args.passages)
        if not answers:
            raise ValueError(f"{args.answers}: no answers")
        rows, table, summary = evaluate_answers(
            questions,
            answers,
            passages,
            config,
            open_stage_cache(args.cache),
            progress=not args.no_progress,
        )
        out = args.out_dir
        message = (
            f"{len(rows)} (question, chunker) items, NaN per metric "
            f"{summary['failed_per_metric']} -> {out}"
        )
        outputs = {
            out / "per_question.jsonl": per_question_lines(rows),
            out / "per_doc_chunker.csv": [table_csv(table)],
        }
        return outputs, out / "summary.json", summary, message

    return run_stage("ragas", compute)


if __name__ == "__main__":
    sys.exit(main())
