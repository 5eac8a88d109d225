"""A text's embedding does not depend on the other texts embedded with it (real MiniLM, CPU)."""

from __future__ import annotations

import numpy as np
import pytest

from hope.models.embeddings import CachingEmbedder, SentenceTransformerEmbedder

pytestmark = pytest.mark.slow

SHORT = "The crane lifts containers."
LONG = (
    "Each container is weighed before it reaches the storage yard, and dock workers record the "
    "weight and the destination of every box before the trucks leave the yard at night."
)


def test_the_same_text_gets_the_same_bits_in_any_batch():
    embedder = SentenceTransformerEmbedder("minilm", batch_size=32)
    alone = embedder.embed([SHORT])[0]
    # Beside a much longer text (sentence-transformers would pad SHORT to LONG's length) and in
    # another position: bit-identical, not merely close.
    with_long = embedder.embed([LONG, SHORT, LONG + " Again."])[1]
    assert np.array_equal(alone, with_long)
    # The library's padded batch agrees only to float tolerance (its last bits depend on the
    # batch: bench/results/embedding_batches.json); the per-text vector is that same vector.
    model = embedder.load_model()
    padded = model.encode([LONG, SHORT], batch_size=32, normalize_embeddings=True)[1]
    assert np.allclose(alone, padded, atol=1e-5)


def test_a_cached_vector_equals_a_fresh_one(tmp_path):
    from hope.core.response_cache import ResponseCache

    cache = ResponseCache(tmp_path / "c.sqlite")
    first = CachingEmbedder(SentenceTransformerEmbedder("minilm"), cache).embed([LONG, SHORT])
    fresh = SentenceTransformerEmbedder("minilm").embed([SHORT])
    again = CachingEmbedder(SentenceTransformerEmbedder("minilm"), cache).embed([SHORT])
    assert np.array_equal(first[1], fresh[0]) and np.array_equal(again[0], fresh[0])
