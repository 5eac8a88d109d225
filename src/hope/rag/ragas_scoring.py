"""The four RAGAS indicators of section 4.2 per (question, chunker), and their aggregation per
(document, chunker). Beside them, where an item carries its retrieved passages' character spans,
the judge-free reference-span recall (hope.rag.span_recall; beyond the paper).

A score ragas cannot produce (parse failure, exception, timeout, NaN, a value outside the metric's
range) is NaN with its reason, never 0, and is counted per metric and chunker. One bad item never
stops the others.

Aggregation (the table the analysis joins with HOPE on ``doc_id, chunker``): a question belongs to
the document it was generated from (its ``doc_id``); for every (doc_id, chunker) with at least one
question, each indicator is the mean over that document's questions whose score is not NaN, with
``n`` (questions) and ``n_failed`` (NaN scores) per indicator; all failed gives NaN.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from hope.core.concurrency import gather_bounded
from hope.models.model_errors import backend_error_in
from hope.rag import span_recall
from hope.rag.rag_config import METRIC_NAMES, RagasConfig

# What each indicator needs, in ragas' argument names.
METRIC_INPUTS: dict[str, tuple[str, ...]] = {
    "answer_correctness": ("user_input", "response", "reference"),
    "factual_correctness": ("response", "reference"),
    "context_recall": ("user_input", "retrieved_contexts", "reference"),
    "response_relevancy": ("user_input", "response"),
}


def build_metrics(llm: Any, embeddings: Any, config: RagasConfig) -> dict[str, Any]:
    """The ragas ``metrics.collections`` objects for the configured indicator names."""
    from ragas.metrics.collections import (
        AnswerCorrectness,
        AnswerRelevancy,
        ContextRecall,
        FactualCorrectness,
    )

    factories = {
        "answer_correctness": lambda: AnswerCorrectness(
            llm=llm,
            embeddings=embeddings,
            weights=list(config.answer_correctness_weights),
        ),
        "factual_correctness": lambda: FactualCorrectness(
            llm=llm, mode=config.factual_correctness_mode
        ),
        "context_recall": lambda: ContextRecall(llm=llm),
        "response_relevancy": lambda: AnswerRelevancy(
            llm=llm, embeddings=embeddings, strictness=config.response_relevancy_strictness
        ),
    }
    metrics = {name: factories[name]() for name in config.metrics}
    if not config.few_shot_examples:
        for metric in metrics.values():
            drop_prompt_examples(metric)
    return metrics


def drop_prompt_examples(metric: Any) -> int:
    """Empty the few-shot examples of every prompt a ragas metric holds; returns how many.

    A 135M judge copies the examples' statements ("Albert Einstein was ...") into its answers
    about our documents, and the examples are most of each prompt's tokens (measured: 1,300 of
    the context-recall prompt's tokens before the input).
    """
    from ragas.prompt.metrics.base_prompt import BasePrompt

    emptied = 0
    for value in vars(metric).values():
        if isinstance(value, BasePrompt) and value.examples:
            value.examples = []
            emptied += 1
    return emptied


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _allowed_range(metric: Any) -> tuple[float, float]:
    allowed = getattr(metric, "allowed_values", None)
    if isinstance(allowed, tuple) and len(allowed) == 2:
        return float(allowed[0]), float(allowed[1])
    return 0.0, 1.0


async def score_metric(
    metric: Any, inputs: Mapping[str, Any], timeout_s: float
) -> tuple[float, str | None]:
    """``(value, None)`` or ``(NaN, reason)``; never raises for a failure of the metric."""
    try:
        result = await asyncio.wait_for(metric.ascore(**inputs), timeout=timeout_s)
        value = float(getattr(result, "value", result))
    except TimeoutError:
        return math.nan, f"timeout after {timeout_s:g}s"
    except Exception as exc:
        if (fatal := backend_error_in(exc)) is not None:
            raise fatal from exc  # a backend that cannot answer is not a property of the answer
        return math.nan, f"{type(exc).__name__}: {_short(exc)}"
    if math.isnan(value):
        return math.nan, "ragas returned NaN (no usable statements or classifications)"
    low, high = _allowed_range(metric)
    if not low - 1e-6 <= value <= high + 1e-6:
        return math.nan, f"out of range: {value!r} not in [{low:g}, {high:g}]"
    return value, None


def metric_inputs(item: Mapping[str, Any], question: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "user_input": question["question"],
        "response": item.get("answer"),
        "reference": question["reference"],
        "retrieved_contexts": list(item.get("retrieved_contexts") or []),
    }


async def score_item(
    item: Mapping[str, Any],
    question: Mapping[str, Any],
    metrics: Mapping[str, Any],
    *,
    timeout_s: float,
) -> dict[str, Any]:
    """One row of the per-question table: value and error of each indicator."""
    row: dict[str, Any] = {
        "question_id": item["question_id"],
        "chunker": item["chunker"],
        "doc_id": question["doc_id"],
        "domain": question["domain"],
        "generator": question.get("generator"),
    }
    available = metric_inputs(item, question)
    for name, metric in metrics.items():
        needs = METRIC_INPUTS[name]
        if "response" in needs and not available["response"]:
            value, reason = math.nan, f"no answer: {item.get('error') or 'empty answer'}"
        elif "retrieved_contexts" in needs and not available["retrieved_contexts"]:
            value, reason = math.nan, "no retrieved contexts"
        else:
            value, reason = await score_metric(metric, {k: available[k] for k in needs}, timeout_s)
        row[name] = value
        row[f"{name}_error"] = reason
    if "retrieved_spans" in item:
        value, reason = span_recall.score(question, item["retrieved_spans"])
        row[span_recall.NAME] = value
        row[f"{span_recall.NAME}_error"] = reason
    return row


async def score_all(
    items: Sequence[Mapping[str, Any]],
    questions: Mapping[str, Mapping[str, Any]],
    metrics: Mapping[str, Any],
    *,
    timeout_s: float,
    concurrency: int = 2,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Rows for every item (answer record with ``retrieved_contexts``), in input order."""

    async def one(item: Mapping[str, Any]) -> dict[str, Any]:
        question = questions.get(item["question_id"])
        if question is None:
            raise ValueError(f"answer for unknown question {item['question_id']!r}")
        return await score_item(item, question, metrics, timeout_s=timeout_s)

    return await gather_bounded(
        one, items, limit=concurrency, progress="ragas" if progress else None
    )


def metric_names_of(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return [m for m in (*METRIC_NAMES, span_recall.NAME) if any(m in row for row in rows)]


def aggregate(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (doc_id, chunker), first-seen order: mean, n and n_failed of each indicator."""
    metrics = metric_names_of(rows)
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    domains: dict[str, str] = {}
    for row in rows:
        groups[(row["doc_id"], row["chunker"])].append(row)
        domains[row["doc_id"]] = row["domain"]
    table = []
    for (doc_id, chunker), members in groups.items():
        record: dict[str, Any] = {
            "doc_id": doc_id,
            "chunker": chunker,
            "domain": domains[doc_id],
            "n_questions": len(members),
        }
        for metric in metrics:
            values = [float(r[metric]) for r in members]
            ok = [v for v in values if not math.isnan(v)]
            record[metric] = sum(ok) / len(ok) if ok else math.nan
            record[f"{metric}_n"] = len(values)
            record[f"{metric}_n_failed"] = len(values) - len(ok)
        table.append(record)
    return table


def _reason_class(reason: str) -> str:
    if reason.startswith("timeout"):
        return "timeout"
    if reason.startswith("no answer"):
        return "no answer"
    if reason.startswith("out of range"):
        return "out of range"
    if reason.startswith("ragas returned NaN"):
        return "ragas NaN"
    return reason.split(":", 1)[0]


def failure_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """NaN counts per chunker and metric, totals per metric, and counts per kind of reason."""
    metrics = metric_names_of(rows)
    per_chunker: dict[str, dict[str, int]] = {}
    totals = dict.fromkeys(metrics, 0)
    reasons: dict[str, Counter[str]] = {m: Counter() for m in metrics}
    for row in rows:
        counts = per_chunker.setdefault(row["chunker"], dict.fromkeys(metrics, 0))
        for metric in metrics:
            if (reason := row.get(f"{metric}_error")) is not None:
                counts[metric] += 1
                totals[metric] += 1
                reasons[metric][_reason_class(reason)] += 1
    return {
        "items": len(rows),
        "failed_per_metric": totals,
        # Every row is attempted for every metric (a metric absent from a row counts as scored).
        "attempted_per_metric": dict.fromkeys(metrics, len(rows)),
        "scored_per_metric": {m: len(rows) - totals[m] for m in metrics},
        "failed_per_chunker": per_chunker,
        "reasons_per_metric": {m: dict(sorted(c.items())) for m, c in reasons.items()},
    }
