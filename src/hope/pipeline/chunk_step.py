"""DVC stage ``chunk``: every selected chunker over every prepared document. This module is the
stage's work; ``hope.stages.chunk_stage`` is its ``main`` (arguments, the files it reads and
writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.chunking.registry import Chunker
from hope.core.stage_records import check_documents

DEFAULT_OUT_DIR = Path("data/chunks")


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
    return [record for chunker, doc in pairs for record in chunk_pair(chunker, doc)]


def chunk_pair(chunker: Chunker, document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The passage records (with the document's ``domain``) of one document by one chunker."""
    return [
        {**passage.to_dict(), "domain": document["domain"]}
        for passage in chunker.chunk(document["text"], document["doc_id"])
    ]


def passage_sizes(records: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, str, int]]:
    """``(chunker, doc_id, characters)`` of each passage record, what ``summarise`` reads."""
    for record in records:
        yield record["chunker"], record["doc_id"], len(record["text"])


def summarise(
    sizes: Iterable[tuple[str, str, int]], chunkers: Sequence[Chunker]
) -> dict[str, dict[str, Any]]:
    """Per chunker: documents, passages, mean and median characters (``passage_sizes``)."""
    lengths: dict[str, list[int]] = {chunker.name: [] for chunker in chunkers}
    docs: dict[str, set[str]] = {chunker.name: set() for chunker in chunkers}
    for chunker, doc_id, chars in sizes:
        if chunker in lengths:
            lengths[chunker].append(chars)
            docs[chunker].add(doc_id)
    summary: dict[str, dict[str, Any]] = {}
    for chunker in chunkers:
        chars = lengths[chunker.name]
        summary[chunker.name] = {
            "documents": len(docs[chunker.name]),
            "passages": len(chars),
            "mean_chars": round(statistics.fmean(chars), 2) if chars else None,
            "median_chars": statistics.median(chars) if chars else None,
            "config": chunker.config,
        }
    return summary
