"""The shape of a question's gold: how many excerpts, how long, how far apart.

Probe questions are meant to stand in for real ones, and a ranking of chunkers at a fixed k
depends on the gold's shape: long or split gold favours large chunks, a single sentence small
ones. So the probe draws its gold from a distribution, by default the one measured on Chroma's
general evaluation set (``CHROMA_SHAPE``, computed by :func:`measure_shape` from its
``questions.jsonl``; a unit test recomputes it when the shared file is there).

Excerpt lengths and the gaps between the excerpts of one question are stored as deciles
(0 %, 10 %, ..., 100 %) and drawn by interpolating between them. Half of Chroma's gaps are a
sentence break (at most ``ADJACENT_GAP`` characters: consecutive sentences cut into two
excerpts); the rest are drawn from the deciles of the longer gaps, so a question's excerpts lie
in one region of the text (a median of about 600 characters from first to last), as real ones do.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from hope.core.io import iter_json_objects

# A gap of at most this many characters between two excerpts is a sentence break.
ADJACENT_GAP = 10
DECILES = tuple(range(0, 101, 10))


@dataclass(frozen=True)
class QuestionShape:
    """Excerpt count probabilities (count -> share), excerpt length deciles in characters, the
    share of adjacent excerpts and the deciles of the other gaps in characters."""

    count_shares: tuple[tuple[int, float], ...]
    length_deciles: tuple[int, ...]
    adjacent_share: float
    gap_deciles: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.count_shares or any(c < 1 or s < 0 for c, s in self.count_shares):
            raise ValueError("count_shares needs positive counts with non-negative shares")
        if len(self.length_deciles) != len(DECILES) or len(self.gap_deciles) != len(DECILES):
            raise ValueError(f"deciles need {len(DECILES)} values (0 %, 10 %, ..., 100 %)")
        if list(self.length_deciles) != sorted(self.length_deciles) or self.length_deciles[0] < 1:
            raise ValueError("length deciles must be positive and non-decreasing")
        if list(self.gap_deciles) != sorted(self.gap_deciles):
            raise ValueError("gap deciles must be non-decreasing")
        if not 0.0 <= self.adjacent_share <= 1.0:
            raise ValueError("adjacent_share must lie in [0, 1]")

    def draw_count(self, rng: random.Random) -> int:
        counts, shares = zip(*self.count_shares, strict=True)
        return rng.choices(counts, weights=shares)[0]

    def draw_length(self, rng: random.Random) -> int:
        return round(_from_deciles(self.length_deciles, rng.random()))

    def draw_gap(self, rng: random.Random) -> int:
        """Characters between two excerpts; 0 means the next sentence."""
        if rng.random() < self.adjacent_share:
            return 0
        return round(_from_deciles(self.gap_deciles, rng.random()))

    def mean_count(self) -> float:
        total = sum(s for _, s in self.count_shares)
        return sum(c * s for c, s in self.count_shares) / total


def _from_deciles(deciles: Sequence[int], u: float) -> float:
    """The value at quantile ``u`` of a distribution known by its deciles (linear between)."""
    position = u * (len(deciles) - 1)
    low = int(position)
    if low >= len(deciles) - 1:
        return float(deciles[-1])
    share = position - low
    return deciles[low] + share * (deciles[low + 1] - deciles[low])


def _deciles(values: Sequence[int]) -> tuple[int, ...]:
    import numpy as np

    return tuple(round(float(x)) for x in np.percentile(values, DECILES))


def shape_of(references: Iterable[Sequence[tuple[int, int]]]) -> QuestionShape:
    """The shape of questions given as lists of gold ``(start, end)`` spans."""
    counts: Counter[int] = Counter()
    lengths: list[int] = []
    gaps: list[int] = []
    for spans in references:
        ordered = sorted(spans)
        counts[len(ordered)] += 1
        lengths.extend(end - start for start, end in ordered)
        gaps.extend(b[0] - a[1] for a, b in pairwise(ordered))
    if not lengths:
        raise ValueError("no questions to measure")
    n = sum(counts.values())
    far = [g for g in gaps if g > ADJACENT_GAP]
    return QuestionShape(
        count_shares=tuple((c, round(counts[c] / n, 4)) for c in sorted(counts)),
        length_deciles=_deciles(lengths),
        adjacent_share=round(1 - len(far) / len(gaps), 4) if gaps else 1.0,
        gap_deciles=_deciles(far) if far else tuple(ADJACENT_GAP + 1 for _ in DECILES),
    )


def measure_shape(questions_path: str | Path) -> QuestionShape:
    """The shape of the questions in a Chroma-style ``questions.jsonl`` (every corpus pooled)."""
    return shape_of(
        [(r["start"], r["end"]) for r in record["references"]]
        for _, record in iter_json_objects(questions_path, "questions file")
    )


# measure_shape(../shared/benchmarks/chroma-general-eval/questions.jsonl): 375 questions of four
# corpora, 1.72 excerpts per question, a median excerpt of 154 characters.
CHROMA_SHAPE = QuestionShape(
    count_shares=((1, 0.5733), (2, 0.208), (3, 0.152), (4, 0.0533), (5, 0.0133)),
    length_deciles=(22, 84, 105, 121, 134, 154, 173, 193, 227, 273, 775),
    adjacent_share=0.5037,
    gap_deciles=(13, 57, 112, 165, 203, 260, 361, 495, 697, 1341, 3077),
)
