"""The HOPE page's sections on sample size, generated from their records by ``gen_results.py``:

- "HOPE's precision by sample size" from ``bench/results/precision.json``: pooled over the
  corpora (when there are several) and per corpus, by size, the LLM requests, HOPE's standard
  error, Kendall τ with each labelled target and the number of significantly different chunker
  pairs, as tables and a figure (the curve of precision against requests, per corpus);
- the same on the sample experiment from ``bench/results/precision_sample.json`` (its full run
  at the paper's counts; no labels, so no τ): pooled over its documents, and per document;
- "Sequential sampling" from ``bench/results/sequential.json``: per workload and ε, the share of
  the full run's requests used and the agreement of the significant decisions, against the
  targets.

A missing record gives a "Figures owed" note naming the make target that writes it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

PRECISION_MARKER = "<!-- gen_results: HOPE's precision by sample size -->"
PRECISION_SAMPLE_MARKER = "<!-- gen_results: HOPE's precision on the sample experiment -->"
SEQUENTIAL_MARKER = "<!-- gen_results: the sequential rule against the full run -->"
PRECISION_FIGURE = "results/precision_curve.png"
PRECISION_SAMPLE_FIGURE = "results/precision_sample_curve.png"
TARGET_WORDS = {"budget_recall": "budget recall", "recall": "recall@k", "iou": "IoU@k"}


def _num(value: Any, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


def _range(cell: dict[str, Any] | None, spec: str = "+.2f") -> str:
    if not cell or cell.get("median") is None:
        return "–"
    middle = format(cell["median"], spec)
    if cell.get("low") is None or cell["low"] == cell["high"]:
        return middle
    return f"{middle} [{format(cell['low'], spec)}, {format(cell['high'], spec)}]"


def _commit(record: dict[str, Any]) -> str:
    return str((record.get("provenance") or {}).get("commit") or "?")[:10]


def _owed(record_name: str, target: str) -> list[str]:
    return [
        '!!! warning "Figures owed"',
        f"    there is no `bench/results/{record_name}.json`: the figures appear here once",
        f"    `{target}` has run and its record is committed.",
        "",
    ]


def markdown_table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    """A markdown table and the blank line after it (every generated page's tables)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _records(source: dict[str, Any]) -> str:
    """The items records a precision record drew from: "`path` (commit `abc`)", and each one's
    corpora where there are several."""
    records = source.get("records") or []
    named = [
        f"`{r.get('record', '?')}` (commit `{str(r.get('commit') or '?')[:10]}`"
        + (f"; {', '.join(r.get('corpora') or [])}" if len(records) > 1 else "")
        + ")"
        for r in records
    ]
    return " and ".join(named) or "?"


def precision_section(record: dict[str, Any] | None) -> list[str]:
    if not record:
        return _owed("precision", "make bench-precision")
    source = record.get("source") or {}
    settings = record.get("settings") or {}
    commit = _commit(record)
    size = source.get("hope_size") or {}
    lines = [
        f"From `bench/results/precision.json` (commit `{commit}`), drawn from the items of "
        f"{_records(source)}: {size.get('focus_passages')} focus passages and "
        f"{size.get('segments')} segments per chunking, {size.get('statements')} statements, "
        f"{size.get('questions')} question, profile `{settings.get('profile')}`. Size m is m "
        "focus passages per chunking and m "
        f"segments per corpus; each cell is the median and 95 % range over "
        f"{settings.get('subsamples')} seeded draws of that size. The standard error is "
        "undefined below 2 items. Significant pairs: t test at 95 % (segments paired).",
        "",
        f"![HOPE's standard error and τ against LLM requests]({PRECISION_FIGURE})",
        "",
    ]
    blocks = list((record.get("corpora") or {}).items())
    pooled = record.get("pooled") or {}
    if pooled.get("curve"):
        blocks.insert(0, ("every corpus, pooled", pooled))
        lines += [
            f"Pooled over {', '.join(pooled.get('corpora') or [])}: τ is each draw's mean of the "
            "corpora's τ, the standard error the median over every chunking of every corpus, "
            "requests and pairs are summed.",
            "",
        ]
    for title, block in blocks:
        chunkings = block.get("chunkings")
        count = f" ({len(chunkings)} chunkings)" if chunkings else ""
        lines += [f"**{title}**{count}", ""]
        lines += _curve_table(block, settings.get("targets") or [])
    return lines


def _curve_table(block: dict[str, Any], targets: list[str]) -> list[str]:
    """One block's curve: by size, requests, standard error, τ with each target and the
    significant pairs."""
    curve = block.get("curve") or []
    pairs = curve[0].get("pairs") if curve else "?"
    header = [
        "m",
        "requests",
        "HOPE's standard error",
        *(f"τ with {TARGET_WORDS.get(t, t)}" for t in targets),
        f"significant pairs (of {pairs})",
    ]
    rows = [
        [
            str(point["size"]),
            str(point["requests"]),
            _range(point.get("se"), ".3f"),
            *(_range((point.get("tau") or {}).get(t)) for t in targets),
            _range(point.get("significant_pairs"), ".0f"),
        ]
        for point in curve
    ]
    return markdown_table(header, rows)


def precision_sample_section(record: dict[str, Any] | None) -> list[str]:
    """The precision by sample size on the sample experiment's full run (no labels, so no τ):
    pooled over its documents, and per document the standard error at each size."""
    if not record:
        return _owed("precision_sample", "make bench-sequential-sample bench-precision-sample")
    source = record.get("source") or {}
    settings = record.get("settings") or {}
    size = source.get("hope_size") or {}
    llm = next((r["llm"] for r in source.get("records") or [] if r.get("llm")), {})
    cold = (
        f"; the full run asked {llm.get('requests')} distinct requests cold "
        f"({llm.get('requests_sent')} sent, retries included) in "
        f"{_num((llm.get('wall_s') or 0) / 60, '.0f')} min"
        if llm.get("wall_s") is not None
        else ""
    )
    lines = [
        f"From `bench/results/precision_sample.json` (commit `{_commit(record)}`), drawn from "
        f"the full run of the sample experiment, {_records(source)}: "
        f"{size.get('focus_passages')}, {size.get('statements')} statements, "
        f"{size.get('questions')} questions, {size.get('segments')} segments{cold}. Each "
        "document is scored by its two "
        "chunkings, so each has one pair and no τ (the sample has no labels). Size m is m focus "
        "passages per chunking and m segments per document; `all` is the full run itself. Each "
        f"cell is the median and 95 % range over {settings.get('subsamples')} seeded draws.",
        "",
    ]
    pooled = record.get("pooled") or {}
    blocks = record.get("corpora") or {}
    counted = (pooled.get("curve") or [{}])[-1]
    if counted.get("size") == "all" and llm.get("requests") is not None:
        lines += [
            "Requests are counted at every size as `sampling_stats.requests_for` counts them: "
            "each focus passage with the answers to all its questions, each segment with its "
            f"choices, the most a run of that size asks. At `all` that is {counted['requests']}, "
            f"{counted['requests'] - llm['requests']} more than the full run asked: a run asks "
            "fewer where a passage gets fewer questions or an item fails before its later "
            "requests.",
            "",
        ]
    if pooled.get("curve"):
        lines += [
            f"![HOPE's standard error and pairs told apart against LLM requests, sample "
            f"experiment]({PRECISION_SAMPLE_FIGURE})",
            "",
            f"**All {len(blocks)} documents, pooled**",
            "",
        ]
        lines += _curve_table(pooled, [])
    sizes = [str(p["size"]) for p in next(iter(blocks.values()), {}).get("curve") or []]
    if sizes:
        chunkings = next(iter(blocks.values())).get("chunkings") or []
        header = [
            "document",
            f"HOPE, {' / '.join(chunkings)}",
            *(f"standard error, m = {m}" for m in sizes),
            "pair significant",
        ]
        rows = []
        for doc, block in blocks.items():
            curve = block.get("curve") or []
            at_all = (curve[-1].get("significant_pairs") or {}).get("median") if curve else None
            hope = block.get("hope") or {}
            rows.append(
                [
                    doc,
                    " / ".join(_num(hope.get(c)) for c in block.get("chunkings") or []),
                    *(_num((p.get("se") or {}).get("median")) for p in curve),
                    "–" if at_all is None else ("yes" if at_all >= 1 else "no"),
                ]
            )
        lines += [
            "**Per document** (HOPE: each chunking's on all of the full run's items; standard "
            "error: the median over the draws)",
            "",
        ]
        lines += markdown_table(header, rows)
    return lines


def precision_figure(record: dict[str, Any] | None) -> bytes | None:
    """Standard error and τ with budget recall against requests, one line per corpus."""
    if not record or not record.get("corpora"):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4), constrained_layout=True)
    for corpus, block in record["corpora"].items():
        curve = block.get("curve") or []
        xs = [p["requests"] for p in curve]
        se = [(p.get("se") or {}).get("median") for p in curve]
        tau = [((p.get("tau") or {}).get("budget_recall") or {}).get("median") for p in curve]
        left.plot(
            [x for x, y in zip(xs, se, strict=True) if y is not None],
            [y for y in se if y is not None],
            marker="o",
            label=corpus,
        )
        right.plot(
            [x for x, y in zip(xs, tau, strict=True) if y is not None],
            [y for y in tau if y is not None],
            marker="o",
            label=corpus,
        )
    from matplotlib.ticker import NullFormatter

    ticks = sorted({p["requests"] for b in record["corpora"].values() for p in b.get("curve", [])})
    for ax, label in ((left, "HOPE's standard error (median)"), (right, "τ with budget recall")):
        ax.set_xscale("log")
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("LLM requests per corpus (7 chunkings)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    right.axhline(0, color="grey", linewidth=0.8)
    left.legend(fontsize=8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def precision_sample_figure(record: dict[str, Any] | None) -> bytes | None:
    """The sample experiment pooled over its documents: HOPE's standard error and the pairs told
    apart at each size, with the 95 % range over the draws. The sizes are evenly spaced (the
    largest ones differ by few requests), each labelled with its requests."""
    curve = ((record or {}).get("pooled") or {}).get("curve")
    if not curve:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    fig.suptitle("Sample experiment, pooled: median and 95 % range over the draws", fontsize=10)
    pairs = int(curve[0].get("pairs") or 0)
    right.set_yticks(range(pairs + 1))
    right.set_ylim(-0.3, pairs + 0.3)
    positions = list(range(len(curve)))
    panels = (
        (left, "se", "HOPE's standard error"),
        (right, "significant_pairs", f"pairs told apart (of {pairs})"),
    )
    for ax, key, label in panels:
        kept = [(x, p.get(key) or {}) for x, p in zip(positions, curve, strict=True)]
        kept = [(x, c) for x, c in kept if c.get("median") is not None]
        ax.plot([x for x, _ in kept], [c["median"] for _, c in kept], marker="o")
        ax.fill_between(
            [x for x, _ in kept],
            [c["low"] for _, c in kept],
            [c["high"] for _, c in kept],
            alpha=0.2,
        )
        ax.set_xticks(positions, [f"{p['size']}\n{p['requests']}" for p in curve])
        ax.set_xlabel("size m (above) and LLM requests, all documents (below)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def _met(flag: Any) -> str:
    return "met" if flag else "missed"


def _figures(run: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """A run's request share, agreement and targets met: the medians over its draw orders where
    it was repeated over several (``orders``), else its own."""
    orders = run.get("orders")
    if orders:
        agreement = orders.get("agreement") or {}
        return (
            (orders.get("request_share") or {}).get("median"),
            agreement.get("median"),
            orders.get("targets_met") or {},
        )
    return (
        run.get("request_share"),
        (run.get("decisions") or {}).get("agreement"),
        run.get("targets_met") or {},
    )


def _with_range(value: Any, spread: dict[str, Any] | None) -> str:
    """``value`` as a percentage, with the range over draw orders where there is one."""
    if not spread or spread.get("n", 1) < 2:
        return _num(value, ".0%")
    return (
        f"{_num(value, '.0%')} [{_num(spread.get('min'), '.0%')}–{_num(spread.get('max'), '.0%')}]"
    )


def _run_rows(runs: dict[str, Any]) -> list[list[str]]:
    rows = []
    for epsilon, run in runs.items():
        found = run.get("decisions") or {}
        share, agreement, met = _figures(run)
        orders = run.get("orders") or {}
        stopped = ", ".join(f"{k} {v}" for k, v in sorted((run.get("stopped") or {}).items()))
        rows.append(
            [
                epsilon,
                f"{_with_range(share, orders.get('request_share'))} "
                f"({_met(met.get('request_share'))})",
                f"{_with_range(agreement, orders.get('agreement'))} ({_met(met.get('agreement'))}"
                + (
                    "; the full run separates no pair"
                    if found.get("reference_significant") == 0
                    else ""
                )
                + ")",
                f"{found.get('significant_kept')} of {found.get('reference_significant')}",
                str(found.get("reversed")),
                str(found.get("new_significant")),
                f"{run.get('rule_decided_contradicted')} of {run.get('rule_decided')}",
                stopped,
                f"{orders['both_met']} of {len(orders.get('order_seeds') or [])}"
                if orders
                else "—",
            ]
        )
    return rows


def _populations(runs: dict[str, Any]) -> str:
    """The range of each item kind's population over a workload's chunkings, e.g. "5–13 focus
    passages, 20 segments" (empty when the runs do not record what they drew)."""
    found: dict[str, list[int]] = {}
    for run in runs.values():
        for document in run.get("documents") or []:
            for _drawn, population in (document.get("drawn") or {}).values():
                for kind, count in population.items():
                    found.setdefault(kind, []).append(count)
    parts = []
    for kind, counts in found.items():
        low, high = min(counts), max(counts)
        span = str(low) if low == high else f"{low}–{high}"
        parts.append(f"{span} {kind.replace('_', ' ')}")
    return ", ".join(parts)


def sequential_frontier(runs: dict[str, Any], targets: dict[str, Any]) -> str:
    """One sentence on a workload's ε values taken together: the fewest requests that reach the
    agreement target, and the best agreement within the request target (the two targets meet
    only if one ε reaches both)."""
    want_agreement = targets.get("agreement")
    want_share = targets.get("request_share")
    rows = [
        (float(share), float(agreement), epsilon, run)
        for epsilon, run in runs.items()
        for share, agreement, _met in [_figures(run)]
        if share is not None and agreement is not None
    ]
    if not rows or want_agreement is None or want_share is None:
        return ""
    if all((run["decisions"].get("reference_significant") or 0) == 0 for *_, run in rows):
        return (
            "Across ε: the full run separates no pair, so every ε agrees; the request target "
            + (
                "is met at ε "
                + ", ".join(e for share, _a, e, _r in rows if share <= want_share)
                + "."
                if any(share <= want_share for share, *_ in rows)
                else f"is missed at every ε (fewest: {min(r[0] for r in rows):.0%})."
            )
        )

    # Ties go to the loosest ε: the cheapest setting that gives the same figures.
    def cheapest(row: tuple) -> tuple:
        return (row[0], -row[1], -float(row[2]))

    def best(row: tuple) -> tuple:
        return (-row[1], row[0], -float(row[2]))

    # Per target: the row chosen among those meeting it (else among all), and its sentence.
    targets_rows = (
        (
            lambda r: r[1] >= want_agreement,
            (cheapest, best),
            "agreement ≥ {agreement:.0%} needs {s:.1%} of the requests at the least "
            "(ε {e}: {a:.1%})",
            "no ε reaches agreement ≥ {agreement:.0%} (best {a:.1%} at ε {e}, {s:.1%} of the "
            "requests)",
        ),
        (
            lambda r: r[0] <= want_share,
            (best, cheapest),
            "within {share:.0%} of the requests the best agreement is {a:.1%} (ε {e}: {s:.1%})",
            "no ε stays within {share:.0%} of the requests (fewest {s:.1%} at ε {e}, "
            "agreement {a:.1%})",
        ),
    )
    sentences = []
    for fits, (among_met, among_all), met, missed in targets_rows:
        chosen = [r for r in rows if fits(r)]
        s, a, e, _ = min(chosen or rows, key=among_met if chosen else among_all)
        sentences.append(
            (met if chosen else missed).format(
                agreement=want_agreement, share=want_share, s=s, a=a, e=e
            )
        )
    both = [r for r in rows if r[0] <= want_share and r[1] >= want_agreement]
    met_at = " and ".join(", ".join(e for *_, e, _r in both).rsplit(", ", 1))
    verdict = f"both targets are met at ε {met_at}" if both else "no ε meets both targets"
    if both and all(r[3].get("orders") for r in both):
        verdict += (
            " ("
            + "; ".join(
                f"ε {e}: {run['orders']['both_met']} of {len(run['orders']['order_seeds'])} draw "
                "orders meet both by themselves, agreement "
                f"{run['orders']['agreement']['min']:.1%}–{run['orders']['agreement']['max']:.1%}"
                " over the orders"
                for _s, _a, e, run in both
            )
            + ")"
        )
    return f"Across ε: {sentences[0]}; {sentences[1]}; {verdict}."


def sequential_section(record: dict[str, Any] | None) -> list[str]:
    if not record:
        return _owed("sequential", "make bench-sequential")
    commit = _commit(record)
    targets = record.get("targets") or {}
    lines = [
        f"From `bench/results/sequential.json` (commit `{commit}`). Targets: agreement ≥ "
        f"{_num(targets.get('agreement'), '.0%')} of the pairs with ≤ "
        f"{_num(targets.get('request_share'), '.0%')} of the full run's requests. Decisions: "
        f"{record.get('decision_test')}.",
        "",
    ]
    header = [
        "ε",
        "requests (share of full)",
        "decisions agreeing",
        "full run's significant pairs kept",
        "reversed",
        "newly significant",
        "rule's decided comparisons contradicted",
        "chunkings stopped by",
        "draw orders meeting both targets",
    ]
    workloads = (
        ("simulated", "Simulated paper workload"),
        ("embedded_replayed", "Embedded model (SmolLM2), replayed on its items"),
        ("embedded_sample", "Embedded model (SmolLM2), the sample experiment"),
    )
    for key, title in workloads:
        block = record.get(key) or {}
        if not block.get("runs"):
            reason = block.get("reason", "not in this record")
            lines += [f"**{title}**: not run ({reason}).", ""]
            continue
        full = block.get("full") or {}
        what = (
            f"corpora {', '.join(block.get('corpora') or [])}; source "
            f"{_records(block.get('source') or {})}"
            if key == "embedded_replayed"
            else f"{len(block.get('documents') or [])} documents × "
            f"{len(block.get('chunkers') or [])} chunkers, {block.get('profile')}"
        )
        measured = (block.get("provenance") or {}).get("commit")
        at = f"; commit `{measured[:7]}`" if measured else ""
        lines += [f"**{title}** ({what}; full run: {full.get('requests')} requests{at})", ""]
        lines += markdown_table(header, _run_rows(block["runs"]))
        repeats = [
            len((r.get("orders") or {}).get("order_seeds") or []) for r in block["runs"].values()
        ]
        if max(repeats, default=0) >= 2:
            lines += [
                f"Requests and agreement: the median over {max(repeats)} draw orders "
                f"(`hope.sampling.order_seed` 0–{max(repeats) - 1}, every item keeping its "
                "answers) with their range in brackets; the targets are judged on the medians. "
                "The other columns are the default draw's (order seed 0).",
                "",
            ]
        if frontier := sequential_frontier(block["runs"], targets):
            lines += [frontier, ""]
        first = block.get("first_round") or {}
        if first.get("request_share") is not None:
            lines += [
                f"The first round alone ({first.get('round_focus_passages')} focus passages and "
                f"{first.get('round_segments')} segments per chunking, fewer where a chunking "
                f"has fewer) asks for {_num(first['request_share'], '.0%')} of the full run's "
                f"requests (both counted {first.get('counted')}); no ε sends less with these "
                "round sizes.",
                "",
            ]
        sizes = _populations(block["runs"])
        if sizes:
            lines += [f"Items per chunking, the full run's: {sizes}.", ""]
        rerun = (block.get("full_seed_1") or {}).get("decisions")
        if rerun:
            lines += [
                f"A second full run with seed 1 decides {_num(rerun.get('agreement'), '.0%')} "
                f"of the pairs as the first ({rerun.get('significant_kept')} of its "
                f"{rerun.get('reference_significant')} significant pairs kept, "
                f"{rerun.get('reversed')} reversed, {rerun.get('new_significant')} newly "
                "significant): the agreement two full runs reach.",
                "",
            ]
    return lines


__all__ = [
    "PRECISION_FIGURE",
    "PRECISION_MARKER",
    "PRECISION_SAMPLE_FIGURE",
    "PRECISION_SAMPLE_MARKER",
    "SEQUENTIAL_MARKER",
    "precision_figure",
    "precision_sample_figure",
    "precision_sample_section",
    "precision_section",
    "sequential_frontier",
    "sequential_section",
]
