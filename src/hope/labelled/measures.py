"""Chroma's labelled retrieval measures at character level, for one question.

Card (every measure): range [0, 1], higher is better, source: Smith & Troynikov, "Evaluating
Chunking Strategies for Retrieval" (Chroma, 2024), with characters in place of tokens and every
count taken over the union of spans (overlapping passages count a character once).

Let G be the gold characters of a question and R those of its top-k retrieved passages:
- recall = |G ∩ R| / |G|
- precision = |G ∩ R| / |R|
- IoU = |G ∩ R| / |G ∪ R|
- precision-Ω = precision with R = every passage that holds a gold character: the best precision
  the chunking allows for that question (NaN when no passage holds gold, e.g. gold only in
  whitespace a chunker stripped).
- budget recall = |G ∩ B| / |G|, where B takes passages in rank order until ``budget`` characters
  are spent, the last one cut to fit. The budget counts each passage's full length, repeats
  included, as a reader's prompt would; coverage counts distinct characters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hope.labelled.spans import Span, covered, overlap

MEASURES = ("recall", "precision", "iou", "precision_omega", "budget_recall")


def budget_spans(spans: Sequence[Span], ranking: Sequence[int], budget: int) -> list[Span]:
    """The spans read in rank order within ``budget`` characters; the last one cut at its end."""
    taken: list[Span] = []
    left = budget
    for index in ranking:
        if left <= 0:
            break
        start, end = spans[index]
        length = end - start
        taken.append((start, start + min(length, left)))
        left -= length
    return taken


def question_measures(
    gold: Sequence[Span],
    passage_spans: Sequence[Span],
    ranking: Sequence[int],
    *,
    k: int,
    budget: int,
) -> dict[str, float]:
    """The five measures for one question; ``ranking`` lists passage indices, best first."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if budget < 1:
        raise ValueError(f"budget must be at least 1 character, got {budget}")
    gold_chars = covered(gold)
    if gold_chars == 0:
        raise ValueError("a question needs at least one non-empty gold span")
    retrieved = [passage_spans[i] for i in ranking[:k]]
    hit = overlap(gold, retrieved)
    retrieved_chars = covered(retrieved)
    holders = [span for span in passage_spans if overlap(gold, [span]) > 0]
    holder_chars = covered(holders)
    return {
        "recall": hit / gold_chars,
        "precision": hit / retrieved_chars if retrieved_chars else math.nan,
        "iou": hit / (gold_chars + retrieved_chars - hit),
        "precision_omega": overlap(gold, holders) / holder_chars if holder_chars else math.nan,
        "budget_recall": overlap(gold, budget_spans(passage_spans, ranking, budget)) / gold_chars,
    }
