"""Labelled retrieval of one chunking: retrieve per question, score, average with intervals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hope.labelled.bootstrap import DEFAULT_RESAMPLES, mean_interval
from hope.labelled.dense_retrieval import rank_passages
from hope.labelled.labelled_inputs import ChunkPassage, LabelledQuestion, locate_passages
from hope.labelled.measures import MEASURES, question_measures
from hope.models.embeddings import Embedder

DEFAULT_K = 5
# The findings note's budget (../shared/notes/validity-findings.md): 5 passages of 500 characters.
DEFAULT_BUDGET = 2500


@dataclass(frozen=True)
class LabelledSettings:
    k: int = DEFAULT_K
    budget: int = DEFAULT_BUDGET
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    confidence: float = 0.95


def evaluate_chunking(
    corpus: str,
    questions: Sequence[LabelledQuestion],
    passages: Sequence[ChunkPassage],
    embedder: Embedder,
    settings: LabelledSettings = LabelledSettings(),
) -> dict[str, Any]:
    """Per-question measures with the retrieved passages, and their means with intervals.

    ``status`` is ``not_evaluable`` (with ``reason``, no scores) when a passage cannot be placed
    in the corpus; such a chunking is never scored.
    """
    if not questions:
        raise ValueError("no questions to evaluate")
    if not passages:
        raise ValueError("no passages to evaluate")
    settings_record = {
        "k": settings.k,
        "budget": settings.budget,
        "n_resamples": settings.n_resamples,
        "seed": settings.seed,
        "confidence": settings.confidence,
        "embedder": embedder.identity,
    }
    spans, reason = locate_passages(corpus, passages)
    if spans is None:
        return {"status": "not_evaluable", "reason": reason, "settings": settings_record}
    rankings = rank_passages(embedder, [q.question for q in questions], [p.text for p in passages])
    per_question = []
    for question, ranking in zip(questions, rankings, strict=True):
        values = question_measures(
            question.spans, spans, ranking, k=settings.k, budget=settings.budget
        )
        per_question.append(
            {"question": question.question, "top_k": [int(i) for i in ranking[: settings.k]]}
            | values
        )
    summary = {
        name: mean_interval(
            [record[name] for record in per_question],
            n_resamples=settings.n_resamples,
            seed=settings.seed,
            confidence=settings.confidence,
        )
        for name in MEASURES
    }
    return {
        "status": "ok",
        "n_questions": len(questions),
        "n_passages": len(passages),
        "summary": summary,
        "per_question": per_question,
        "settings": settings_record,
    }
