"""Embedding-based semantic chunking with chonkie's ``SemanticChunker``.

chonkie splits the document into sentences (keeping every character), embeds sliding windows of
sentences, and cuts where the window-to-next-sentence similarity has a pronounced minimum. Its
chunks are runs of whole sentences, so each passage is a verbatim slice of the document and the
passages concatenate back to it.

The embedding model is loaded on the first document, not at construction, so that loading a
config (and rejecting a bad one) stays cheap.
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hope.chunking.chunker_settings import SemanticSettings, validate_settings
from hope.chunking.passages import ChunkingError, Passage, build_passages
from hope.models.model_files import (
    EmbeddingModelError,
    hf_cached,
    hub_offline,
    resolve_embedding_model,
)

if TYPE_CHECKING:
    from chonkie.embeddings import BaseEmbeddings


def _sentence_transformer_embeddings(settings: SemanticSettings) -> BaseEmbeddings:
    from chonkie.embeddings import SentenceTransformerEmbeddings

    try:
        location = resolve_embedding_model(settings.model)
    except EmbeddingModelError as exc:
        raise ChunkingError(f"semantic chunker: {exc}") from exc
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(
            location,
            device=settings.device,
            trust_remote_code=settings.trust_remote_code,
            # Never reach for the hub when the files are already here (a local model folder).
            local_files_only=Path(location).is_dir() or hub_offline() or hf_cached(location),
        )
    except Exception as exc:  # sentence-transformers raises many types for an unusable model
        raise ChunkingError(
            f"semantic chunker: could not load embedding model {settings.model!r} from "
            f"{location}: {type(exc).__name__}: {exc}"
        ) from exc

    batch_size = settings.batch_size

    from hope.core.metrics.similarity import cosine_matrix
    from hope.models.embeddings import cpu_independent_rows, float64_model

    model = float64_model(model)

    class _Embeddings(SentenceTransformerEmbeddings):
        # chonkie's own embed_batch uses the library's default batch size and progress bar. The
        # float64 model and the grid make the cut points the same on any CPU (issue #35): chonkie
        # cuts where similarities have minima, so noise in their last bits could move a cut.
        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            if not texts:
                return []
            vectors = self.model.encode(
                texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
            )
            return list(cpu_independent_rows(vectors))

        def embed(self, text: str) -> np.ndarray:
            return self.embed_batch([text])[0]

        def similarity(self, u: np.ndarray, v: np.ndarray) -> float:
            return float(cosine_matrix(u, v)[0, 0])

    with warnings.catch_warnings():
        # chonkie 1.7 calls a sentence-transformers method renamed in v5; harmless here.
        warnings.simplefilter("ignore", FutureWarning)
        return _Embeddings(model)


def _openai_embeddings(settings: SemanticSettings) -> BaseEmbeddings:
    from chonkie.embeddings import BaseEmbeddings

    from hope.models.embeddings import OpenAIEmbedder

    try:
        embedder = OpenAIEmbedder(
            settings.model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            batch_size=settings.batch_size,
        )
    except RuntimeError as exc:
        raise ChunkingError(f"semantic chunker: {exc}") from exc
    model_name = settings.model

    class _OpenAIEmbeddings(BaseEmbeddings):
        """chonkie's own OpenAI class needs the ``catsu`` package, not a dependency here."""

        def __init__(self) -> None:
            super().__init__()
            self._dimension: int | None = None

        def embed(self, text: str) -> np.ndarray:
            return self.embed_batch([text])[0]

        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            vectors = list(embedder.embed(texts)) if texts else []
            if vectors:
                self._dimension = len(vectors[0])
            return vectors

        @property
        def dimension(self) -> int:
            if self._dimension is None:
                self.embed("dimension probe")
            assert self._dimension is not None
            return self._dimension

        def get_tokenizer(self) -> Any:
            import tiktoken

            try:
                return tiktoken.encoding_for_model(model_name)
            except KeyError:
                return tiktoken.get_encoding("cl100k_base")

    return _OpenAIEmbeddings()


class SemanticChunker:
    """chonkie ``SemanticChunker`` over a sentence-transformers model or an OpenAI endpoint."""

    def __init__(self, name: str | None = None, **params: Any) -> None:
        # ``name`` is the config's label; accepted so a plain Hydra instantiate of the config works.
        self.name = name
        self.settings = validate_settings(SemanticSettings, "semantic chunker", params)
        self._chunker: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._chunker is None:
                from chonkie import SemanticChunker as ChonkieSemanticChunker

                settings = self.settings
                if settings.provider == "openai":
                    embeddings = _openai_embeddings(settings)
                else:
                    embeddings = _sentence_transformer_embeddings(settings)
                self._chunker = ChonkieSemanticChunker(
                    embedding_model=embeddings,
                    threshold=settings.threshold,
                    chunk_size=settings.chunk_size,
                    similarity_window=settings.similarity_window,
                    min_sentences_per_chunk=settings.min_sentences_per_chunk,
                    min_characters_per_sentence=settings.min_characters_per_sentence,
                    delim=list(settings.delim),
                )
            return self._chunker

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as the chunker counts them against ``chunk_size``."""
        return int(self._load().tokenizer.count_tokens(text))

    def __call__(self, document_text: str, doc_id: str, chunker_name: str) -> list[Passage]:
        chunks = self._load().chunk(document_text)
        # chonkie's start/end are running sums of the lengths of the sentences it joined, a true
        # span only while its splitter drops no character; locating each chunk's text instead
        # gives offsets that are right by construction.
        return build_passages([c.text for c in chunks], document_text, doc_id, chunker_name)
