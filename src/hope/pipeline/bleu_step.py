"""DVC stage ``bleu``: the paper's BLEU baseline for every (document, chunker) pair. This module is
the stage's work; ``hope.stages.bleu_stage`` is its ``main`` (arguments, the files it reads and
writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hope.chunking.bleu_baseline import (
    DEFAULT_JOINER,
    DEFAULT_TOKENIZE,
    document_bleu,
)
from hope.core.stage_records import check_documents, group_passages

DEFAULT_OUTPUT = Path("data/bleu/bleu.jsonl")


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
    pairs = group_passages(passages, set(texts))
    records: list[dict[str, Any]] = []
    for chunker in dict.fromkeys(chunker for _, chunker in pairs):
        for doc_id, text in texts.items():
            doc_passages = pairs.get((doc_id, chunker))
            if not doc_passages:
                raise ValueError(f"chunker {chunker!r} has no passages for document {doc_id!r}")
            result = document_bleu(
                text, [p["text"] for p in doc_passages], tokenize=tokenize, joiner=joiner
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
