"""The HOPE page's sections on HOPE's precision by sample size, generated from their records by
``gen_results.py``:

- "HOPE's precision by sample size" from ``bench/results/precision.json``: pooled over the
  corpora (when there are several) and per corpus, by size, the LLM requests, HOPE's standard
  error, Kendall τ with each labelled target and the number of significantly different chunker
  pairs, as tables and a figure (the curve of precision against requests, per corpus);
- the same on the sample experiment from ``bench/results/precision_sample.json`` (its full run
  at the paper's counts; no labels, so no τ): pooled over its documents, and per document.

A missing record gives a "Figures owed" note naming the make target that writes it.
"""

from __future__ import annotations

import io
from typing import Any

from gen_markdown import (
    TARGET_WORDS,
    figures_owed,
    items_records,
    markdown_table,
    median_range,
    num,
    short_commit,
)

PRECISION_MARKER = "<!-- gen_results: HOPE's precision by sample size -->"
PRECISION_SAMPLE_MARKER = "<!-- gen_results: HOPE's precision on the sample experiment -->"
PRECISION_FIGURE = "results/precision_curve.png"
PRECISION_SAMPLE_FIGURE = "results/precision_sample_curve.png"


def precision_section(record: dict[str, Any] | None) -> list[str]:
    if not record:
        return figures_owed("precision", "make bench-precision")
    source = record.get("source") or {}
    settings = record.get("settings") or {}
    commit = short_commit(record)
    size = source.get("hope_size") or {}
    lines = [
        f"From `bench/results/precision.json` (commit `{commit}`), drawn from the items of "
        f"{items_records(source)}: {size.get('focus_passages')} focus passages and "
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
            median_range(point.get("se"), ".3f"),
            *(median_range((point.get("tau") or {}).get(t)) for t in targets),
            median_range(point.get("significant_pairs"), ".0f"),
        ]
        for point in curve
    ]
    return markdown_table(header, rows)


def precision_sample_section(record: dict[str, Any] | None) -> list[str]:
    """The precision by sample size on the sample experiment's full run (no labels, so no τ):
    pooled over its documents, and per document the standard error at each size."""
    if not record:
        return figures_owed(
            "precision_sample", "make bench-sequential-sample bench-precision-sample"
        )
    source = record.get("source") or {}
    settings = record.get("settings") or {}
    size = source.get("hope_size") or {}
    llm = next((r["llm"] for r in source.get("records") or [] if r.get("llm")), {})
    cold = (
        f"; the full run asked {llm.get('requests')} distinct requests cold "
        f"({llm.get('requests_sent')} sent, retries included) in "
        f"{num((llm.get('wall_s') or 0) / 60, '.0f')} min"
        if llm.get("wall_s") is not None
        else ""
    )
    lines = [
        f"From `bench/results/precision_sample.json` (commit `{short_commit(record)}`), drawn from "
        f"the full run of the sample experiment, {items_records(source)}: "
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
                    " / ".join(num(hope.get(c)) for c in block.get("chunkings") or []),
                    *(num((p.get("se") or {}).get("median")) for p in curve),
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
