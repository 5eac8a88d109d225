"""The probe page's tables on what a perfect probe would score, generated from the section
``perfect_probe`` of ``bench/results/probe.json`` (``bench_probe.py --perfect-probe``): per measure
and corpus, how often a probe ranking the chunkers exactly as the real questions' population would
meet the τ target, and how that chance grows with a larger labelled set (``gen_probe.py`` places
them on the page).
"""

from __future__ import annotations

from typing import Any

from gen_markdown import markdown_table
from gen_probe_seeds import MEASURE_WORDS, measures_of


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _size_label(scale: str, sizes: dict[str, int]) -> str:
    counts = [n * int(scale) for n in sizes.values()]
    span = (
        "?"
        if not counts
        else str(counts[0])
        if min(counts) == max(counts)
        else (f"{min(counts)}–{max(counts)}")
    )
    times = "as many as the set has" if scale == "1" else f"{scale} × as many"
    return f"{times} ({span} per corpus)"


def perfect_probe_section(record: dict[str, Any]) -> list[str]:
    """Two tables: at the labelled set's size, each corpus's chance (and median τ) per measure,
    pooled and on every corpus and pooled at once; then, by labelled-set size, the chance of
    meeting each measure's target everywhere at once, and every measure's."""
    section = record.get("perfect_probe") or {}
    scales = section.get("scales") or {}
    at_size = scales.get("1") or {}
    by_measure = at_size.get("measures") or {}
    if not by_measure:
        return []
    measures = [m for m in measures_of(record) if m in by_measure] or list(by_measure)
    corpora = section.get("corpora") or []
    sizes = section.get("real_questions") or {}
    rows = []
    for m in measures:
        cell = by_measure[m]
        per_corpus = cell.get("corpora") or {}
        rows.append(
            [
                MEASURE_WORDS.get(m, m),
                f"≥ {cell.get('tau_target'):.1f}",
                *(
                    f"{_percent(per_corpus[c]['chance'])} ({per_corpus[c]['median_tau']:+.2f})"
                    if c in per_corpus and per_corpus[c].get("median_tau") is not None
                    else "–"
                    for c in corpora
                ),
                f"{_percent(cell['pooled']['chance'])} ({cell['pooled']['median_tau']:+.2f})",
                _percent(cell.get("every_corpus_and_pooled")),
            ]
        )
    rows.append(
        [
            "all measures at once",
            "",
            *("" for _ in corpora),
            "",
            _percent(at_size.get("all_measures")),
        ]
    )
    corpus_header = [f"{c} ({sizes.get(c, '?')} questions)" for c in corpora]
    size_rows = [
        [
            _size_label(scale, sizes),
            *(
                _percent(((odds.get("measures") or {}).get(m) or {}).get("every_corpus_and_pooled"))
                for m in measures
            ),
            _percent(odds.get("all_measures")),
        ]
        for scale, odds in scales.items()
    ]
    commit = ((section.get("provenance") or {}).get("commit") or "")[:10]
    return [
        f"**What a perfect probe would score** (section `perfect_probe`, commit `{commit}`). The "
        "real questions are a sample, so their ranking of the chunkers is the ranking of the "
        "population of such questions plus sampling noise. A probe that ranked the chunkers "
        "exactly as that population does would meet a τ target only where the noise happens to "
        "be small. By the bootstrap, its τ with the real questions is the τ between the real "
        f"questions' ranking on a resample of them and on all of them ({at_size.get('replicates')} "
        "resamples, the noise ceiling's). Each cell: the share of resamples in which that τ meets "
        "the target, with the median τ in brackets; the last column needs the target met on every "
        "corpus and pooled in the same draw. No real probe can expect more: its own questions are "
        "a sample too.",
        "",
        *markdown_table(
            ["measure", "τ target", *corpus_header, "pooled", "every corpus and pooled"], rows
        ),
        "By the size of the labelled set (resamples of that many questions, drawn with "
        "replacement from the real ones): the chance that a perfect probe meets each measure's "
        "τ target on every corpus and pooled at once, and every measure's.",
        "",
        *markdown_table(
            [
                "real questions",
                *(MEASURE_WORDS.get(m, m) for m in measures),
                "all measures",
            ],
            size_rows,
        ),
    ]


def perfect_probe_reading(record: dict[str, Any]) -> str:
    """One sentence for the reading guide: the chance that a perfect probe meets every τ target
    at the labelled set's size, and at the largest size measured."""
    scales = (record.get("perfect_probe") or {}).get("scales") or {}
    if "1" not in scales or scales["1"].get("all_measures") is None:
        return ""
    largest = max(scales, key=int)
    text = (
        " The labelled questions limit what any probe can show: a probe that ranked the chunkers "
        "exactly as their population does would meet every τ target on every corpus and pooled "
        f"in {_percent(scales['1']['all_measures'])} of draws of these questions"
    )
    if largest != "1":
        text += (
            f", and in {_percent(scales[largest].get('all_measures'))} with {largest} times as "
            "many (the tables below)"
        )
    return text + "."


__all__ = ["perfect_probe_reading", "perfect_probe_section"]
