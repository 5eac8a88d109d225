"""The semantic chunker's OpenAI provider embeds through models.embeddings.OpenAIEmbedder."""

from types import SimpleNamespace

import numpy as np
import openai

from hope.chunking.chunker_settings import SemanticSettings
from hope.chunking.semantic import _openai_embeddings


class _FakeClient:
    def __init__(self, **_kwargs):
        self.batches: list[list[str]] = []
        self.embeddings = SimpleNamespace(create=self._create)

    def _create(self, model, input):
        self.batches.append(list(input))
        # Returned out of order on purpose: the embedder must sort by index.
        data = [SimpleNamespace(index=i, embedding=[3.0, 4.0 * (i + 1)]) for i in range(len(input))]
        return SimpleNamespace(data=list(reversed(data)))


def test_openai_provider_batches_sorts_and_normalises(monkeypatch):
    clients: list[_FakeClient] = []

    def make_client(**kwargs):
        clients.append(_FakeClient(**kwargs))
        return clients[-1]

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    # The one-text preflight request is covered in tests/unit; here only the batching is checked.
    monkeypatch.setenv("HOPE_PREFLIGHT", "0")
    monkeypatch.setattr(openai, "OpenAI", make_client)
    settings = SemanticSettings(provider="openai", model="text-embedding-3-small", batch_size=2)
    embeddings = _openai_embeddings(settings)

    vectors = embeddings.embed_batch(["a", "b", "c"])

    assert clients[0].batches == [["a", "b"], ["c"]]
    np.testing.assert_allclose(vectors[0], [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(vectors[2], [3 / 5, 4 / 5], rtol=1e-6)
    np.testing.assert_allclose(vectors[1], [3 / np.hypot(3, 8), 8 / np.hypot(3, 8)], rtol=1e-6)
    assert embeddings.dimension == 2
