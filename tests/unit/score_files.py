"""The two input files of `hope score` (a document, its passages as JSONL) for CLI tests."""

from __future__ import annotations

import json
from pathlib import Path


def write_score_inputs(folder: Path, document: str, passages: list[str]) -> tuple[Path, Path]:
    doc = folder / "doc.txt"
    doc.write_text(document, encoding="utf-8")
    lines = folder / "passages.jsonl"
    lines.write_text(
        "".join(
            json.dumps({"passage_id": f"p{i}", "text": t}) + "\n" for i, t in enumerate(passages)
        ),
        encoding="utf-8",
    )
    return doc, lines
