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
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.chunking.passages import ChunkingError
from hope.chunking.registry import DEFAULT_CONF_DIR, Chunker, load_chunkers
from hope.chunking.settings import ChunkerConfigError

DEFAULT_DOCUMENTS = Path("data/prepared/documents.jsonl")
DEFAULT_OUT_DIR = Path("data/chunks")
REQUIRED_DOCUMENT_FIELDS = ("doc_id", "text", "domain")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON: {exc}") from exc
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object")
            records.append(record)
    return records


def check_documents(documents: Sequence[Mapping[str, Any]], source: str = "documents") -> None:
    seen: set[str] = set()
    for position, doc in enumerate(documents, start=1):
        missing = [f for f in REQUIRED_DOCUMENT_FIELDS if f not in doc]
        if missing:
            raise ValueError(f"{source}: document #{position} lacks field(s) {missing}")
        if not isinstance(doc["text"], str):
            raise ValueError(f"{source}: document {doc['doc_id']!r} has a non-string text")
        if doc["doc_id"] in seen:
            raise ValueError(f"{source}: duplicate doc_id {doc['doc_id']!r}")
        seen.add(doc["doc_id"])


def chunk_documents(
    documents: Sequence[Mapping[str, Any]],
    chunkers: Sequence[Chunker],
    *,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Passage records (with the document's ``domain``) for every (chunker, document) pair."""
    check_documents(documents)
    pairs: Iterable[tuple[Chunker, Mapping[str, Any]]] = [
        (chunker, doc) for chunker in chunkers for doc in documents
    ]
    if progress:
        from tqdm import tqdm

        pairs = tqdm(pairs, desc="chunk", unit="pair", file=sys.stderr)
    records: list[dict[str, Any]] = []
    for chunker, doc in pairs:
        for passage in chunker.chunk(doc["text"], doc["doc_id"]):
            records.append({**passage.to_dict(), "domain": doc["domain"]})
    return records


def summarise(
    records: Sequence[Mapping[str, Any]], chunkers: Sequence[Chunker]
) -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = {}
    for chunker in chunkers:
        lengths = [len(r["text"]) for r in records if r["chunker"] == chunker.name]
        docs = {r["doc_id"] for r in records if r["chunker"] == chunker.name}
        summary[chunker.name] = {
            "documents": len(docs),
            "passages": len(lengths),
            "mean_chars": round(statistics.fmean(lengths), 2) if lengths else None,
            "median_chars": statistics.median(lengths) if lengths else None,
            "config": chunker.config,
        }
    return summary


def write_atomic(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` to a temporary file beside ``path`` and move it into place in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def chunker_names_from_params(path: Path) -> list[str]:
    import yaml

    with path.open(encoding="utf-8") as handle:
        params = yaml.safe_load(handle) or {}
    names = params.get("chunkers") if isinstance(params, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ChunkerConfigError(f"{path}: expected a list of chunker names under 'chunkers'")
    return names


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=Path, default=DEFAULT_DOCUMENTS)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument("--conf-dir", type=Path, default=DEFAULT_CONF_DIR)
    selection = parser.add_mutually_exclusive_group(required=True)
    selection.add_argument("--chunkers", nargs="+", help="chunker config names")
    selection.add_argument(
        "--params", type=Path, help="YAML file whose 'chunkers' list names the chunkers"
    )
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        names = args.chunkers or chunker_names_from_params(args.params)
        chunkers = load_chunkers(names, args.conf_dir)
        documents = read_jsonl(args.documents)
        if not documents:
            raise ValueError(f"{args.documents}: no documents")
        check_documents(documents, str(args.documents))
        records = chunk_documents(documents, chunkers, progress=not args.no_progress)
    except (ChunkerConfigError, ChunkingError, ValueError, FileNotFoundError) as exc:
        print(f"chunk: error: {exc}", file=sys.stderr)
        return 1
    write_atomic(
        args.out_dir / "passages.jsonl",
        (json.dumps(r, ensure_ascii=False) + "\n" for r in records),
    )
    summary = summarise(records, chunkers)
    write_atomic(args.out_dir / "summary.json", [json.dumps(summary, indent=2) + "\n"])
    print(
        f"chunk: {len(records)} passages from {len(documents)} documents x {len(chunkers)} "
        f"chunkers -> {args.out_dir}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
