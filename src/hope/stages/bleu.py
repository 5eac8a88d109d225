"""DVC stage ``bleu``: the paper's BLEU baseline for every (document, chunker) pair.

Reads ``data/prepared/documents.jsonl`` and ``data/chunks/passages.jsonl`` and writes
``data/bleu/bleu.jsonl`` with one line per pair: ``doc_id``, ``chunker``, ``bleu`` (0-100) and
sacrebleu's ``signature``. The passages of a pair are joined in ``index`` order; see
:mod:`hope.chunking.bleu` for the tokenisation and joiner parameters.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.chunking.bleu import DEFAULT_JOINER, DEFAULT_TOKENIZE, OFFLINE_TOKENIZERS, document_bleu
from hope.stages.chunk import DEFAULT_DOCUMENTS, check_documents, read_jsonl, write_atomic

DEFAULT_PASSAGES = Path("data/chunks/passages.jsonl")
DEFAULT_OUTPUT = Path("data/bleu/bleu.jsonl")
PASSAGE_FIELDS = ("passage_id", "doc_id", "chunker", "index", "text")


def bleu_scores(
    documents: Sequence[Mapping[str, Any]],
    passages: Sequence[Mapping[str, Any]],
    *,
    tokenize: str = DEFAULT_TOKENIZE,
    joiner: str = DEFAULT_JOINER,
) -> list[dict[str, Any]]:
    """One record per (document, chunker) pair, chunkers in first-seen order, then documents.

    Every chunker present in ``passages`` must have passages for every document, and every
    passage must belong to a known document; otherwise the pair is named in a ``ValueError``.
    """
    check_documents(documents)
    texts = {doc["doc_id"]: doc["text"] for doc in documents}
    grouped: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for position, passage in enumerate(passages, start=1):
        missing = [f for f in PASSAGE_FIELDS if f not in passage]
        if missing:
            raise ValueError(f"passage #{position} lacks field(s) {missing}")
        if passage["doc_id"] not in texts:
            raise ValueError(
                f"passage {passage['passage_id']!r} belongs to unknown document "
                f"{passage['doc_id']!r}"
            )
        grouped[passage["chunker"]][passage["doc_id"]].append(passage)
    records: list[dict[str, Any]] = []
    for chunker, by_doc in grouped.items():
        for doc_id, text in texts.items():
            doc_passages = by_doc.get(doc_id)
            if not doc_passages:
                raise ValueError(f"chunker {chunker!r} has no passages for document {doc_id!r}")
            ordered = sorted(doc_passages, key=lambda p: int(p["index"]))
            result = document_bleu(
                text, [p["text"] for p in ordered], tokenize=tokenize, joiner=joiner
            )
            records.append(
                {
                    "doc_id": doc_id,
                    "chunker": chunker,
                    "bleu": result.score,
                    "signature": result.signature,
                }
            )
    return records


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=Path, default=DEFAULT_DOCUMENTS)
    parser.add_argument("--passages", type=Path, default=DEFAULT_PASSAGES)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
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
    section: dict[str, Any] = {}
    if args.params is not None:
        import yaml

        with args.params.open(encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle) or {}
        section = loaded.get("bleu") or {}
        if not isinstance(section, dict):
            raise ValueError(f"{args.params}: 'bleu' must be a mapping")
        unknown = sorted(set(section) - {"tokenize", "joiner"})
        if unknown:
            raise ValueError(f"{args.params}: unknown key(s) in 'bleu': {unknown}")
    tokenize = args.tokenize or section.get("tokenize", DEFAULT_TOKENIZE)
    joiner = args.joiner if args.joiner is not None else section.get("joiner", DEFAULT_JOINER)
    if tokenize not in OFFLINE_TOKENIZERS:
        raise ValueError(f"bleu.tokenize {tokenize!r} is not one of {list(OFFLINE_TOKENIZERS)}")
    if not isinstance(joiner, str):
        raise ValueError(f"bleu.joiner must be a string, got {joiner!r}")
    return tokenize, joiner


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        tokenize, joiner = bleu_options(args)
        documents = read_jsonl(args.documents)
        passages = read_jsonl(args.passages)
        records = bleu_scores(documents, passages, tokenize=tokenize, joiner=joiner)
    except (ValueError, FileNotFoundError) as exc:
        print(f"bleu: error: {exc}", file=sys.stderr)
        return 1
    write_atomic(args.output, (json.dumps(r) + "\n" for r in records))
    print(f"bleu: {len(records)} (document, chunker) pairs -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
