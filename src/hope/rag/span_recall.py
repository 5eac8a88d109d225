"""Reference-span recall: a judge-free context recall for questions whose answer is a span.

Metric card. Range [0, 1], higher is better. Beyond the paper (its four RAGAS indicators are
LLM judgements); source: the character-level recall of Smith & Troynikov, "Evaluating Chunking
Strategies for Retrieval" (Chroma, 2024), applied to the RAG run's own questions.

An extractive question (``hope.rag.question_generation``) records ``reference_span = [start,
end)``, the
characters of its document that are its reference answer. Its reference-span recall is the share
of those characters that lie inside the passages retrieved for it, counting only passages of the
same document and each character once:

    recall = |A ∩ R| / |A|,  A = the answer's characters,  R = the retrieved passages' characters

Why: ragas' context recall asks the judge whether the reference's statements are attributable to
the retrieved contexts, and with the offline 135M judge it scores another document's passages as
high as the reference context (``bench/results/validity.json``, ``rag_context_recall_control``).
This measure needs no judge, so a small model cannot corrupt it; it is undefined (NaN with its
reason, never 0) for an abstractive reference and for passages without character offsets.

>>> reference_span_recall((10, 20), "d", [("d", 0, 15), ("d", 40, 60)])
0.5
>>> reference_span_recall((10, 20), "d", [("d", 0, 15), ("d", 12, 30)])
1.0
>>> reference_span_recall((10, 20), "d", [("other", 0, 100)])
0.0
>>> reference_span_recall((10, 20), "d", [])
0.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from hope.labelled.spans import Span, covered, overlap

NAME = "reference_span_recall"

# A retrieved passage as (doc_id, start, end); start/end None when its chunker gave no offsets.
RetrievedSpan = tuple[str, int | None, int | None]


def reference_span_recall(
    reference_span: Span, doc_id: str, retrieved: Sequence[RetrievedSpan]
) -> float:
    """Share of the reference's characters inside the retrieved passages of document ``doc_id``."""
    start, end = reference_span
    if not 0 <= start < end:
        raise ValueError(f"reference span must be [start, end) with 0 <= start < end: {start, end}")
    same_document = [(s, e) for d, s, e in retrieved if d == doc_id]
    if any(s is None or e is None for s, e in same_document):
        raise ValueError("a retrieved passage has no character offsets")
    return overlap([(start, end)], same_document) / covered([(start, end)])


def score(
    question: Mapping[str, Any], retrieved: Sequence[RetrievedSpan]
) -> tuple[float, str | None]:
    """``(value, None)`` or ``(NaN, reason)`` for one (question, retrieval)."""
    span = question.get("reference_span")
    if not span:
        return math.nan, "no reference span (the reference answer is not a span of its document)"
    if any(s is None or e is None for d, s, e in retrieved if d == question["doc_id"]):
        return math.nan, "a retrieved passage has no character offsets"
    return reference_span_recall((int(span[0]), int(span[1])), question["doc_id"], retrieved), None
