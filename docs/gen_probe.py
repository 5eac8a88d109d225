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

PROBE_MARKER = "<!-- gen_results: probe questions against the real questions -->"
LLM_TAU = "llm_writer_tau["
MEASURE_WORDS = {
    "recall@5": "recall@5",
    "iou@5": "IoU@5",
    "budget_recall@1000": "budget 1 k",
    "budget_recall@2500": "budget 2.5 k",
    "budget_recall@5000": "budget 5 k",
}


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


def _measures(record: dict[str, Any]) -> list[str]:
    settings = record.get("settings") or {}
    k = settings.get("k", 5)
    return [f"recall@{k}", f"iou@{k}", *(f"budget_recall@{b}" for b in settings.get("budgets", []))]


def _target(record: dict[str, Any], measure: str) -> str:
    targets = record.get("targets") or {}
    value = targets.get(measure.split("@")[0])  # recall@5 -> recall, budget_recall@1000 -> ...
    return "–" if value is None else f"≥ {value:.1f}"


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
    rows.append(["target", *(_target(record, m) for m in measures)])
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


def _spread(cell: dict[str, Any] | None, spec: str = "+.2f") -> str:
    """A median over question seeds with its range."""
    if not cell or cell.get("median") is None:
        return "–"
    return (
        f"{format(cell['median'], spec)} [{format(cell['min'], spec)}, {format(cell['max'], spec)}]"
    )


def seeds_section(record: dict[str, Any], measures: list[str]) -> list[str]:
    """The code writers' τ and pair agreement over question seeds (section ``question_seeds``):
    pooled median and range per writer and measure, the targets judged on the medians, and each
    corpus's median τ."""
    section = record.get("question_seeds") or {}
    writers = section.get("writers") or {}
    if not writers:
        return []
    seeds = section.get("seeds") or []
    header = [MEASURE_WORDS.get(m, m) for m in measures]
    pooled_rows, corpus_rows = [], []
    for writer, cells in writers.items():
        for label, key, met, spec in (
            ("τ", "pooled_tau", "tau_met", "+.2f"),
            ("pairs agreeing", "pooled_agreement", "agreement_met", ".0%"),
        ):
            row = [f"{writer}: {label}"]
            for m in measures:
                cell = cells.get(m) or {}
                verdict = "" if not cell.get(key) else " (met)" if cell.get(met) else " (missed)"
                row.append(_spread(cell.get(key), spec) + verdict)
            pooled_rows.append(row)
        for corpus in section.get("corpora") or []:
            corpus_rows.append(
                [
                    corpus,
                    writer,
                    *(
                        _spread(((cells.get(m) or {}).get("corpus_tau") or {}).get(corpus))
                        for m in measures
                    ),
                ]
            )
    pooled_rows.append(["target (τ; pairs ≥ 90 %)", *(_target(record, m) for m in measures)])
    commit = ((section.get("provenance") or {}).get("commit") or "")[:10]
    return [
        f"**Over question draws** (section `question_seeds`, commit `{commit}`): the code "
        f"writers rerun with question seeds {', '.join(str(s) for s in seeds)}, every other "
        "setting as in the other tables (each of which is seed "
        f"{(record.get('settings') or {}).get('seed', 0)}'s draw). Each cell: the median over "
        "the seeds, pooled as above, with the range in brackets; the targets are judged on the "
        "medians.",
        "",
        *markdown_table(["writer", *header], pooled_rows),
        "Per corpus (median τ over the seeds, range in brackets):",
        "",
        *markdown_table(["corpus", "writer", *header], corpus_rows),
    ]


def default_choice_section(record: dict[str, Any]) -> list[str]:
    """How the default writer was chosen (section ``question_seeds``, ``default_choice``): per code
    writer, the measures whose median pair agreement meets the target, the mean median τ and the
    pairs agreeing over seeds, in the rule's order, and whether the code's default is the choice."""
    choice = (record.get("question_seeds") or {}).get("default_choice") or {}
    summary = choice.get("writers") or {}
    if not summary:
        return []
    rows = []
    for writer in choice.get("ranked") or list(summary):
        cell = summary[writer]
        pairs = cell.get("pairs_over_seeds") or {}
        tau = cell.get("mean_median_tau")
        rows.append(
            [
                f"`{writer}`" + (" (chosen)" if writer == choice.get("chosen") else ""),
                f"{cell.get('measures_agreement_met')} of {cell.get('measures')}",
                "–" if tau is None else format(tau, "+.3f"),
                f"{pairs.get('agreeing')}/{pairs.get('pairs')}",
            ]
        )
    default = choice.get("default_writer")
    verdict = (
        "is this choice"
        if choice.get("default_is_chosen")
        else f"was `{default}` when the record was written, not this choice"
    )
    return [
        f"**The default writer.** Rule: {choice.get('rule')}. The code's default "
        f"(`hope.probe.DEFAULT_WRITER`) {verdict}.",
        "",
        *markdown_table(
            [
                "writer",
                "measures with pairs agreeing to the target",
                "mean of the median τ",
                "pairs agreeing, all seeds",
            ],
            rows,
        ),
    ]


def reading_guide(record: dict[str, Any]) -> list[str]:
    """How far a probe ranking can be read, by measure: for the default writer (the record's
    ``default_choice``; in an older record, the first writer of the seed spread), the measures
    whose median τ over question draws meets its target and those that miss, with the real
    questions' own ceiling beside the weakest, and the measures on which the pairs the real
    questions separate are ordered alike to the target (τ also counts the pairs they hardly
    separate)."""
    section = record.get("question_seeds") or {}
    writers = section.get("writers") or {}
    if not writers:
        return []
    chosen = (section.get("default_choice") or {}).get("chosen")
    writer = chosen if chosen in writers else next(iter(writers))
    cells = writers[writer]
    found = {m: cells[m] for m in _measures(record) if (cells.get(m) or {}).get("pooled_tau")}
    if not found:
        return []

    def median(m: str, key: str) -> float | None:
        return (found[m].get(key) or {}).get("median")

    def words(names: list[str], key: str, spec: str) -> str:
        return ", ".join(
            f"{MEASURE_WORDS.get(m, m)} ({format(median(m, key), spec)})"
            for m in names
            if median(m, key) is not None
        )

    met = [m for m in found if found[m].get("tau_met")]
    missed = sorted((m for m in found if m not in met), key=lambda m: -(median(m, "pooled_tau")))
    text = (
        f"**How far a probe ranking can be read.** Over {len(section.get('seeds') or [])} "
        f"question draws (`{writer}`, pooled medians), the whole ranking follows the real "
        f"questions' to the target for {words(met, 'pooled_tau', '+.2f') or 'no measure'}"
    )
    if missed:
        weakest = missed[-1]
        ceiling = ((record.get("pooled_noise_ceiling") or {}).get(weakest) or {}).get("median")
        text += f" and falls short for {words(missed, 'pooled_tau', '+.2f')}"
        if ceiling is not None:
            text += (
                f" (for {MEASURE_WORDS.get(weakest, weakest)} the real questions follow a "
                f"resample of themselves only to {ceiling:+.2f})"
            )
    text += "."
    pairs_met = [m for m in found if found[m].get("agreement_met")]
    pairs_missed = [m for m in found if m not in pairs_met]
    target = (record.get("targets") or {}).get("agreement")
    if pairs_met and target is not None:
        text += (
            " The chunker pairs that the real questions separate significantly are ordered alike "
            f"to the target (≥ {target:.0%}) for {words(pairs_met, 'pooled_agreement', '.0%')}"
        )
        if pairs_missed:
            text += f", not for {words(pairs_missed, 'pooled_agreement', '.0%')}"
        text += (
            ": τ is lower than that because it also counts pairs of chunkers the real questions "
            "hardly tell apart. So a probe ranking is worth most where chunkers differ clearly; "
            "read the order of chunkers whose intervals overlap as undecided, and give least "
            "weight to a measure that misses both targets."
        )
    return [text, ""]


def probe_section(record: dict[str, Any] | None) -> list[str]:
    if not record:
        return figures_owed("probe", "make bench-probe")
    measures = _measures(record)
    header = [MEASURE_WORDS.get(m, m) for m in measures]
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
        *reading_guide(record),
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
