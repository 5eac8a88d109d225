"""DVC stage ``table1``: Table 1 of the paper (documents per domain and source) from prepared data.
This module is the stage's work; ``hope.stages.table1_stage`` is its ``main`` (arguments, the
files it reads and writes), and ``hope-run``, the dry-run estimate and batch call the same
functions.
"""

from __future__ import annotations

import statistics
from typing import Any

from hope.core.io import csv_text
from hope.corpora import DOMAIN_LABELS, DOMAINS, PAPER_COUNTS
from hope.corpora.document_schema import validate_record

COLUMNS = (
    "domain",
    "data_type",
    "documents",
    "paper_documents",
    "source",
    "mean_chars",
    "median_chars",
)


def build_table1(records: list[dict[str, Any]], manifest: dict[str, Any]) -> list[dict[str, Any]]:
    docs = [validate_record(r) for r in records]
    sources = manifest.get("domains", {})

    def row(domain: str, data_type: str, lengths: list[int], paper: int, source: str) -> dict:
        return {
            "domain": domain,
            "data_type": data_type,
            "documents": len(lengths),
            "paper_documents": paper,
            "source": source,
            "mean_chars": round(statistics.fmean(lengths), 1) if lengths else None,
            "median_chars": statistics.median(lengths) if lengths else None,
        }

    rows = [
        row(
            domain,
            DOMAIN_LABELS[domain],
            [d.n_chars for d in docs if d.domain == domain],
            PAPER_COUNTS[domain],
            sources.get(domain, {}).get("source_label", ""),
        )
        for domain in DOMAINS
    ]
    rows.append(row("total", "Total", [d.n_chars for d in docs], sum(PAPER_COUNTS.values()), ""))
    return rows


def to_csv(rows: list[dict[str, Any]]) -> str:
    return csv_text(rows, COLUMNS)


def _num(value: float | int | None) -> str:
    if value is None:
        return "–"
    return (
        f"{value:,.1f}" if isinstance(value, float) and not value.is_integer() else f"{value:,.0f}"
    )


def to_markdown(rows: list[dict[str, Any]], profile: str = "") -> str:
    lines = [
        "| Data type | Documents | Paper | Source | Mean chars | Median chars |",
        "|---|---:|---:|---|---:|---:|",
    ]
    for row in rows:
        bold = "**" if row["domain"] == "total" else ""
        lines.append(
            f"| {bold}{row['data_type']}{bold} | {bold}{row['documents']}{bold} | "
            f"{row['paper_documents']} | {row['source']} | {_num(row['mean_chars'])} | "
            f"{_num(row['median_chars'])} |"
        )
    caption = "Table 1. Documents per domain"
    caption += f" (profile `{profile}`)." if profile else "."
    return caption + "\n\n" + "\n".join(lines) + "\n"
