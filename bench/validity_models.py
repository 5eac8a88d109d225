"""Validity against time, per model: two or more validity records compared on the documents they
share (issue 11: pick the offline default by measured validity per minute).

Each record is a ``bench_validity.py`` output for one model (``--out``). A record may be partial
(a run stopped after some documents); the comparison then covers the documents every record holds,
in pairs, so that a model is never credited for easier documents. Per model and sub-metric: the
(document, degraded rung) comparisons the aligned chunking wins, pooled, with a bootstrap interval
over documents; for HOPE, the paired difference from the first record with the same resampled
documents; and the wall time per document.

    python bench/validity_models.py bench/results/validity.json \\
        bench/results/validity_qwen2.5-coder-1.5b.json --out bench/results/validity_models.json
    python bench/validity_models.py --table --out bench/results/validity_models.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any

import numpy as np

import harness
from harness import REPO
from hope.validity import ladder_stats as stats
from hope.validity.ladder import DEGRADED
from hope.validity.ladder_stats import win_share  # the same share as the tables
from workloads import METRICS

N_BOOT = 2000


def _scores(per_document: list[dict[str, Any]], metric: str, docs: list[str]):
    by_id = {d["doc_id"]: d for d in per_document}
    return {
        doc: {
            rung: math.nan if value[metric] is None else value[metric]
            for rung, value in by_id[doc]["scores"].items()
        }
        for doc in docs
    }


def _outcomes(scores) -> list[list[str]]:
    return [[stats.outcome(s["aligned"], s[rung]) for rung in DEGRADED] for s in scores.values()]


def paired_difference(a: list[list[str]], b: list[list[str]], *, seed: int = 0) -> dict[str, Any]:
    """Win share of b minus that of a, with a bootstrap over documents drawn for both at once."""
    point = win_share([o for d in b for o in d]) - win_share([o for d in a for o in d])
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(N_BOOT):
        picks = rng.integers(0, len(a), size=len(a))
        value = win_share([o for i in picks for o in b[i]]) - win_share(
            [o for i in picks for o in a[i]]
        )
        if not math.isnan(value):
            values.append(value)
    ci = [float(x) for x in np.percentile(values, [2.5, 97.5])] if values else None
    return {"difference": point, "ci95": ci}


def compare(records: list[tuple[str, dict[str, Any]]], profile: str = "paper") -> dict[str, Any]:
    """The comparison of the records (label, validity.json content) on their shared documents."""
    per_doc = {label: r["profiles"][profile]["per_document"] for label, r in records}
    first_label = records[0][0]
    order = [d["doc_id"] for d in per_doc[first_label]]
    shared = [d for d in order if all(d in {x["doc_id"] for x in p} for p in per_doc.values())]
    if not shared:
        raise SystemExit("the records share no document")
    models = {}
    outcomes_hope = {}
    for label, record in records:
        rows = per_doc[label]
        metrics = {}
        for metric in METRICS:
            scores = _scores(rows, metric, shared)
            metrics[metric] = stats.comparisons(scores, "aligned", DEGRADED, n_boot=N_BOOT)
            if metric == "hope":
                outcomes_hope[label] = _outcomes(scores)
        minutes = [d["wall_time_s"] / 60 for d in rows if d["doc_id"] in shared]
        models[label] = {
            "source": {
                # The validity run's own block: its commit, tree and machine.
                "provenance": record["provenance"],
                "complete": record["complete"],
                "documents_in_record": len(rows),
                "llm": record["models"]["llm"].get("model"),
                "gguf_path_set": bool(record["models"]["llm"].get("gguf_path")),
            },
            "metrics": metrics,
            "minutes_per_document": {
                "median": statistics.median(minutes),
                "min": min(minutes),
                "max": max(minutes),
                "total": sum(minutes),
            },
            "information_preservation_controls_whole_record": record["profiles"][profile][
                "information_preservation_controls"
            ],
        }
    return {
        "benchmark": "validity per model on shared documents (issue 11)",
        "profile": profile,
        "shared_documents": shared,
        "models": models,
        "hope_win_share_difference_from_first": {
            label: paired_difference(outcomes_hope[first_label], outcomes_hope[label])
            for label, _ in records[1:]
        },
        "notes": "wins among defined comparisons (ties count as not won); intervals are "
        f"percentile bootstraps over the shared documents ({N_BOOT} resamples, seed 0); the "
        "ζ_inf controls are those of each whole record, not only the shared documents",
    }


def _ci(ci: list[float] | None) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "[–]"


def render_table(result: dict[str, Any]) -> str:
    lines = [
        f"{len(result['shared_documents'])} shared documents, profile `{result['profile']}`.\n",
        "| model (commit) | HOPE | ζ_con | ζ_sem | ζ_inf | oracle / no context (whole record) "
        "| min per document, median (range) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, model in result["models"].items():
        commit = model["source"]["provenance"]["commit"] or "?"
        cells = [f"{label} (`{commit[:7]}`)"]
        for metric in METRICS:
            pooled = model["metrics"][metric]["pooled"]
            cells.append(f"{pooled['share_wins']:.2f} {_ci(pooled['share_wins_ci95'])}")
        controls = model["information_preservation_controls_whole_record"]
        cells.append(
            f"{controls['oracle']['accuracy']:.2f} / {controls['no_context']['accuracy']:.2f} "
            f"(n={controls['oracle']['n']})"
        )
        minutes = model["minutes_per_document"]
        cells.append(f"{minutes['median']:.1f} ({minutes['min']:.1f}–{minutes['max']:.1f})")
        lines.append("| " + " | ".join(cells) + " |")
    for label, diff in result["hope_win_share_difference_from_first"].items():
        lines.append(
            f"\nHOPE's aligned win share, {label} minus {next(iter(result['models']))}: "
            f"{diff['difference']:+.2f} {_ci(diff['ci95'])} (paired over documents)."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="*", type=Path, help="validity records, first = baseline")
    parser.add_argument("--labels", help="comma-separated labels (default: the records' models)")
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/validity_models.json")
    parser.add_argument("--table", action="store_true", help="print the table of --out and exit")
    args = parser.parse_args(argv)
    if args.table:
        print(render_table(json.loads(args.out.read_text(encoding="utf-8"))))
        return 0
    if len(args.records) < 2:
        parser.error("give at least two validity records")
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in args.records]
    labels = (
        args.labels.split(",") if args.labels else [r["models"]["llm"]["model"] for r in loaded]
    )
    if len(labels) != len(loaded):
        parser.error("one label per record")
    bench_run = harness.start(None if argv is None else [__file__, *argv])
    result = compare(list(zip(labels, loaded, strict=True)), args.profile)
    result["inputs"] = [p.name for p in args.records]  # names only: no machine's paths
    bench_run.write_record(args.out, result)
    print(render_table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
