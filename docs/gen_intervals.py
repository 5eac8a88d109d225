"""The labelled page's section on whether the τ intervals cover the true τ, generated from
``bench/results/tau_intervals.json`` by ``gen_results.py``: per simulated cell, the coverage of
the benchmark's percentile interval and of a bias-corrected one, with their Wilson intervals, and
one sentence read off the cells; then, from ``bench/results/labelled.json``, the noise ratio of
each real corpus's labelled targets, so that a reader knows which rows apply. A missing record
gives a "Figures owed" note.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gen_markdown import TARGET_WORDS, figures_owed, markdown_table, short_commit

INTERVALS_MARKER = "<!-- gen_results: coverage of the tau intervals -->"
METHODS = {"percentile": "percentile (the benchmark's)", "bias_corrected": "bias-corrected"}


def _coverage(cell: dict[str, Any]) -> str:
    low, high = cell.get("coverage_wilson_95") or (None, None)
    text = f"{cell['coverage']:.3f}"
    return text + (f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else "")


def _below(cells: list[dict[str, Any]], method: str, nominal: float) -> list[dict[str, Any]]:
    """The cells whose Wilson interval for ``method``'s coverage lies wholly below nominal."""
    return [c for c in cells if (c[method].get("coverage_wilson_95") or [1, 1])[1] < nominal]


def intervals_section(
    record: dict[str, Any] | None, labelled: dict[str, Any] | None = None
) -> list[str]:
    if not record:
        return figures_owed("tau_intervals", "make bench-tau-intervals")
    settings = record.get("settings") or {}
    cells = record.get("cells") or []
    nominal = float(settings.get("confidence", 0.95))
    lines = [
        f"From `bench/results/tau_intervals.json` (commit `{short_commit(record)}`): "
        f"{settings.get('chunkers')} chunkers, {settings.get('questions')} questions and "
        f"{settings.get('items')} items per chunking, {settings.get('resamples')} replicates, "
        f"{settings.get('repetitions')} simulated corpora per row. `se ratio`: a chunker mean's "
        "standard error over the gap between neighbouring true means. Coverage: the share of "
        f"corpora whose {nominal * 100:.0f} % interval holds the true τ, with its Wilson "
        "interval.",
        "",
    ]
    rows = [
        [
            str(c.get("target", "?")).split(" (")[0],
            f"{c['true_tau']:+.2f}",
            f"{c['se_ratio']:g}",
            f"{c['median_estimate']:+.2f}",
            *(_coverage(c[m]) for m in METHODS),
            f"{c['percentile']['median_width']:.2f}",
        ]
        for c in cells
    ]
    header = ["target", "true τ", "se ratio", "median estimate", *METHODS.values(), "width"]
    lines += markdown_table(header, rows)
    if not cells:
        return lines
    short = {m: len(_below(cells, m, nominal)) for m in METHODS}
    if short["percentile"] == short["bias_corrected"]:
        verdict = "both fall short in as many rows."
    else:
        fewer = min(METHODS, key=lambda m: short[m])
        verdict = f"the {METHODS[fewer].split(' (')[0]} interval falls short in fewer rows."
    lines += [
        f"The percentile interval covers the true τ significantly less often than "
        f"{nominal * 100:.0f} % (its Wilson interval wholly below) in {short['percentile']} of "
        f"{len(cells)} rows, the bias-corrected one in {short['bias_corrected']}: {verdict}"
        + "".join(f" {_worst(cells, m)}" for m in METHODS),
        "",
    ]
    return lines + noise_ratio_lines(labelled)


def noise_ratio(per_chunker: list[list[float]]) -> float | None:
    """A labelled target's noise ratio in the simulation's terms, from its per-question values
    (chunkers x questions): the median standard error of a chunker's mean once each question's
    mean over the chunkers is taken out (the share every chunker has, which moves no τ), scaled
    by sqrt(k / (k - 1)) for what that removal takes from each chunker's own noise, over the
    median gap between neighbouring chunker means. None below 3 chunkers or 2 questions."""
    values = np.array(per_chunker, dtype=float)
    if values.ndim != 2 or values.shape[0] < 3:
        return None
    values = values[:, np.isfinite(values).all(axis=0)]
    k, n = values.shape
    if n < 2:
        return None
    residuals = values - values.mean(axis=0, keepdims=True)
    se = residuals.std(axis=1, ddof=1) / np.sqrt(n) * np.sqrt(k / (k - 1))
    gap = float(np.median(np.diff(np.sort(values.mean(axis=1)))))
    return float(np.median(se)) / gap if gap > 0 else None


def noise_ratio_lines(labelled: dict[str, Any] | None) -> list[str]:
    """Each labelled corpus's noise ratio per target (rows: corpora), from the labelled record."""
    corpora = (labelled or {}).get("corpora") or {}
    rows = []
    for corpus, entry in corpora.items():
        chunkers = [c for c in (entry.get("chunkers") or {}).values() if c.get("per_question")]
        ratios = [
            noise_ratio([c["per_question"].get(t) or [] for c in chunkers]) for t in TARGET_WORDS
        ]
        rows.append([corpus, *("–" if r is None else f"{r:.2f}" for r in ratios)])
    if not rows:
        return []
    return [
        f"Which rows apply: the noise ratio of the labelled targets on each corpus of "
        f"`bench/results/labelled.json` (commit `{short_commit(labelled)}`), in the simulation's "
        "terms: the median standard error of a chunker's mean, with each question's mean over "
        "the chunkers taken out, over the median gap between neighbouring chunker means. The "
        "label-free side has its own noise, which the benchmark's one focus passage per "
        "chunking cannot measure.",
        "",
        *markdown_table(["corpus", *TARGET_WORDS.values()], rows),
    ]


def _worst(cells: list[dict[str, Any]], method: str) -> str:
    """The row where ``method`` covers least, in words."""
    cell = min(cells, key=lambda c: c[method]["coverage"])
    return (
        f"The {METHODS[method].split(' (')[0]} interval's lowest coverage is "
        f"{cell[method]['coverage']:.3f}, at true τ {cell['true_tau']:+.2f} and se ratio "
        f"{cell['se_ratio']:g} with a {str(cell.get('target', '?')).split(' (')[0]} target, where "
        f"the median estimate is {cell['median_estimate']:+.2f}."
    )
