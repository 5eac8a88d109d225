"""DVC stage ``table1``: Table 1 of the paper (documents per domain and source) from prepared data.

Adds what the paper's table leaves out: mean and median characters per document, and the paper's own
document count beside the reproduced one.
"""

from __future__ import annotations

import json
from pathlib import Path

from hope.core.io import read_jsonl, read_text
from hope.pipeline.stage_support import StageOutput, run_stage, stage_parser
from hope.pipeline.table1_step import build_table1, to_csv, to_markdown


def main(argv: list[str] | None = None) -> int:
    args = stage_parser(__doc__, prepared=Path("data/prepared")).parse_args(argv)

    def compute() -> StageOutput:
        manifest = json.loads(read_text(args.prepared / "manifest.json", "manifest"))
        rows = build_table1(
            read_jsonl(args.prepared / "documents.jsonl", "documents file"), manifest
        )
        markdown = to_markdown(rows, manifest.get("profile", ""))
        files = {args.prepared / "table1.csv": to_csv(rows), args.prepared / "table1.md": markdown}
        return StageOutput(files, markdown)

    return run_stage("table1", compute, (ValueError,))


if __name__ == "__main__":
    raise SystemExit(main())
