"""Markdown tables of bench/results/labelled.json, for the README (every number from that file).

python bench/labelled_tables.py [bench/results/labelled.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent / "results" / "labelled.json"


def _num(value: Any, digits: int = 2) -> str:
    return (
        "–" if value is None else f"{value:+.{digits}f}" if digits == 2 else f"{value:.{digits}f}"
    )


def _tau(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("tau") is None:
        return "–"
    return f"{cell['tau']:+.2f} [{_num(cell['low'])}, {_num(cell['high'])}]"


def tau_table(report: dict[str, Any], target: str = "budget_recall") -> str:
    corpora = [c for c, e in report["corpora"].items() if target in e.get("validity", {})]
    names = list(report["corpora"][corpora[0]]["validity"][target]["scores"])
    names += [
        n
        for c in corpora
        for n in report["corpora"][c]["validity"][target]["scores"]
        if n not in names
    ]
    names = list(dict.fromkeys(names))
    head = (
        "| score | "
        + " | ".join(corpora)
        + " | pooled (mean) | vs recall@k pooled | vs IoU@k pooled |"
    )
    lines = [head, "|---|" + "---:|" * (len(corpora) + 3)]
    pooled = report.get("pooled", {})
    for name in names:
        cells = [
            _tau(report["corpora"][c]["validity"][target]["scores"].get(name)) for c in corpora
        ]
        lines.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {_tau(pooled.get(target, {}).get(name))}"
            + f" | {_tau(pooled.get('recall', {}).get(name))}"
            + f" | {_tau(pooled.get('iou', {}).get(name))} |"
        )
    return "\n".join(lines)


def agreement_table(report: dict[str, Any], target: str = "budget_recall") -> str:
    corpora = [c for c, e in report["corpora"].items() if target in e.get("validity", {})]
    names = list(
        dict.fromkeys(
            n for c in corpora for n in report["corpora"][c]["validity"][target]["scores"]
        )
    )
    pairs = [report["corpora"][c]["validity"][target]["significant_pairs"] for c in corpora]
    totals = [report["corpora"][c]["validity"][target]["all_pairs"] for c in corpora]
    head = (
        "| score | "
        + " | ".join(f"{c} ({p}/{t} pairs)" for c, p, t in zip(corpora, pairs, totals, strict=True))
        + " |"
    )
    lines = [head, "|---|" + "---:|" * len(corpora)]
    for name in names:
        cells = []
        for c in corpora:
            cell = report["corpora"][c]["validity"][target]["scores"].get(name)
            cells.append(
                "–"
                if not cell or cell["agreement"] is None
                else f"{cell['agreement']:.2f} ({cell['agreeing']}/{cell['pairs']})"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def chunker_table(report: dict[str, Any], profile: str = "paper") -> str:
    k = report["settings"]["k"]
    lines = [
        f"| corpus | chunker | passages | mean chars | budget recall | recall@{k} | IoU@{k} "
        "| precision-Ω | HOPE | BLEU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus, entry in report["corpora"].items():
        for name, row in entry["chunkers"].items():
            lab = row.get("labelled", {})

            def mean(measure: str, lab: dict = lab) -> str:
                cell = lab.get(measure)
                return "–" if not cell else f"{cell['mean']:.3f}"

            hope = row.get("hope", {}).get(profile, {})
            lines.append(
                f"| {corpus} | {name} | {row['n_passages']} | {row['mean_chars']:.0f} "
                f"| {mean('budget_recall')} | {mean('recall')} | {mean('iou')} "
                f"| {mean('precision_omega')} "
                f"| {'–' if hope.get('hope') is None else format(hope['hope'], '.3f')} "
                f"| {row['bleu']:.1f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    report = json.loads(Path(args[0] if args else DEFAULT).read_text(encoding="utf-8"))
    print("Kendall tau vs budget recall (95 % bootstrap interval)\n")
    print(tau_table(report))
    print("\nPairwise agreement with budget recall (significant pairs only)\n")
    print(agreement_table(report))
    print("\nPer chunker\n")
    print(chunker_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
