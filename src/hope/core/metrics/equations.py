"""The equations of section 3 as pure functions over vectors and outcomes.

No LLM, no embedding model, no I/O: these are what the unit tests check against hand-computed
values. Embedding inputs may be any real vectors; cosine similarity normalises them itself.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from hope.core.metrics import similarity

ClipMode = Literal["negative_to_zero", "unit_interval", "none"]


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """θ of eq. 1 for every row pair; a zero vector has similarity 0 to everything. Computed on
    an exact grid (:mod:`hope.core.metrics.similarity`), so its bits are the same on any CPU."""
    return similarity.cosine_matrix(a, b)


def normalised_text(text: str) -> str:
    """Lower case, punctuation and runs of whitespace folded: "The cat." equals "the  cat"."""
    return re.sub(r"\W+", " ", text).strip().lower()


def distinct_texts(texts: Sequence[str]) -> tuple[list[str], int]:
    """The set of eq. 2 (S) and of the questions Q: first occurrences of the non-empty texts that
    differ after :func:`normalised_text`, in order, and how many duplicates were dropped."""
    seen: set[str] = set()
    kept: list[str] = []
    duplicates = 0
    for text in texts:
        key = normalised_text(text)
        if not key:
            continue
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        kept.append(text.strip())
    return kept, duplicates


def concept_unity_pairwise(statement_vectors: np.ndarray) -> float:
    """Eq. 2: (1/|S|²) Σ_j Σ_i θ(s_i, s_j), over all ordered pairs including i = j."""
    vectors = np.atleast_2d(statement_vectors)
    if vectors.shape[0] == 0:
        raise ValueError("concept unity needs at least one statement")
    return float(cosine_matrix(vectors, vectors).mean())


def concept_unity_centroid(question_vectors: np.ndarray) -> float:
    """Published code's variant: mean θ between each vector and the centroid of all of them."""
    vectors = np.atleast_2d(question_vectors)
    if vectors.shape[0] == 0:
        raise ValueError("concept unity needs at least one question")
    centroid = vectors.mean(axis=0, keepdims=True)
    return float(cosine_matrix(vectors, centroid).mean())


def paired_similarities(answers_alone: np.ndarray, answers_with_context: np.ndarray) -> np.ndarray:
    """θ(a*_i, a_i) for each question i (the pairs of eq. 5)."""
    a_star = np.atleast_2d(answers_alone)
    a = np.atleast_2d(answers_with_context)
    if a_star.shape != a.shape:
        raise ValueError(f"answer sets differ in shape: {a_star.shape} vs {a.shape}")
    return np.array([cosine_matrix(x, y)[0, 0] for x, y in zip(a_star, a, strict=True)])


def semantic_independence_passage(similarities: Sequence[float]) -> float:
    """Eq. 5: (1/|A|) Σ θ(a*, a) over the paired answers of one focus passage."""
    if len(similarities) == 0:
        raise ValueError("semantic independence needs at least one answered question")
    return float(np.mean(similarities))


def information_preservation(correct: Sequence[bool]) -> float:
    """Eq. 9: share of quadruples whose true statement the LLM picked."""
    if len(correct) == 0:
        raise ValueError("information preservation needs at least one answered quadruple")
    return float(np.mean([1.0 if c else 0.0 for c in correct]))


def clip_score(value: float, mode: ClipMode) -> float:
    """Paper: negative values are set to 0. Published code: every score clipped to [0, 1]."""
    if mode == "none" or math.isnan(value):
        return value
    if mode == "negative_to_zero":
        return max(0.0, value)
    if mode == "unit_interval":
        return min(1.0, max(0.0, value))
    raise ValueError(f"unknown clip mode {mode!r}")


def corpus_mean(scores: Sequence[float | None], *, drop_zero: bool = False) -> tuple[float, int]:
    """Eq. 3 and 6: mean over the passages that have a score; NaN when none has.

    ``None`` marks a passage whose LLM items failed: it is excluded, never counted as 0.
    ``drop_zero`` reproduces the published code, which drops per-passage scores of exactly 0.
    """
    kept = [s for s in scores if s is not None and not math.isnan(s)]
    if drop_zero:
        kept = [s for s in kept if s != 0.0]
    if not kept:
        return math.nan, 0
    return float(np.mean(kept)), len(kept)


def hope_score(
    concept_unity: float,
    semantic_independence: float,
    information_preservation: float,
    *,
    weights: Sequence[float] = (1.0, 1.0, 1.0),
    zero_as_missing: bool = False,
) -> float:
    """Eq. 10: HOPE = (ζ_inf + ζ_sem + ζ_con) / 3.

    Paper: a missing (NaN) sub-metric makes HOPE NaN. With ``zero_as_missing`` (published code)
    a weighted mean over the sub-scores that are neither NaN nor 0.0.
    """
    values = [concept_unity, semantic_independence, information_preservation]
    if len(weights) != 3:
        raise ValueError("HOPE takes exactly three weights")
    if not zero_as_missing:
        if any(math.isnan(v) for v in values):
            return math.nan
        return float(sum(w * v for w, v in zip(weights, values, strict=True)) / sum(weights))
    pairs = [(w, v) for w, v in zip(weights, values, strict=True) if not math.isnan(v) and v != 0]
    if not pairs:
        return math.nan
    return float(sum(w * v for w, v in pairs) / sum(w for w, _ in pairs))


class PassageIndex:
    """One chunking's passage vectors put on the similarity grid once, with their exact norms,
    for every top-k query against them (eq. 4's P_q, eq. 8's P_st).

    Normalising the passages again for each query made a document's scoring grow with the square
    of its passage count (issue #35): each query is now one matrix product against the grid, an
    O(N) partial selection, and a sort of only the candidates tied with or above the k-th."""

    def __init__(self, vectors: np.ndarray):
        self.vectors = similarity.GridVectors(vectors)

    def __len__(self) -> int:
        return len(self.vectors)

    def top_k(self, queries: np.ndarray, k: int, *, exclude: Sequence[int] = ()) -> list[list[int]]:
        """:func:`top_k_indices` for each row of ``queries``, from one matrix product: the
        similarities are the bits ``cosine_matrix`` gives row by row, as every dot product on
        the grid is exact whatever the shape of the product."""
        rows = np.atleast_2d(queries)
        if k <= 0 or len(self) == 0:
            return [[] for _ in range(rows.shape[0])]
        with _one_blas_thread():
            sims = similarity.GridVectors(rows).cosine(self.vectors)
        # The indices ``exclude`` names among these passages; others (negative, past the end)
        # match no passage, as in a membership test against range(N).
        banned = sorted({int(i) for i in exclude if 0 <= i < len(self) and int(i) == i})
        return [_top_k_row(row, k, banned) for row in sims]


@functools.cache
def _blas_threads() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # only the speed of the product depends on it
        return None
    return ThreadpoolController()


def _one_blas_thread() -> contextlib.AbstractContextManager:
    """BLAS on the calling thread alone for a retrieval product: a few queries against N
    passages is read-bound, so a second thread saves little, and on shared cores the threads
    wait for each other (at 1,000 passages under load 4 on 2 cores, 15 ms a product with
    OpenBLAS's threads against 1.1 ms without them). The bits are the same either way: every
    dot product on the grid is exact."""
    controller = _blas_threads()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")


def _top_k_row(sims: np.ndarray, k: int, banned: list[int]) -> list[int]:
    """The first k indices by (-similarity, index), ``banned`` left out, in O(N) but for ties.

    The k-th largest value is found by a partial selection; every index at or above it (ties at
    the boundary included, so that the lowest tied indices win, as a full sort by (-sim, index)
    would pick them) is then sorted, stably, by descending similarity."""
    n = sims.shape[0]
    take = min(k, n - len(banned))
    if take <= 0:
        return []
    if banned:
        # Similarities are finite and in [-1, 1], so -inf sinks the banned below every other
        # candidate; at least ``take`` others remain, so the k-th value is finite.
        sims = sims.copy()
        sims[banned] = -np.inf
    kth = np.partition(sims, n - take)[n - take]
    candidates = np.flatnonzero(sims >= kth)  # ascending index: the stable sort keeps ties so
    order = np.argsort(-sims[candidates], kind="stable")
    return candidates[order[:take]].tolist()


def top_k_indices(
    query: np.ndarray,
    candidates: np.ndarray | PassageIndex,
    k: int,
    *,
    exclude: Sequence[int] = (),
) -> list[int]:
    """Indices of the k candidates most similar to ``query`` (its first row if it has several),
    ties broken by lower index, ``exclude`` left out. Pass a :class:`PassageIndex` when the same
    candidates are queried many times: raw vectors are put on the grid at every call."""
    if k <= 0 or len(candidates) == 0:
        return []
    index = candidates if isinstance(candidates, PassageIndex) else PassageIndex(candidates)
    return index.top_k(np.atleast_2d(query)[:1], k, exclude=exclude)[0]
