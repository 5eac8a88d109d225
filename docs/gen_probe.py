"""The probe page's section on how closely probe questions follow real ones, generated from
``bench/results/probe.json`` by ``gen_results.py``: per writer (the code writers and each measured
LLM writer), pooled over corpora and per corpus, Kendall τ between the chunkers' ranking on the
probe questions and on the real questions, with its interval and the significant-pair agreement,
beside the passage-count baseline, HOPE and the real questions' own noise ceiling, against the
targets of issue 32; then what each writer cost.

A missing record gives a "Figures owed" note naming the make target that writes it.
"""

from __future__ import annotations

from typing import Any

from gen_markdown import figures_owed, markdown_table, short_commit
from gen_probe_ceiling import perfect_probe_reading, perfect_probe_section
from gen_probe_seeds import (
    MEASURE_WORDS,
    default_choice_section,
    held_out_section,
    measures_of,
    reading_guide,
    seeds_section,
    target_text,
)

PROBE_MARKER = "<!-- gen_results: probe questions against the real questions -->"
LLM_TAU = "llm_writer_tau["


def _tau(cell: dict[str, Any] | None, interval: bool = True) -> str:
    """τ, its interval where asked and known, and the significant pairs ordered alike."""
    if not cell or cell.get("tau") is None:
        return "–"
    text = format(cell["tau"], "+.2f")
    if interval and cell.get("low") is not None and cell.get("high") is not None:
        text += f" [{cell['low']:+.2f}, {cell['high']:+.2f}]"
    if cell.get("pairs"):
        text += f" · {cell.get('agreeing')}/{cell['pairs']}"
    return text


def _ceiling(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("median") is None:
        return "–"
    return f"{cell['median']:+.2f} [{cell['low']:+.2f}, {cell['high']:+.2f}]"


def _llm_sections(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``llm_writer_tau[<writer>@<model>]`` sections by row label (writer and model)."""
    found = {}
    for key, section in record.items():
        if key.startswith(LLM_TAU) and isinstance(section, dict) and section.get("corpora"):
            found[f"{section.get('writer')} ({_model_name(key, section.get('model'))})"] = section
    return found


def _model_name(key: str, identity: Any) -> str:
    """The model a section measured: the name its key carries (``...[<writer>@<model>]``), else
    (a record written before keys named the model) the file named in its identity."""
    named = key.partition("@")[2].rstrip("]")
    return named or (str(identity or "?").split(":")[-2:-1] or ["?"])[0]


def _pooled_rows(record: dict[str, Any], measures: list[str]) -> list[list[str]]:
    pooled = record.get("pooled") or {}
    n = len(record.get("corpora") or {})
    rows = []
    for writer in (record.get("settings") or {}).get("writers", []):
        cells = pooled.get(writer) or {}
        rows.append([f"{writer} ({n} corpora)", *(_tau(cells.get(m)) for m in measures)])
    for label, section in _llm_sections(record).items():
        cells = section.get("pooled") or {}
        count = len(section.get("corpora") or {})
        rows.append([f"{label} ({count} corpora)", *(_tau(cells.get(m)) for m in measures)])
    baseline = pooled.get("passage_count") or {}
    rows.append(["passage count (baseline)", *(_tau(baseline.get(m)) for m in measures)])
    ceiling = record.get("pooled_noise_ceiling") or {}
    rows.append(["real questions' noise ceiling", *(_ceiling(ceiling.get(m)) for m in measures)])
    rows.append(["target", *(target_text(record, m) for m in measures)])
    return rows


def _corpus_rows(record: dict[str, Any], measures: list[str]) -> list[list[str]]:
    def taus(cells: dict[str, Any]) -> list[str]:
        return [_tau(cells.get(m), interval=False) for m in measures]

    llm = _llm_sections(record)
    rows = []
    for corpus, block in (record.get("corpora") or {}).items():
        compared = {w: e.get("compared") or {} for w, e in (block.get("writers") or {}).items()}
        for label, section in llm.items():
            entry = (section.get("corpora") or {}).get(corpus)
            if entry:
                compared[label] = entry.get("compared") or {}
        compared["passage count"] = block.get("passage_count") or {}
        compared["HOPE"] = block.get("hope") or {}
        rows += [[corpus, label, *taus(cells)] for label, cells in compared.items()]
        ceiling = block.get("noise_ceiling") or {}
        medians = ["–" if not ceiling.get(m) else f"{ceiling[m]['median']:+.2f}" for m in measures]
        rows.append([corpus, "noise ceiling", *medians])
    return rows


def _cost_rows(record: dict[str, Any]) -> list[list[str]]:
    """Per writer and corpus: questions written of those asked for, and what writing them cost."""
    rows = []
    for corpus, block in (record.get("corpora") or {}).items():
        for writer, entry in (block.get("writers") or {}).items():
            probe = entry.get("probe") or {}
            timing = entry.get("timing_s") or {}
            own = timing.get("probe_own") or {}
            seconds = (
                f"{own['median']:.1f} s (median of {own.get('n')})"
                if own.get("median") is not None
                else f"{timing['probe_own_queries_cached']:.1f} s (query vectors cached)"
                if timing.get("probe_own_queries_cached") is not None
                else "–"
            )
            written = f"{probe.get('written')} of {probe.get('requested')}"
            rows.append([corpus, writer, written, "0", seconds])
        for label, section in _llm_sections(record).items():
            entry = (section.get("corpora") or {}).get(corpus)
            if not entry:
                continue
            probe = entry.get("probe") or {}
            rows.append(
                [
                    corpus,
                    label,
                    f"{probe.get('written')} of {probe.get('requested')}",
                    str(entry.get("requests")),
                    f"{entry.get('seconds')} s ({entry.get('requests_sent')} of "
                    f"{entry.get('requests')} requests sent in this run, the others answered "
                    "from the cache)",
                ]
            )
    return rows


def _per_request(record: dict[str, Any]) -> list[str]:
    """The LLM writers' measured seconds per request (the record's ``llm_writer*`` sections)."""
    lines = []
    for key, section in record.items():
        if not key.startswith("llm_writer") or key.startswith(LLM_TAU):
            continue
        for model, entry in (section or {}).items():
            per = (entry or {}).get("seconds_per_request") if isinstance(entry, dict) else None
            if not per or per.get("median") is None:
                continue
            # keys: llm_writer[<writer>@<model>], or older llm_writer[<writer>], llm_writer
            writer = key.partition("[")[2].rstrip("]").partition("@")[0] or "llm"
            name = _model_name(key, entry.get("model") or model)
            lines.append(
                f"- `{writer}` with {name}: {per['median']:.2f} s per request "
                f"(median of {per.get('n')}, {per.get('min')}–{per.get('max')} s), "
                f"section `{key}`."
            )
    return lines


def probe_section(record: dict[str, Any] | None) -> list[str]:
    if not record:
        return figures_owed("probe", "make bench-probe")
    measures = measures_of(record)
    header = [MEASURE_WORDS.get(m, m) for m in measures]
    guide = reading_guide(record)
    if guide:
        guide[0] += perfect_probe_reading(record)
    lines = [
        f"From `bench/results/probe.json` (commit `{short_commit(record)}`; LLM writers' sections "
        "with their own commits, in the record). Each cell: Kendall τ across the chunkers between "
        "the ranking on the probe questions and on the real questions, its 95 % bootstrap interval "
        "(pooled rows), and the real questions' significant pairs that the probe orders alike "
        "(agreeing/pairs). The noise ceiling is how well a resample of the real questions follows "
        "all of them: context, not a target. A bootstrap replicate resamples the questions of "
        "both sides, which adds noise to both rankings and pulls its τ toward 0; a point τ near "
        "the top can therefore sit above its percentile interval.",
        "",
        "**Pooled** (mean of the corpora's τ; pairs summed)",
        "",
        *markdown_table(["writer", *header], _pooled_rows(record, measures)),
        *seeds_section(record, measures),
        *default_choice_section(record),
        *held_out_section(record),
        *guide,
        *perfect_probe_section(record),
        "**Per corpus** (τ · agreeing/pairs)",
        "",
        *markdown_table(["corpus", "writer", *header], _corpus_rows(record, measures)),
        "**What each writer cost** (writing, filtering, retrieval and measures; the chunkings' "
        "passages already embedded)",
        "",
        *markdown_table(
            ["corpus", "writer", "questions written", "LLM requests", "time"],
            _cost_rows(record),
        ),
    ]
    per_request = _per_request(record)
    if per_request:
        lines += ["Measured LLM speed on this machine:", "", *per_request, ""]
    return lines


__all__ = ["PROBE_MARKER", "probe_section"]
