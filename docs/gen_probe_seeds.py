"""The probe page's tables over question seeds, generated from the section ``question_seeds`` of
``bench/results/probe.json``: each code writer's τ and pair agreement over seeds, how the default
writer was chosen, what that choice keeps on a corpus left out of it, and how far a probe ranking
can be read (``gen_probe.py`` places them on the page).
"""

from __future__ import annotations

from typing import Any

from gen_markdown import markdown_table

MEASURE_WORDS = {
    "recall@5": "recall@5",
    "iou@5": "IoU@5",
    "budget_recall@1000": "budget 1 k",
    "budget_recall@2500": "budget 2.5 k",
    "budget_recall@5000": "budget 5 k",
}


def measures_of(record: dict[str, Any]) -> list[str]:
    settings = record.get("settings") or {}
    k = settings.get("k", 5)
    return [f"recall@{k}", f"iou@{k}", *(f"budget_recall@{b}" for b in settings.get("budgets", []))]


def target_text(record: dict[str, Any], measure: str) -> str:
    targets = record.get("targets") or {}
    value = targets.get(measure.split("@")[0])  # recall@5 -> recall, budget_recall@1000 -> ...
    return "–" if value is None else f"≥ {value:.1f}"


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
    pooled_rows.append(["target (τ; pairs ≥ 90 %)", *(target_text(record, m) for m in measures)])
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
    found = {m: cells[m] for m in measures_of(record) if (cells.get(m) or {}).get("pooled_tau")}
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
    text += held_out_reading(section)
    return [text, ""]


def held_out_reading(section: dict[str, Any]) -> str:
    """The reading guide's last sentence: which measures still meet both targets on a corpus the
    writer's choice did not see (``held_out``), the figures a new corpus should expect."""
    held = section.get("held_out") or {}
    taus = held.get("tau_held_out") or {}
    met = held.get("targets_met_held_out") or {}
    if not taus or not met:
        return ""

    def listed(names: list[str]) -> str:
        return ", ".join(f"{MEASURE_WORDS.get(m, m)} ({taus[m]:+.2f})" for m in names)

    found = [m for m in taus if taus[m] is not None and m in met]
    kept = [m for m in found if met[m].get("tau_met") and met[m].get("agreement_met")]
    lost = [m for m in found if m not in kept]
    text = (
        f" On a corpus the choice did not see (each of the {held.get('corpora')} corpora left "
        "out in turn, the table above), the writer picked on the others meets both targets for "
        f"{listed(kept) or 'no measure'}"
    )
    if lost:
        text += f" and misses for {listed(lost)}"
    return text + ": on a corpus of your own, expect these rather than the figures above."


def held_out_section(record: dict[str, Any]) -> list[str]:
    """What the default-writer rule keeps on a corpus it did not see (section ``question_seeds``,
    ``held_out``): per corpus left out, the writer chosen on the others and its median τ and
    pairs there; then the mean τ held out beside the mean τ of the writer chosen on all corpora."""
    held = (record.get("question_seeds") or {}).get("held_out") or {}
    folds = held.get("folds") or {}
    if not folds:
        return []
    measures = measures_of(record)

    def figure(cell: dict[str, Any] | None) -> str:
        if not cell or cell.get("tau") is None:
            return "–"
        return f"{cell['tau']:+.2f} · {cell.get('agreeing')}/{cell.get('pairs')}"

    rows = [
        [corpus, f"`{fold.get('chosen')}`", *(figure(fold["on_left_out"].get(m)) for m in measures)]
        for corpus, fold in folds.items()
    ]

    def mean_row(label: str, which: str) -> list[str]:
        taus = held.get(f"tau_{which}") or {}
        pairs = held.get(f"pairs_{which}") or {}
        met = held.get(f"targets_met_{which}") or {}
        cells = []
        for m in measures:
            tau = taus.get(m)
            text = "–" if tau is None else f"{tau:+.2f}"
            if (pairs.get(m) or {}).get("pairs"):
                text += f" · {pairs[m]['agreeing']}/{pairs[m]['pairs']}"
            if m in met:
                both = met[m].get("tau_met") and met[m].get("agreement_met")
                text += " (met)" if both else " (missed)"
            cells.append(text)
        return [label, "", *cells]

    everywhere = held.get("chosen_on_all_corpora")
    rows.append(mean_row("mean, held out", "held_out"))
    rows.append(mean_row(f"mean, `{everywhere}` (chosen on all)", "all_corpora"))
    rows.append(["target (τ; pairs ≥ 90 %)", "", *(target_text(record, m) for m in measures)])
    header = ["corpus left out", "writer chosen on the others"]
    header += [MEASURE_WORDS.get(m, m) for m in measures]
    return [
        "**On a corpus the choice has not seen.** The targets will also be checked on a corpus "
        "outside the repository, and a writer chosen on these corpora is judged on the "
        "corpora it was chosen on. So each corpus is left out in turn: the rule above picks a "
        "writer on the others, and the table gives that writer's median τ over the question "
        "seeds on the corpus left out, with its significant pairs ordered alike (summed over the "
        f"seeds). {held.get('same_choice')} of {held.get('corpora')} picks are "
        f"`{everywhere}`, the writer chosen on all of them. The mean rows average the corpora's "
        "median τ (not the pooled median of the tables above); the gap between them is the "
        "optimism of choosing and judging on the same corpora; (met) needs τ and pairs both.",
        "",
        *markdown_table(header, rows),
    ]
