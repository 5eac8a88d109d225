"""Dense retrieval for the labelled measures: cosine similarity with the configured embedder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hope.core.metrics.similarity import cosine_matrix
from hope.models.embeddings import Embedder


def rank_by_cosine(query_vectors: np.ndarray, passage_vectors: np.ndarray) -> np.ndarray:
    """``(n_queries, n_passages)`` passage indices, most similar first; ties keep passage order.

    Cosine on the exact grid (``hope.core.metrics.similarity``), so the ranking is the same on any
    CPU.
    """
    scores = cosine_matrix(query_vectors, passage_vectors)
    return np.argsort(-scores, axis=1, kind="stable")


def rank_passages(
    embedder: Embedder, questions: Sequence[str], passages: Sequence[str]
) -> np.ndarray:
    return rank_by_cosine(embedder.embed(list(questions)), embedder.embed(list(passages)))
