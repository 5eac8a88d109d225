"""DVC stage ``chunk``: every selected chunker over every prepared document.

Reads ``data/prepared/documents.jsonl`` (one document per line with at least ``doc_id``, ``text``
and ``domain``) and the chunker names (``--chunkers`` or the ``chunkers`` list of a params file),
loads each ``conf/chunker/<name>.yaml`` and writes

* ``data/chunks/passages.jsonl``: one passage per line (``passage_id``, ``doc_id``, ``chunker``,
  ``index``, ``text``, ``start``, ``end``, ``domain``), chunkers in the order given, documents in
  file order within each chunker;
* ``data/chunks/summary.json``: per chunker the number of documents and passages, the mean and
  median passage length in characters, and the config it was built from.

Both files are replaced atomically and only after every pair succeeded; a chunker that returns no
passages for a document stops the stage with an error naming both.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hope.chunking.passages import ChunkingError
from hope.chunking.registry import DEFAULT_CONF_DIR, load_chunkers
from hope.core.io import json_text, jsonl_lines
from hope.core.stage_records import check_documents
from hope.pipeline import stage_support as runner
from hope.pipeline.chunk_step import (
    DEFAULT_OUT_DIR,
    chunk_documents,
    passage_sizes,
    summarise,
)
from hope.pipeline.stage_params import stage_params


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = runner.stage_parser(
        __doc__,
        documents=runner.DEFAULT_DOCUMENTS,
        out_dir=DEFAULT_OUT_DIR,
        conf_dir=DEFAULT_CONF_DIR,
    )
    selection = parser.add_mutually_exclusive_group(required=True)
    selection.add_argument("--chunkers", nargs="+", help="chunker config names")
    selection.add_argument(
        "--params", type=Path, help="YAML file whose 'chunkers' list names the chunkers"
    )
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def compute() -> runner.StageOutput:
        names = args.chunkers or stage_params(args.params, "chunkers")["chunkers"]
        chunkers = load_chunkers(names, args.conf_dir)
        documents = runner.read_records(args.documents, "documents", check_documents)
        records = chunk_documents(documents, chunkers, progress=not args.no_progress)
        return runner.StageOutput(
            files={
                args.out_dir / "passages.jsonl": jsonl_lines(records),
                args.out_dir / "summary.json": json_text(
                    summarise(passage_sizes(records), chunkers)
                ),
            },
            message=f"{len(records)} passages from {len(documents)} documents x "
            f"{len(chunkers)} chunkers -> {args.out_dir}",
        )

    return runner.run_stage("chunk", compute, (ChunkingError, ValueError, FileNotFoundError))


if __name__ == "__main__":
    sys.exit(main())
