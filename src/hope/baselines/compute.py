"""All baselines of one chunking with a given embedder: sentences split, texts embedded once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hope.baselines.baseline_measures import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MIN_CHARS,
    context_windows,
    contextual_coherence,
    intra_chunk_cohesion,
    passage_count,
    size_compliance,
)
from hope.baselines.cards import CARDS
from hope.core.text import split_sentences
from hope.models.embeddings import Embedder

BASELINES = tuple(CARDS)


def compute_baselines(
    passages: Sequence[str],
    embedder: Embedder,
    *,
    min_chars: int = DEFAULT_MIN_CHARS,
    max_chars: int = DEFAULT_MAX_CHARS,
    language: str = "en",
) -> dict[str, Any]:
    """``{name: {"score", "per_passage"}}`` for every baseline, plus the settings used.

    ``per_passage`` is None for the passage count, which is not a mean over passages.
    """
    if not passages:
        raise ValueError("baselines need at least one passage")
    texts = list(passages)
    sentences = [[s.text for s in split_sentences(text, language)] for text in texts]
    windows = context_windows(texts)
    flat_sentences = [s for group in sentences for s in group]
    window_texts = [w for w in windows if w is not None]
    unique = list(dict.fromkeys(texts + flat_sentences + window_texts))
    vectors = embedder.embed(unique)
    row = {text: i for i, text in enumerate(unique)}
    passage_vectors = np.stack([vectors[row[t]] for t in texts])
    dim = passage_vectors.shape[1]
    sentence_vectors = [
        np.stack([vectors[row[s]] for s in group]) if group else np.zeros((0, dim))
        for group in sentences
    ]
    window_vectors = [vectors[row[w]] if w is not None else None for w in windows]
    lengths = [len(t) for t in texts]
    compliance, compliance_items = size_compliance(lengths, min_chars, max_chars)
    cohesion, cohesion_items = intra_chunk_cohesion(passage_vectors, sentence_vectors)
    coherence, coherence_items = contextual_coherence(passage_vectors, window_vectors)
    return {
        "size_compliance": {"score": compliance, "per_passage": compliance_items},
        "intra_chunk_cohesion": {"score": cohesion, "per_passage": cohesion_items},
        "contextual_coherence": {"score": coherence, "per_passage": coherence_items},
        "passage_count": {"score": passage_count(lengths), "per_passage": None},
        "settings": {
            "size_range_chars": [min_chars, max_chars],
            "embedder": embedder.identity,
            "language": language,
        },
    }
