"""Chroma's filters for written questions, as pure checks on one draft.

Chroma's synthetic set keeps a question only if every excerpt is found verbatim in the corpus,
its excerpts are relevant to it, and it duplicates no earlier question
(``chunking_evaluation/evaluation_framework/synthetic_evaluation.py``). Here:

- ``located``: every excerpt is ``corpus[start:end]`` (a given span is checked; an excerpt
  without one is searched for, in its region first, then in the whole corpus);
- ``relevant``: every excerpt shares a content word with the question, and for a code writer
  every content word of the question comes from the excerpts;
- ``not_verbatim``: the question is not a copy of (a stretch of) its gold;
- ``distinct_gold``: at most ``MAX_GOLD_OVERLAP`` of the gold's characters belong to accepted
  questions' gold (two questions may share a sentence, as real ones do, but not their gold);
- ``distinct_query``: the question's content words are not nearly those of an accepted one
  (Jaccard below ``NEAR_DUPLICATE``).

Each check is recorded with the question (``ProbeQuestion.filters``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hope.labelled.spans import covered, overlap
from hope.probe.salience import content_words
from hope.probe.writing import Draft, Span

NEAR_DUPLICATE = 0.6
MAX_GOLD_OVERLAP = 0.5
FILTERS = ("located", "relevant", "not_verbatim", "distinct_gold", "distinct_query")


def locate(corpus: str, draft: Draft, region: Span) -> tuple[Span, ...] | None:
    """The span of every excerpt, or None if one is not in the corpus verbatim."""
    if not draft.excerpts:
        return None
    if draft.spans is not None:
        if len(draft.spans) != len(draft.excerpts):
            return None
        ok = all(
            0 <= s < e <= len(corpus) and corpus[s:e] == text
            for (s, e), text in zip(draft.spans, draft.excerpts, strict=True)
        )
        return tuple(draft.spans) if ok else None
    spans = []
    for text in draft.excerpts:
        if not text.strip():
            return None
        found = corpus.find(text, region[0], region[1])
        if found < 0:
            found = corpus.find(text)
        if found < 0:
            return None
        spans.append((found, found + len(text)))
    return tuple(spans)


def relevant(question: str, excerpts: Sequence[str], kind: str) -> bool:
    asked = set(content_words(question))
    per_excerpt = [set(content_words(text)) for text in excerpts]
    if not asked or any(not (asked & words) for words in per_excerpt):
        return False
    return kind != "code" or asked <= set().union(*per_excerpt)


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def not_verbatim(question: str, excerpts: Sequence[str]) -> bool:
    asked = _normal(question)
    return bool(asked) and all(asked not in _normal(text) for text in excerpts)


def overlaps(spans: Sequence[Span], taken: Sequence[Span]) -> bool:
    """Whether more than ``MAX_GOLD_OVERLAP`` of the characters of ``spans`` are in ``taken``."""
    return overlap(spans, taken) > MAX_GOLD_OVERLAP * covered(spans)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def near_duplicate(question: str, accepted: Sequence[set[str]]) -> bool:
    words = set(content_words(question))
    return any(jaccard(words, other) >= NEAR_DUPLICATE for other in accepted)
