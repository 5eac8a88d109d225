"""DVC stage ``labelled_data``: the labelled benchmark's corpora and questions, copied and checked.

Copies ``corpora/<name>.md`` for every corpus in params.yaml ``labelled.corpora``,
``questions.jsonl`` and the licence from ``labelled.source`` (a folder in the format of Chroma's
general evaluation set, by default ``../shared/benchmarks/chroma-general-eval``) into ``--out``,
so that the files the benchmark reads are DVC-tracked outputs with their hashes in dvc.lock. Every
file must match its sha256 in ``labelled.checksums``: a missing source, a missing file or a
different checksum is an error naming the file, and nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hope.pipeline.labelled_data_step import copy_labelled_data
from hope.pipeline.stage_params import stage_params
from hope.pipeline.stage_support import run_stage, stage_parser


def main(argv: list[str] | None = None) -> int:
    parser = stage_parser(__doc__, params=Path("params.yaml"), out=Path("data/labelled/source"))
    args = parser.parse_args(argv)
    return run_stage(
        "labelled_data",
        lambda: copy_labelled_data(
            stage_params(args.params, "labelled")["labelled"], Path.cwd(), args.out
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
