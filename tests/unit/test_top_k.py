"""Top-k retrieval (eq. 4's P_q, eq. 8's P_st) from a partial selection over one matrix product
returns exactly what the full sort it replaced (issue #35) returned, ties and exclusions included.

The reference below is the implementation before the change, kept verbatim: cosine against every
candidate, then a Python sort of all of them by (-similarity, index)."""

from __future__ import annotations

import numpy as np
import pytest

from hope.core.metrics import equations, similarity


def reference_top_k(query, candidates, k, *, exclude=()):
    if k <= 0 or len(candidates) == 0:
        return []
    sims = equations.cosine_matrix(query, candidates)[0]
    banned = set(exclude)
    order = sorted(range(len(sims)), key=lambda i: (-sims[i], i))
    return [i for i in order if i not in banned][:k]


def tied_candidates(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Rows drawn with repetition from a small pool, as a document whose passages repeat, some
    doubled (the same direction: on the grid a power-of-two scale is exact, so an exact tie),
    some zero (similarity 0 to everything), from small integers (more equal cosines)."""
    pool = rng.integers(-2, 3, size=(max(1, n // 4), dim)).astype(np.float64)
    rows = pool[rng.integers(0, len(pool), size=n)]
    rows[rng.random(n) < 0.2] *= 2.0
    rows[rng.random(n) < 0.1] = 0.0
    return rows


def queries_for(rng: np.random.Generator, candidates: np.ndarray) -> list[np.ndarray]:
    dim = candidates.shape[1]
    found = [rng.normal(size=dim), np.zeros(dim), rng.integers(-2, 3, size=dim).astype(float)]
    if len(candidates):
        found.append(candidates[rng.integers(0, len(candidates))].copy())
    return found


def exclusions(rng: np.random.Generator, n: int) -> list[list[int]]:
    some = rng.integers(0, max(1, n), size=rng.integers(1, 4)).tolist()
    # Indices outside the candidates (negative, past the end) exclude nothing.
    return [[], [0], some, list(range(n)), [-1, n, n + 5], some + some]


def test_top_k_equals_the_full_sort_on_random_inputs_with_ties():
    rng = np.random.default_rng(35)
    checked = 0
    for trial in range(150):
        n = int(rng.integers(0, 40))
        dim = int(rng.integers(1, 7))
        candidates = tied_candidates(rng, n, dim)
        index = equations.PassageIndex(candidates)
        for query in queries_for(rng, candidates):
            for k in (0, 1, 2, 3, 5, n, n + 3):
                for exclude in exclusions(rng, n):
                    expected = reference_top_k(query, candidates, k, exclude=exclude)
                    assert equations.top_k_indices(query, candidates, k, exclude=exclude) == (
                        expected
                    ), (trial, n, k, exclude)
                    assert equations.top_k_indices(query, index, k, exclude=exclude) == expected
                    checked += 1
    assert checked > 10_000


def test_top_k_of_a_document_whose_passages_repeat_takes_the_lowest_tied_indices():
    # The case: a few distinct passages repeated; each query ties with every copy of its
    # nearest passage, and the first k copies (lowest indices) must be the ones retrieved.
    rng = np.random.default_rng(7)
    distinct = rng.normal(size=(6, 16))
    candidates = np.tile(distinct, (50, 1))
    index = equations.PassageIndex(candidates)
    for row in range(6):
        query = distinct[row] + 0.01 * rng.normal(size=16)
        got = index.top_k(query, 3)[0]
        assert got == [row, row + 6, row + 12]
        assert got == reference_top_k(query, candidates, 3)
        assert index.top_k(query, 3, exclude=[row])[0] == [row + 6, row + 12, row + 18]


def test_many_queries_in_one_product_give_each_query_its_own_top_k():
    rng = np.random.default_rng(3)
    candidates = tied_candidates(rng, 200, 24)
    queries = np.vstack([candidates[:5], rng.normal(size=(5, 24)), np.zeros((1, 24))])
    index = equations.PassageIndex(candidates)
    for exclude in ([], [4, 17, 199]):
        together = index.top_k(queries, 4, exclude=exclude)
        assert together == [reference_top_k(q, candidates, 4, exclude=exclude) for q in queries]


def test_one_product_for_many_queries_has_the_bits_of_one_query_at_a_time():
    # Why batching cannot change a ranking: on the grid every dot product is exact, so the
    # similarities of a (queries x passages) product equal those of each query alone.
    rng = np.random.default_rng(11)
    candidates = rng.normal(size=(300, 384)).astype(np.float32)
    queries = rng.normal(size=(7, 384)).astype(np.float32)
    together = similarity.GridVectors(queries).cosine(similarity.GridVectors(candidates))
    for i, query in enumerate(queries):
        assert np.array_equal(together[i], equations.cosine_matrix(query, candidates)[0])


def test_top_k_with_k_zero_or_no_candidates_is_empty():
    index = equations.PassageIndex(np.zeros((0, 4)))
    assert len(index) == 0
    assert index.top_k(np.ones((2, 4)), 3) == [[], []]
    assert equations.top_k_indices(np.ones(4), np.zeros((0, 4)), 3) == []
    assert equations.PassageIndex(np.eye(4)).top_k(np.ones((2, 4)), 0) == [[], []]


def test_top_k_refuses_vectors_of_another_width():
    with pytest.raises(ValueError, match="width"):
        equations.PassageIndex(np.eye(4)).top_k(np.ones(3), 2)
