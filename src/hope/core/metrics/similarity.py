"""Cosine similarity whose every bit is the same on any x86 CPU (issue #35).

A floating-point dot product rounds after each addition, so its last bits depend on the order of
the additions, and that order is what BLAS and numpy choose per processor (SIMD width, FMA,
blocking, threads). Scores written at full precision then differ between machines, and rankings
built from raw similarities can flip on near-ties.

Here the vectors are first put on a grid: each row is scaled by a power of two (exact) so that
its largest component lies in [0.5, 1), then rounded to a multiple of 2**-g. Every product of
two grid values is then a multiple of 2**-2g of magnitude at most 1, and every partial sum of a
dot product of ``dim`` such products is a multiple of 2**-2g of magnitude at most ``dim``. With
``dim * 2**(2g) <= 2**53`` (:func:`grid_bits`) all of these are exactly representable in float64:
no addition rounds, so any summation order, any SIMD width, FMA or not, gives the exact sum, and
BLAS can be used at full speed. The norms are exact for the same reason; the final square root
and division are single IEEE operations, correctly rounded everywhere.

Cosine is invariant to the power-of-two scale, so the only change from the textbook formula is the
rounding of each component to ``g`` bits below the row's scale (``g`` is 22 for 384 dimensions):
an error of about 1e-8 in a similarity, far below the float32 noise of the embedders themselves.
"""

from __future__ import annotations

import math

import numpy as np

# float32 holds 24 significant bits, so a grid value (an integer below 2**g times 2**-g) survives a
# round trip through float32 (the embedding cache stores float32) when g <= 24.
_MAX_GRID_BITS = 24


def grid_bits(dim: int) -> int:
    """The finest grid (bits below each row's scale) on which a ``dim``-long dot product is exact
    in float64: the largest ``g`` with ``dim * 2**(2g) <= 2**53``, at most 24."""
    if dim < 1:
        return _MAX_GRID_BITS
    return min(_MAX_GRID_BITS, int((53 - math.log2(dim)) // 2))


def _row_exponents(matrix: np.ndarray) -> np.ndarray:
    """Per row, the exponent e with max|x| * 2**-e in [0.5, 1); 0 for a zero row."""
    peak = np.abs(matrix).max(axis=1, keepdims=True) if matrix.shape[1] else None
    if peak is None:
        return np.zeros((matrix.shape[0], 1), dtype=np.int64)
    _, exponents = np.frexp(peak)
    return np.where(peak > 0, exponents, 0).astype(np.int64)


def on_grid(vectors: np.ndarray, bits: int | None = None) -> np.ndarray:
    """Rows scaled by powers of two to a peak in [0.5, 1) and rounded to multiples of
    ``2**-bits`` (default :func:`grid_bits` of the width), as float64. Non-finite input raises."""
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    if not np.isfinite(matrix).all():
        raise ValueError("similarity: vectors contain NaN or infinity")
    g = grid_bits(matrix.shape[1]) if bits is None else bits
    scaled = np.ldexp(matrix, -_row_exponents(matrix))  # exact: a power-of-two scale
    return np.ldexp(np.rint(np.ldexp(scaled, g)), -g)  # exact but for the one rounding


def snap_to_grid(vectors: np.ndarray, bits: int) -> np.ndarray:
    """:func:`on_grid` with each row's power-of-two scale put back (exact), as float32: vectors
    that keep their length and direction up to ``2**-bits`` of their peak, and whose bits no
    longer carry the noise of the kernels that computed them (below the grid). Used by the
    embedders on a float64 forward pass (``hope.models.embeddings``)."""
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    exponents = _row_exponents(matrix)
    return np.ldexp(on_grid(matrix, bits), exponents).astype(np.float32)


class GridVectors:
    """Rows put on the grid once, with their exact norms, for many cosine queries against them
    (a chunking's passages): the normalisation is done once, not per query."""

    def __init__(self, vectors: np.ndarray):
        self.grid = on_grid(vectors)
        self.norms = np.sqrt(np.einsum("ij,ij->i", self.grid, self.grid))  # exact sums

    def __len__(self) -> int:
        return self.grid.shape[0]

    def cosine(self, other: GridVectors) -> np.ndarray:
        """``(len(self), len(other))`` cosines; a zero vector has similarity 0 to everything."""
        if self.grid.shape[1] != other.grid.shape[1]:
            raise ValueError(
                f"similarity: vectors of width {self.grid.shape[1]} and "
                f"{other.grid.shape[1]} cannot be compared"
            )
        dots = self.grid @ other.grid.T  # exact on the grid, whatever BLAS does
        scale = self.norms[:, None] * other.norms[None, :]
        out = np.divide(dots, scale, out=np.zeros_like(dots), where=scale > 0)
        return np.clip(out, -1.0, 1.0)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """θ of eq. 1 for every row pair of ``a`` and ``b``, the same bits on any CPU."""
    return GridVectors(a).cosine(GridVectors(b))
