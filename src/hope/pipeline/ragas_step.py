"""DVC stage ``ragas``: the four RAGAS indicators of section 4.2 for every (question, chunker), and
beside them the judge-free reference-span recall (hope.rag.span_recall, beyond the paper). This
module is the stage's work; ``hope.stages.ragas_stage`` is its ``main`` (arguments, the files it
reads and writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.core.io import csv_text, jsonl_lines
from hope.core.response_cache import ResponseCache
from hope.core.stage_records import check_questions
from hope.pipeline import stage_support as runner
from hope.rag.rag_config import RagConfig
from hope.rag.ragas_scoring import aggregate, build_metrics, failure_summary, score_all

DEFAULT_OUT_DIR = Path("data/ragas")


def attach_contexts(
    answers: Sequence[Mapping[str, Any]], passages: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Answer records with the texts of their retrieved passages (``retrieved_contexts``) and
    their ``(doc_id, start, end)`` (``retrieved_spans``, offsets None where a chunker gave none)."""
    texts = {p["passage_id"]: p["text"] for p in passages}
    spans = {p["passage_id"]: (p["doc_id"], p.get("start"), p.get("end")) for p in passages}
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
        items.append(
            {
                **answer,
                "retrieved_contexts": [texts[i] for i in ids],
                "retrieved_spans": [spans[i] for i in ids],
            }
        )
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
    from hope.rag import rag_models as models

    check_questions(questions)
    by_id = {q["question_id"]: q for q in questions}
    items = attach_contexts(answers, passages)
    caching = identity = None
    if metrics is None:
        endpoint = models.role_endpoint(config, "judge")
        identity = endpoint.identity
        llm, caching, embeddings = runner.ragas_models(
            config, endpoint, cache, purpose="ragas-metrics", client=judge_client, embedder=embedder
        )
        metrics = build_metrics(llm, embeddings, config.ragas)
    rows = asyncio.run(
        score_all(
            items,
            by_id,
            metrics,
            timeout_s=config.ragas.timeout_s,
            concurrency=config.ragas.concurrency,
            progress=progress,
        )
    )
    table = aggregate(rows)
    summary = {
        **failure_summary(rows),
        "judge": identity,
        "usage": caching.usage() if caching is not None else None,
        "config": config.ragas.model_dump(),
        "seed": config.seed,
    }
    return rows, table, summary


def _nan_as(value: Any, replacement: Any) -> Any:
    return replacement if isinstance(value, float) and math.isnan(value) else value


def per_question_lines(rows: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """JSON lines with NaN as null (its reason is in the ``<indicator>_error`` field)."""
    return jsonl_lines({k: _nan_as(v, None) for k, v in row.items()} for row in rows)


def table_csv(table: Sequence[Mapping[str, Any]]) -> str:
    return csv_text([{k: _nan_as(v, "NaN") for k, v in record.items()} for record in table])
