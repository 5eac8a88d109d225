"""The exact grid cosine (hope.core.metrics.similarity) and the correlations of Table 2: the same
bits
whatever kernels the CPU's libraries pick (issue #35)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from hope.analysis.stats import pearson, spearman
from hope.core.metrics.similarity import (
    GridVectors,
    cosine_matrix,
    grid_bits,
    on_grid,
    snap_to_grid,
)
from hope.testing import OTHER_CPU_ENV


def test_grid_bits_keep_every_dot_product_exact_in_float64():
    assert grid_bits(384) == 22 and grid_bits(768) == 21 and grid_bits(3072) == 20
    assert grid_bits(1) == 24 and grid_bits(2) == 24  # float32 holds 24 bits
    for dim in (2, 384, 768, 1536, 3072, 4096):
        assert dim * 2.0 ** (2 * grid_bits(dim)) <= 2.0**53


def test_rows_are_scaled_by_powers_of_two_and_rounded_to_the_grid():
    grid = on_grid(np.array([[3.0, -1.0, 0.0], [0.0, 0.0, 0.0], [0.1, 0.2, 0.3]]), bits=4)
    # 3 -> 3/4 = 0.75 (peak in [0.5, 1)); -1/4 = -0.25; both on the 1/16 grid.
    assert grid[0].tolist() == [0.75, -0.25, 0.0]
    assert grid[1].tolist() == [0.0, 0.0, 0.0]
    # 0.3 -> 0.6 (x2), 0.2 -> 0.4, 0.1 -> 0.2; rounded to sixteenths: 10/16, 6/16, 3/16.
    assert grid[2].tolist() == [3 / 16, 6 / 16, 10 / 16]
    with pytest.raises(ValueError, match="NaN"):
        on_grid(np.array([[1.0, math.nan]]))


def test_cosine_by_hand():
    # [1, 0] and [1, 1]: 1/sqrt(2); opposite vectors -1; a zero vector 0 to everything.
    sims = cosine_matrix(np.array([[1.0, 0.0], [-2.0, 0.0], [0.0, 0.0]]), np.array([[1.0, 1.0]]))
    assert sims[0, 0] == pytest.approx(1 / math.sqrt(2), abs=1e-15)
    assert sims[1, 0] == pytest.approx(-1 / math.sqrt(2), abs=1e-15)
    assert sims[2, 0] == 0.0
    assert cosine_matrix(np.array([3.0, 4.0]), np.array([-3.0, -4.0]))[0, 0] == -1.0


def test_dot_products_on_the_grid_equal_exact_integer_arithmetic():
    """Grid values times 2**g are integers: Python's integers give the exact dot product, and
    numpy's float64 product (BLAS, any order) must equal it to the last bit."""
    rng = np.random.default_rng(7)
    for dim in (5, 384, 768):
        a, b = on_grid(rng.normal(size=(6, dim))), on_grid(rng.normal(size=(4, dim)))
        g = grid_bits(dim)
        ia = [[int(v) for v in row] for row in np.ldexp(a, g)]
        ib = [[int(v) for v in row] for row in np.ldexp(b, g)]
        exact = [[sum(x * y for x, y in zip(r, s, strict=True)) for s in ib] for r in ia]
        assert (np.ldexp(a @ b.T, 2 * g) == np.array(exact, dtype=np.float64)).all()
        assert all(abs(v) < 2**53 for row in exact for v in row)


def test_grid_cosine_is_within_1e_7_of_the_textbook_formula():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(50, 384)), rng.normal(size=(40, 384))
    plain = (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (
        b / np.linalg.norm(b, axis=1, keepdims=True)
    ).T
    assert np.abs(cosine_matrix(a, b) - plain).max() < 1e-7
    prepared = GridVectors(b)
    assert len(prepared) == 40
    assert np.array_equal(GridVectors(a).cosine(prepared), cosine_matrix(a, b))
    with pytest.raises(ValueError, match="width"):
        GridVectors(a).cosine(GridVectors(rng.normal(size=(2, 10))))


def test_snapped_vectors_keep_their_scale_and_fit_float32():
    rng = np.random.default_rng(1)
    unit = rng.normal(size=(20, 384))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    snapped = snap_to_grid(unit, 18)
    assert snapped.dtype == np.float32
    assert np.abs(snapped - unit).max() < 2.0**-18
    # Exactly on the grid: float32 lost nothing, and snapping again changes nothing.
    assert np.array_equal(snap_to_grid(snapped, 18), snapped)


def test_correlations_equal_scipys():
    rng = np.random.default_rng(0)
    for n in (3, 7, 21, 200):
        x = rng.normal(size=n)
        y = 0.4 * x + rng.normal(size=n)
        r, p = pearson(x, y)
        rho, rho_p = spearman(x, y)
        assert r == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-14)
        assert p == pytest.approx(stats.pearsonr(x, y).pvalue, abs=1e-14)
        assert rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-14)
        assert rho_p == pytest.approx(stats.spearmanr(x, y).pvalue, abs=1e-14)
    x = np.arange(5.0)
    assert spearman(x, 2 * x) == (1.0, 0.0) and pearson(x, -x)[0] == -1.0


_COMPUTE = """
import json, sys
import numpy as np
from hope.analysis.stats import correlation_cell
from hope.core.metrics.similarity import cosine_matrix
rng = np.random.default_rng(11)
a, b = rng.normal(size=(300, 384)).astype(np.float32), rng.normal(size=(200, 384))
x = rng.normal(size=40)
y = 0.3 * x + rng.normal(size=40)
print(json.dumps({
    "grid": cosine_matrix(a, b).tobytes().hex(),
    "plain": (a.astype(np.float64) @ b.T).tobytes().hex(),
    "cell": repr(sorted(correlation_cell(x, y, n_boot=200).items())),
}))
"""


def _computed_under(env: dict[str, str]) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", _COMPUTE],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_grid_cosines_and_correlations_have_the_same_bits_as_another_cpu_would_compute():
    native, other = _computed_under({}), _computed_under(OTHER_CPU_ENV)
    if native["plain"] == other["plain"]:
        pytest.skip("OpenBLAS picks the same kernel here either way: nothing to compare against")
    assert native["grid"] == other["grid"]
    assert native["cell"] == other["cell"]
