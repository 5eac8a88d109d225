"""``hope batch export`` / ``hope batch import``: HOPE's LLM requests through a batch engine.

    hope batch export --out rounds/1 --document doc.txt --passages passages.jsonl [overrides...]
    hope batch export --out rounds/1 --documents documents.jsonl --chunks passages.jsonl [...]
    # submit rounds/1/requests-*.jsonl to OpenAI's Batch API or `vllm run-batch`, then
    hope batch import --round rounds/1 --results output.jsonl [overrides...]
    # repeat with rounds/2, ... until export says nothing is pending; then `hope score` (or the
    # pipeline) completes from the cache.

The overrides are those of ``hope score`` and must be the same for export, import and the final
scoring (``llm.*`` and ``hope.*`` enter the cache keys, ``cache.path`` says where answers go).
See ``hope.pipeline.batch_engine`` for the round logic and the accepted result formats.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hope.cli.cli_arguments import positive_int
from hope.core.io import read_jsonl, read_passages_jsonl, read_text


def _pairs(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Documents and passages as pipeline records, from either form of the arguments."""
    if args.documents or args.chunks:
        if not (args.documents and args.chunks):
            raise ValueError("--documents and --chunks go together")
        if args.document or args.passages:
            raise ValueError("use --document/--passages or --documents/--chunks, not both")
        return read_jsonl(args.documents, "documents file"), read_jsonl(args.chunks, "chunks file")
    if not (args.document and args.passages) or len(args.document) != len(args.passages):
        raise ValueError("give --document and --passages once per document (same count)")
    documents, passages = [], []
    for number, (doc_path, passages_path) in enumerate(
        zip(args.document, args.passages, strict=True)
    ):
        doc_id = f"{number}:{Path(doc_path).name}"
        documents.append({"doc_id": doc_id, "text": read_text(doc_path, "document"), "domain": "-"})
        texts, ids = read_passages_jsonl(passages_path)
        passages += [
            {"passage_id": pid, "doc_id": doc_id, "chunker": "cli", "index": i, "text": text}
            for i, (text, pid) in enumerate(zip(texts, ids, strict=True))
        ]
    return documents, passages


def _export(args: argparse.Namespace) -> int:
    from hydra.utils import instantiate

    from hope.models.factory import open_cache
    from hope.pipeline.batch_engine import ReadOnlyCache, export_round
    from hope.pipeline.score_step import score_config

    documents, passages = _pairs(args)
    config = score_config(args.overrides)
    cache = open_cache(config.cache.path)
    llm = instantiate(config.llm, cache=cache)
    embedder = instantiate(config.embedder, cache=ReadOnlyCache(cache))
    summary = export_round(
        documents, passages, llm, embedder, config.hope, args.out, max_per_file=args.max_per_file
    )
    kinds = ", ".join(f"{k} {n}" for k, n in summary.exported_by_kind.items()) or "none"
    print(
        f"{summary.pairs} pairs: {summary.exported} requests to send ({kinds}) in "
        f"{len(summary.files)} file(s) under {summary.directory}; {summary.waiting} waiting on "
        f"them; {summary.cached} answered in the cache; {summary.failed} failed"
    )
    if summary.done:
        print("nothing pending: the scoring completes from the cache")
    return 0


def _import(args: argparse.Namespace) -> int:
    from hope.models.factory import open_cache
    from hope.pipeline.batch_engine import import_results
    from hope.pipeline.score_step import score_config

    config = score_config(args.overrides)
    cache = open_cache(config.cache.path)
    summary = import_results(
        cache, args.round, args.results, max_retries=int(config.llm["max_retries"])
    )
    print(
        f"{summary.lines} result lines: {summary.imported} imported, {summary.invalid} invalid "
        f"answers (asked again next round; {summary.failures_cached} past llm.max_retries cached "
        f"as failed), {sum(summary.errors.values())} errors"
    )
    for reason, count in summary.errors.items():
        print(f"  error: {reason}: {count}", file=sys.stderr)
    for example in summary.examples:
        print(f"  e.g. {example}", file=sys.stderr)
    return 0


def add_batch_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``batch export`` and ``batch import`` on an argparse subparsers object."""
    parser = subparsers.add_parser(
        "batch",
        help="export pending LLM requests as OpenAI batch JSONL; import batch results",
        description=__doc__.split("\n\n")[0],
    )
    sub = parser.add_subparsers(dest="batch_command", required=True)
    export = sub.add_parser("export", help="write the next round of requests")
    export.add_argument("--out", required=True, help="folder for this round's files")
    export.add_argument("--document", action="append", help="UTF-8 document (repeatable)")
    export.add_argument(
        "--passages", action="append", help="its passages, JSON lines as for `hope score`"
    )
    export.add_argument("--documents", help="pipeline documents.jsonl (doc_id, text, domain)")
    export.add_argument("--chunks", help="pipeline passages.jsonl (passage_id, doc_id, chunker...)")
    export.add_argument(
        "--max-per-file", type=positive_int, default=50_000, help="request lines per file"
    )
    export.add_argument("overrides", nargs="*", help="Hydra overrides, as for `hope score`")
    export.set_defaults(handler=_export)
    imp = sub.add_parser("import", help="store batch results in the response cache")
    imp.add_argument("--round", required=True, help="the folder `hope batch export` wrote")
    imp.add_argument(
        "--results",
        required=True,
        action="append",
        help="an output file (OpenAI batch or vllm run-batch format); repeatable",
    )
    imp.add_argument("overrides", nargs="*", help="Hydra overrides, as for `hope score`")
    imp.set_defaults(handler=_import)
    return parser
