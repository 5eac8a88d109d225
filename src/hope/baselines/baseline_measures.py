"""The baselines as pure functions of passage lengths and embedding vectors (cards: cards.py).

Each returns the score and its per-passage values, so that an interval can resample passages.
Cosines are computed on the exact grid (``hope.core.metrics.similarity``): the same bits on any CPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hope.core.metrics.similarity import cosine_matrix

DEFAULT_MIN_CHARS = 100
DEFAULT_MAX_CHARS = 1100


def passage_count(lengths: Sequence[int]) -> float:
    return float(len(lengths))


def size_compliance(
    lengths: Sequence[int],
    min_chars: int = DEFAULT_MIN_CHARS,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> tuple[float, list[float]]:
    """Share of passages with ``min_chars <= length <= max_chars``."""
    if min_chars > max_chars:
        raise ValueError(f"size range [{min_chars}, {max_chars}] is empty")
    if not lengths:
        raise ValueError("size compliance needs at least one passage")
    inside = [1.0 if min_chars <= n <= max_chars else 0.0 for n in lengths]
    return sum(inside) / len(inside), inside


def intra_chunk_cohesion(
    passage_vectors: np.ndarray, sentence_vectors: Sequence[np.ndarray]
) -> tuple[float, list[float]]:
    """Mean over passages of the mean cosine of the passage's sentences to the passage.

    ``sentence_vectors[i]`` holds passage i's sentence rows; a passage without sentences is NaN
    and left out of the mean.
    """
    if len(sentence_vectors) != len(passage_vectors):
        raise ValueError(
            f"{len(sentence_vectors)} sentence sets for {len(passage_vectors)} passages"
        )
    per_passage = [
        float(np.mean(cosine_matrix(rows, vector))) if len(rows) else math.nan
        for vector, rows in zip(passage_vectors, sentence_vectors, strict=True)
    ]
    return _finite_mean(per_passage), per_passage


def context_windows(texts: Sequence[str], joiner: str = "\n") -> list[str | None]:
    """Each passage's surrounding window: previous and next passage joined (None if alone)."""
    windows: list[str | None] = []
    for i in range(len(texts)):
        neighbours = texts[max(i - 1, 0) : i] + texts[i + 1 : i + 2]
        windows.append(joiner.join(neighbours) if neighbours else None)
    return windows


def contextual_coherence(
    passage_vectors: np.ndarray, window_vectors: Sequence[np.ndarray | None]
) -> tuple[float, list[float]]:
    """Mean over passages of the cosine between a passage and its window (None: NaN, left out)."""
    if len(window_vectors) != len(passage_vectors):
        raise ValueError(f"{len(window_vectors)} windows for {len(passage_vectors)} passages")
    per_passage = [
        float(cosine_matrix(vector, window)[0, 0]) if window is not None else math.nan
        for vector, window in zip(passage_vectors, window_vectors, strict=True)
    ]
    return _finite_mean(per_passage), per_passage


def _finite_mean(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan
