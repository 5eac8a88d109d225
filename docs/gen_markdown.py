"""What the generated docs sections share: number formats, a record's commit, the note for a record
not yet written, markdown tables, and the items records a sampling record drew from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TARGET_WORDS = {"budget_recall": "budget recall", "recall": "recall@k", "iou": "IoU@k"}


def num(value: Any, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


def median_range(cell: dict[str, Any] | None, spec: str = "+.2f") -> str:
    if not cell or cell.get("median") is None:
        return "–"
    middle = format(cell["median"], spec)
    if cell.get("low") is None or cell["low"] == cell["high"]:
        return middle
    return f"{middle} [{format(cell['low'], spec)}, {format(cell['high'], spec)}]"


def short_commit(record: dict[str, Any]) -> str:
    return str((record.get("provenance") or {}).get("commit") or "?")[:10]


def figures_owed(record_name: str, target: str) -> list[str]:
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


def items_records(source: dict[str, Any]) -> str:
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
