"""DVC stage ``prepare``: select, normalise and validate every corpus into one document table.

Output: ``documents.jsonl`` (one JSON object per document, exactly the schema's fields, in Table 1
domain order and selection order) and ``manifest.json`` (per corpus: the download provenance with
URLs, revisions and checksums; the seed; what was selected; every document that was filtered out or
skipped, with its reason).
"""

from __future__ import annotations

import logging
from pathlib import Path

from hope.corpora.base import (
    CorpusError,
)
from hope.corpora.corpus_config import (
    load_params,
)
from hope.corpora.fetch import FetchError
from hope.pipeline.prepare_step import run_prepare
from hope.pipeline.stage_support import StageOutput, run_stage, stage_parser


def main(argv: list[str] | None = None) -> int:
    paths = {"params": Path("params.yaml"), "raw": Path("data/raw"), "out": Path("data/prepared")}
    args = stage_parser(__doc__, **paths).parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    def compute() -> StageOutput:
        manifest = run_prepare(load_params(args.params), args.raw, args.out)
        return StageOutput(
            {}, f"{manifest['n_documents']} documents ({manifest['skipped_total']} skipped)"
        )

    return run_stage("prepare", compute, (CorpusError, FetchError))


if __name__ == "__main__":
    raise SystemExit(main())
