"""DVC stage ``bleu``: the paper's BLEU baseline for every (document, chunker) pair.

Reads ``data/prepared/documents.jsonl`` and ``data/chunks/passages.jsonl`` and writes
``data/bleu/bleu.jsonl`` with one line per pair: ``doc_id``, ``chunker``, ``bleu`` (0-100) and
sacrebleu's ``signature``. The passages of a pair are joined in ``index`` order; see
:mod:`hope.chunking.bleu_baseline` for the tokenisation and joiner parameters.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hope.chunking.bleu_baseline import (
    DEFAULT_TOKENIZE,
    OFFLINE_TOKENIZERS,
)
from hope.core.io import jsonl_lines
from hope.pipeline import stage_support as runner
from hope.pipeline.bleu_step import DEFAULT_OUTPUT, bleu_scores
from hope.pipeline.config_schema import BleuParams
from hope.pipeline.stage_params import stage_params


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = runner.stage_parser(
        __doc__,
        documents=runner.DEFAULT_DOCUMENTS,
        passages=runner.DEFAULT_PASSAGES,
        output=DEFAULT_OUTPUT,
    )
    parser.add_argument(
        "--params",
        type=Path,
        help="YAML file whose 'bleu' section may set tokenize and joiner (flags win)",
    )
    parser.add_argument(
        "--tokenize",
        choices=OFFLINE_TOKENIZERS,
        help=f"sacrebleu tokeniser (default {DEFAULT_TOKENIZE})",
    )
    parser.add_argument(
        "--joiner", help="string put between consecutive passages (default: one space)"
    )
    return parser.parse_args(argv)


def bleu_options(args: argparse.Namespace) -> tuple[str, str]:
    """``(tokenize, joiner)`` from the flags, else the params file's ``bleu``, else defaults."""
    section = stage_params(args.params, "bleu")["bleu"] if args.params is not None else BleuParams()
    tokenize = args.tokenize or section.tokenize
    joiner = args.joiner if args.joiner is not None else section.joiner
    return tokenize, joiner


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def compute() -> runner.StageOutput:
        tokenize, joiner = bleu_options(args)
        documents = runner.read_records(args.documents, "documents", required=False)
        passages = runner.read_records(args.passages, "passages", required=False)
        records = bleu_scores(documents, passages, tokenize=tokenize, joiner=joiner)
        message = f"{len(records)} (document, chunker) pairs -> {args.output}"
        return runner.StageOutput({args.output: jsonl_lines(records)}, message)

    return runner.run_stage("bleu", compute)


if __name__ == "__main__":
    sys.exit(main())
