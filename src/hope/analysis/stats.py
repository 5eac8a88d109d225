"""Correlations with bootstrap confidence intervals, intervals of means, binned means and gains.

The mean of a bounded score (HOPE, its sub-metrics, the RAG indicators: all in [0, 1]) gets a
percentile-bootstrap interval (``bootstrap_mean_ci``), which stays within the range of the values
and so within the score's; a Student-t interval (``mean_ci``) can cross 0 or 1 and is not used for
anything printed or drawn. A share (k of n) gets a Wilson interval (``wilson_ci``).

Everything here refuses to print a number that the data cannot support: a statistic over fewer
than ``min_n`` pairs, or over a constant column, is NaN and the row says why and over how many.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

DEFAULT_MIN_N = 10
DEFAULT_BOOTSTRAP = 2000
DEFAULT_CONFIDENCE = 0.95
# Resamples are drawn in blocks so that memory stays bounded for large n and many resamples.
_BLOCK = 512

CORRELATION_COLUMNS = (
    "row",
    "col",
    "n",
    "pearson_r",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman_rho",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "n_boot",
    "n_boot_valid",
    "reason",
)


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of every row of ``x`` with the same row of ``y``; NaN for a constant row."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    sxy = np.einsum("ij,ij->i", xc, yc)
    sxx = np.einsum("ij,ij->i", xc, xc)
    syy = np.einsum("ij,ij->i", yc, yc)
    denom = np.sqrt(sxx * syy)
    # A resample that repeats one value (likely for small n) has no correlation, not r = 0; test
    # the raw values, because the centred ones of a constant row need not be exactly 0.
    degenerate = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0) | (denom == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / denom
    r[degenerate] = np.nan
    return np.clip(r, -1.0, 1.0)


def _rowwise_ranks(codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Average-tie ranks (1-based) within each row, given each value's dense rank ``codes``.

    Counting how often each level occurs per row avoids sorting every resample: the rank of a
    value is the count of smaller values plus the mean position among its ties. It equals
    ``scipy.stats.rankdata(..., axis=1)`` on the values themselves.
    """
    rows = codes.shape[0]
    offsets = (np.arange(rows) * n_levels)[:, None]
    counts = np.bincount((codes + offsets).ravel(), minlength=rows * n_levels).reshape(
        rows, n_levels
    )
    below = np.cumsum(counts, axis=1) - counts
    return (
        np.take_along_axis(below, codes, axis=1)
        + (np.take_along_axis(counts, codes, axis=1) + 1) / 2.0
    )


def bootstrap_correlations(
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Pearson and Spearman coefficients over ``n_boot`` paired resamples (with replacement).

    The generator is seeded from ``seed`` alone, so two cells with the same n see the same
    resampled indices: the result does not depend on the order in which cells are computed.
    Degenerate resamples give NaN.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(x)
    rng = np.random.default_rng(seed)
    x_levels, x_codes = np.unique(x, return_inverse=True)
    y_levels, y_codes = np.unique(y, return_inverse=True)
    pearson = np.empty(n_boot)
    spearman = np.empty(n_boot)
    for start in range(0, n_boot, _BLOCK):
        size = min(_BLOCK, n_boot - start)
        idx = rng.integers(0, n, size=(size, n))
        xb, yb = x[idx], y[idx]
        pearson[start : start + size] = _rowwise_pearson(xb, yb)
        # Spearman's rho is Pearson's r of the (average-tie) ranks, as in scipy.stats.spearmanr.
        spearman[start : start + size] = _rowwise_pearson(
            _rowwise_ranks(x_codes[idx], len(x_levels)),
            _rowwise_ranks(y_codes[idx], len(y_levels)),
        )
    return pearson, spearman


def percentile_ci(
    values: Sequence[float] | np.ndarray, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """Percentile-method interval of the finite ``values`` (NaN, NaN when there are none)."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return math.nan, math.nan
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(finite, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def _is_constant(values: np.ndarray) -> bool:
    return bool(np.ptp(values) == 0)


def pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Pearson's r and its two-sided p-value, as ``scipy.stats.pearsonr`` defines them, from
    element-wise products and numpy's pairwise sums only: scipy's version goes through BLAS dot
    products, whose last bits depend on the CPU (issue #35), and r reaches Table 2 at full
    precision."""
    xc = x - x.mean()
    yc = y - y.mean()
    r = float(np.clip((xc * yc).sum() / math.sqrt((xc * xc).sum() * (yc * yc).sum()), -1.0, 1.0))
    shape = len(x) / 2 - 1  # r's null distribution: Beta(n/2 - 1, n/2 - 1) on [-1, 1]
    p = float(2 * stats.beta(shape, shape, loc=-1, scale=2).sf(abs(r)))
    return r, p


def spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spearman's rho (Pearson's r of the average-tie ranks) and its two-sided p-value from the
    t distribution with n - 2 degrees of freedom, as ``scipy.stats.spearmanr`` computes them."""
    rho, _ = pearson(stats.rankdata(x), stats.rankdata(y))
    dof = len(x) - 2
    t = rho * math.sqrt(dof / ((rho + 1.0) * (1.0 - rho))) if abs(rho) < 1 else math.inf
    return rho, float(2 * stats.t.sf(abs(t), dof))


def correlation_cell(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    min_n: int = DEFAULT_MIN_N,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    x_name: str = "x",
    y_name: str = "y",
) -> dict[str, Any]:
    """Pearson and Spearman with p-values and bootstrap CIs over the pairs where both are finite.

    NaN everywhere, with ``reason`` set, when fewer than ``min_n`` complete pairs remain or either
    side is constant (a correlation is undefined there, and scipy would only warn).
    """
    if min_n < 3:
        raise ValueError(f"min_n must be at least 3 (a correlation of 2 points is ±1), got {min_n}")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.shape != ya.shape:
        raise ValueError(f"x and y differ in length ({xa.shape} vs {ya.shape})")
    keep = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[keep], ya[keep]
    n = int(keep.sum())
    cell: dict[str, Any] = {c: math.nan for c in CORRELATION_COLUMNS}
    cell.update(n=n, n_boot=n_boot, n_boot_valid=0, reason="")
    if n < min_n:
        cell["reason"] = f"n={n} < min_n={min_n}"
        return cell
    constant = [name for name, v in ((x_name, xa), (y_name, ya)) if _is_constant(v)]
    if constant:
        cell["reason"] = f"constant {' and '.join(constant)}"
        return cell
    pearson_r, pearson_p = pearson(xa, ya)
    spearman_rho, spearman_p = spearman(xa, ya)
    cell.update(
        pearson_r=pearson_r, pearson_p=pearson_p, spearman_rho=spearman_rho, spearman_p=spearman_p
    )
    if n_boot:
        boot_r, boot_rho = bootstrap_correlations(xa, ya, n_boot=n_boot, seed=seed)
        cell["pearson_ci_low"], cell["pearson_ci_high"] = percentile_ci(boot_r, confidence)
        cell["spearman_ci_low"], cell["spearman_ci_high"] = percentile_ci(boot_rho, confidence)
        cell["n_boot_valid"] = int(np.isfinite(boot_r).sum())
    return cell


def correlation_table(
    df: pd.DataFrame,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    min_n: int = DEFAULT_MIN_N,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """One row per (row, col) pair of columns of ``df``, in the given order (see correlation_cell).

    Missing values are dropped pairwise, so ``n`` may differ from cell to cell.
    """
    absent = [c for c in [*rows, *cols] if c not in df.columns]
    if absent:
        raise KeyError(f"columns {absent} not in the frame (has {list(df.columns)})")
    records = []
    for row in rows:
        for col in cols:
            cell = correlation_cell(
                df[col].to_numpy(dtype=float),
                df[row].to_numpy(dtype=float),
                min_n=min_n,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                x_name=col,
                y_name=row,
            )
            cell.update(row=row, col=col)
            records.append(cell)
    return pd.DataFrame.from_records(records, columns=list(CORRELATION_COLUMNS))


def _finite_for_interval(
    values: Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, tuple[int, float, float, float] | None]:
    """The finite values, and the (n, mean, low, high) to return at once when they are too few
    for an interval: none (0, NaN, NaN, NaN) or one (1, the value, NaN, NaN)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    n = int(arr.size)
    if n == 0:
        return arr, (0, math.nan, math.nan, math.nan)
    if n < 2:
        return arr, (n, float(arr.mean()), math.nan, math.nan)
    return arr, None


def mean_ci(
    values: Sequence[float] | np.ndarray, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[int, float, float, float]:
    """(n, mean, low, high): Student-t interval of the mean of the finite values.

    Not for a bounded score's printed interval: it can leave the range (``bootstrap_mean_ci``).

    The interval is NaN below two values, and collapses to the mean when all values agree.
    """
    arr, too_few = _finite_for_interval(values)
    if too_few is not None:
        return too_few
    n, mean = int(arr.size), float(arr.mean())
    sem = float(arr.std(ddof=1)) / math.sqrt(n)
    if sem == 0:
        return n, mean, mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1)) * sem
    return n, mean, mean - half, mean + half


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray,
    confidence: float = DEFAULT_CONFIDENCE,
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    bounds: tuple[float, float] | None = None,
) -> tuple[int, float, float, float]:
    """(n, mean, low, high): seeded percentile-bootstrap interval of the mean of the finite values.

    Every resampled mean lies between the smallest and the largest value, so the interval stays
    in the score's range; ``bounds`` (a range, e.g. ``(0, 1)``) also clips it. NaN below two
    values; the mean itself when all agree.
    """
    arr, too_few = _finite_for_interval(values)
    if too_few is not None:
        return too_few
    n, mean = int(arr.size), float(arr.mean())
    if _is_constant(arr):
        return n, mean, mean, mean
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    for start in range(0, n_boot, _BLOCK):
        size = min(_BLOCK, n_boot - start)
        means[start : start + size] = arr[rng.integers(0, n, size=(size, n))].mean(axis=1)
    low, high = percentile_ci(means, confidence)
    if bounds is not None:
        low, high = (float(np.clip(v, *bounds)) for v in (low, high))
    return n, mean, low, high


def wilson_ci(
    successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """Wilson score interval of the share ``successes / n``, within [0, 1] (NaN when n = 0)."""
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_ci: {successes} successes out of {n}")
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    share = successes / n
    denom = 1.0 + z * z / n
    centre = (share + z * z / (2 * n)) / denom
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def range_fraction(values: Sequence[float] | np.ndarray, lo: float = 0.0, hi: float = 1.0) -> float:
    """Share of the metric's range [lo, hi] that the finite values span: (max - min) / (hi - lo)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return math.nan
    return float((arr.max() - arr.min()) / (hi - lo))


def bin_edges(
    x: Sequence[float] | np.ndarray,
    *,
    n_bins: int = 10,
    min_bin_size: int = 5,
    binning: str = "quantile",
) -> np.ndarray:
    """Edges for binning ``x``: at most ``n_bins`` bins, on average ``min_bin_size`` values each.

    ``quantile`` bins hold about equally many pairs (stable end-bin means, which the gain reads);
    ``width`` bins split the observed range equally, as a histogram would. Tied quantiles merge
    bins, so fewer may come back. Fewer than two bins possible: an empty array.
    """
    if binning not in ("quantile", "width"):
        raise ValueError(f"binning must be 'quantile' or 'width', got {binning!r}")
    arr = np.asarray(x, dtype=float)
    arr = arr[np.isfinite(arr)]
    k = min(n_bins, arr.size // max(min_bin_size, 1))
    if k < 2 or _is_constant(arr):
        return np.array([])
    if binning == "quantile":
        edges = np.unique(np.quantile(arr, np.linspace(0, 1, k + 1)))
    else:
        edges = np.linspace(arr.min(), arr.max(), k + 1)
    return edges if len(edges) >= 3 else np.array([])


def _bin_of(xs: np.ndarray, edges: np.ndarray) -> np.ndarray:
    # searchsorted on the inner edges keeps every finite x, including the maximum, in a bin.
    return np.searchsorted(edges[1:-1], xs, side="right")


def binned_means(
    df: pd.DataFrame,
    x: str,
    ys: Sequence[str],
    *,
    n_bins: int = 10,
    min_bin_size: int = 5,
    binning: str = "quantile",
    confidence: float = DEFAULT_CONFIDENCE,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean of each ``ys`` column (with its percentile-bootstrap interval, within the indicator's
    [0, 1] range) per bin of ``x``; one row per (y, bin).

    The edges come from every pair with a finite ``x``, so all indicators share the same bins;
    a pair whose indicator is NaN only leaves that indicator's bin mean. Bins are closed on the
    left, the last one on both sides.
    """
    columns = ["y", "bin", "x_low", "x_high", "x_mean", "n", "mean", "ci_low", "ci_high"]
    xs = df[x].to_numpy(dtype=float)
    edges = bin_edges(xs, n_bins=n_bins, min_bin_size=min_bin_size, binning=binning)
    if edges.size == 0:
        return pd.DataFrame(columns=columns)
    which = _bin_of(xs, edges)
    records = []
    for y in ys:
        values = df[y].to_numpy(dtype=float)
        for b in range(len(edges) - 1):
            mask = np.isfinite(xs) & (which == b) & np.isfinite(values)
            n, mean, low, high = bootstrap_mean_ci(
                values[mask], confidence, n_boot=n_boot, seed=seed
            )
            records.append(
                {
                    "y": y,
                    "bin": b,
                    "x_low": float(edges[b]),
                    "x_high": float(edges[b + 1]),
                    "x_mean": float(xs[mask].mean()) if n else math.nan,
                    "n": n,
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return pd.DataFrame.from_records(records, columns=columns)


def binned_series(df: pd.DataFrame, x: str, ys: Sequence[str], bins: pd.DataFrame) -> pd.DataFrame:
    """:func:`binned_means` side by side: one row per bin, one column per indicator's bin mean.

    The shape ``dvc plots`` draws as one line per column (it cannot split a column by the values
    of another). ``x`` is the mean of ``x`` over every pair in the bin (``n`` of them), the
    ``ys`` columns are their bin means in ``bins`` (NaN where the bin has no value). Empty
    ``bins`` (too few pairs to bin) give a frame with the columns and no row.
    """
    columns = ["bin", "x_low", "x_high", "n", x, *ys]
    if bins.empty:
        return pd.DataFrame(columns=columns)
    first = bins[bins["y"] == bins["y"].iloc[0]].sort_values("bin")
    edges = np.append(first["x_low"].to_numpy(dtype=float), first["x_high"].iloc[-1])
    xs = df[x].to_numpy(dtype=float)
    finite = np.isfinite(xs)
    which = _bin_of(xs, edges)
    records = []
    for row in first.itertuples():
        in_bin = xs[finite & (which == row.bin)]
        record = {"bin": row.bin, "x_low": row.x_low, "x_high": row.x_high, "n": in_bin.size}
        record[x] = float(in_bin.mean()) if in_bin.size else math.nan
        for y in ys:
            match = bins[(bins["y"] == y) & (bins["bin"] == row.bin)]["mean"]
            record[y] = float(match.iloc[0]) if len(match) else math.nan
        records.append(record)
    return pd.DataFrame.from_records(records, columns=columns)


# The rule for a min-to-max gain (Figure 7, section 5): a ratio to the bottom bin's mean means
# something only when that mean rests on enough pairs and is not near 0 (a mean of 0.01 turns any
# rise into +1000 %). Both end bins need GAIN_MIN_PAIRS pairs and the bottom mean must be at least
# GAIN_MIN_BASE on the indicators' [0, 1] scale; otherwise the gain is n/a with the reason.
GAIN_MIN_PAIRS = 5
GAIN_MIN_BASE = 0.05


def min_max_gains(
    bins: pd.DataFrame,
    ys: Sequence[str] | None = None,
    *,
    min_pairs: int = GAIN_MIN_PAIRS,
    min_base: float = GAIN_MIN_BASE,
) -> dict[str, dict[str, Any]]:
    """Per indicator: gain from the lowest to the highest bin, as the paper reports it (section 5).

    ``gain_pct = (mean in the top bin - mean in the bottom bin) / mean in the bottom bin * 100``,
    the relative improvement "when comparing readings at minimum and maximum" semantic
    independence. The end bins are the lowest and highest bins that hold at least one pair. The
    gain is NaN, with a reason, without two such bins, when an end bin holds fewer than
    ``min_pairs`` pairs, or when the bottom mean is below ``min_base`` (the rule above).
    """
    out: dict[str, dict[str, Any]] = {}
    names = list(ys) if ys is not None else list(dict.fromkeys(bins["y"]))
    for y in names:
        rows = bins[(bins["y"] == y) & (bins["n"] > 0)].sort_values("bin")
        entry: dict[str, Any] = {
            "gain_pct": math.nan,
            "bottom_mean": math.nan,
            "top_mean": math.nan,
            "n_bottom": 0,
            "n_top": 0,
            "reason": "",
        }
        if len(rows) < 2:
            entry["reason"] = "fewer than two populated bins"
            out[y] = entry
            continue
        bottom, top = rows.iloc[0], rows.iloc[-1]
        entry.update(
            bottom_mean=float(bottom["mean"]),
            top_mean=float(top["mean"]),
            n_bottom=int(bottom["n"]),
            n_top=int(top["n"]),
        )
        if min(entry["n_bottom"], entry["n_top"]) < min_pairs:
            entry["reason"] = f"end bin n<{min_pairs}"
        elif bottom["mean"] == 0:
            entry["reason"] = "bottom-bin mean is 0"
        elif abs(float(bottom["mean"])) < min_base:
            entry["reason"] = f"bottom-bin mean {float(bottom['mean']):.3f} < {min_base:g}"
        else:
            entry["gain_pct"] = float((top["mean"] - bottom["mean"]) / bottom["mean"] * 100.0)
        out[y] = entry
    return out


def finite_or_none(value: Any) -> Any:
    """JSON-safe value: NaN and infinities become None (JSON has no NaN), numpy numbers Python
    ones; mappings (with string keys) and lists or tuples (as lists) are converted throughout."""
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(v) for v in value]
    return value
