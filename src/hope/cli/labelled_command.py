"""``hope labelled``: labelled retrieval of a chunking, for questions with gold spans.

    hope labelled --corpus corpus.md --questions questions.jsonl \
        --passages passages.jsonl [--k 5] [--budget 2500] [--embedder minilm] [--output result.json]

``add_labelled_command(subparsers)`` registers it on the ``hope`` command line
(hope.cli.hope_command).
Bad input (offsets out of range, reference text that does not match the corpus, malformed lines,
a passage that is not in the corpus) exits with status 2 and a message naming the file and line;
nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hope.cli.cli_arguments import positive_int
from hope.core.io import file_sha256, read_text, write_json_atomic
from hope.labelled.chunking_evaluation import (
    DEFAULT_BUDGET,
    DEFAULT_K,
    LabelledSettings,
    evaluate_chunking,
)
from hope.labelled.labelled_files import read_passages, read_questions
from hope.labelled.labelled_inputs import LabelledInputError, locate_passages
from hope.labelled.measures import MEASURES
from hope.models.factory import embedder_preset

DESCRIPTION = (
    "Retrieve the top passages of a chunking for questions with gold character spans and report "
    "recall, precision, IoU, precision-Omega and recall at a character budget (Chroma's measures)."
)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--corpus", required=True, help="UTF-8 text file the offsets refer to")
    parser.add_argument(
        "--questions",
        required=True,
        help='JSON lines: {"corpus"?, "question", "references": [{"start", "end", "text"}]}',
    )
    parser.add_argument(
        "--passages",
        required=True,
        help='JSON lines: {"text", "start"?, "end"?}; without a span the text is searched in the '
        "corpus",
    )
    parser.add_argument(
        "--corpus-name",
        help="keep only questions whose 'corpus' field is this (default: the corpus file name "
        "without extension); lines without the field are kept",
    )
    parser.add_argument("--k", type=positive_int, default=DEFAULT_K, help="passages retrieved")
    parser.add_argument(
        "--budget", type=positive_int, default=DEFAULT_BUDGET, help="characters for budget recall"
    )
    parser.add_argument("--embedder", default="minilm", help="embedder config (minilm, hashing)")
    parser.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--output", help="write the result JSON here (atomically)")
    parser.set_defaults(handler=run)
    return parser


def add_labelled_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``labelled`` on an argparse subparsers object (``hope labelled ...``)."""
    parser = subparsers.add_parser(
        "labelled", help="labelled retrieval measures of a chunking", description=DESCRIPTION
    )
    return add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    corpus = read_text(args.corpus, "corpus")
    name = args.corpus_name if args.corpus_name is not None else Path(args.corpus).stem
    questions, skipped = read_questions(args.questions, corpus, name)
    passages = read_passages(args.passages, corpus)
    # A chunking whose passages cannot all be placed in the corpus is not evaluable: that is bad
    # input like any other (exit 2, nothing written), found before the embedder is loaded.
    _, reason = locate_passages(corpus, passages)
    if reason is not None:
        raise LabelledInputError(f"passages file {args.passages}: {reason}")
    settings = LabelledSettings(
        k=args.k, budget=args.budget, n_resamples=args.resamples, seed=args.seed
    )
    result = evaluate_chunking(
        corpus, questions, passages, embedder_preset(args.embedder), settings
    )
    result["inputs"] = {
        "corpus": {"path": args.corpus, "sha256": file_sha256(args.corpus), "name": name},
        "questions": {"path": args.questions, "sha256": file_sha256(args.questions)},
        "passages": {"path": args.passages, "sha256": file_sha256(args.passages)},
        "questions_of_other_corpora_skipped": skipped,
    }
    print(
        f"{len(questions)} questions, {len(passages)} passages, k={args.k}, "
        f"budget={args.budget} characters"
    )
    for measure in MEASURES:
        cell = result["summary"][measure]
        print(
            f"{measure:>16} {cell['mean']:.4f}  95% CI [{cell['low']:.4f}, {cell['high']:.4f}]"
            f"  n={cell['n']}"
        )
    if args.output:
        write_json_atomic(args.output, result)
        print(f"wrote {args.output}")
    else:
        json.dump(result, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
    return 0
