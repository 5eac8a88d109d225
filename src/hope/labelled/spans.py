"""Character spans ``[start, end)`` and their unions: the arithmetic of the labelled measures.

Every count here is over the union of spans, so a character that two overlapping passages (or two
overlapping references) share counts once.
"""

from __future__ import annotations

from collections.abc import Iterable

Span = tuple[int, int]


def union(spans: Iterable[Span]) -> list[Span]:
    """Sorted, disjoint spans covering exactly the characters of ``spans`` (empty ones dropped)."""
    merged: list[Span] = []
    for start, end in sorted((s, e) for s, e in spans if e > s):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def covered(spans: Iterable[Span]) -> int:
    """How many distinct characters ``spans`` cover."""
    return sum(end - start for start, end in union(spans))


def overlap(a: Iterable[Span], b: Iterable[Span]) -> int:
    """How many distinct characters lie in both ``a`` and ``b``."""
    left, right = union(a), union(b)
    i = j = shared = 0
    while i < len(left) and j < len(right):
        start = max(left[i][0], right[j][0])
        end = min(left[i][1], right[j][1])
        if end > start:
            shared += end - start
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return shared
