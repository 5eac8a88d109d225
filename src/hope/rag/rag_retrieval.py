"""Dense retrieval per (chunker, domain): every passage of the domain's documents is indexed, a
question retrieves the top-k passages by cosine similarity, ties broken by passage id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hope.core.metrics.similarity import GridVectors
from hope.core.stage_records import check_passages
from hope.models.embeddings import Embedder


@dataclass(frozen=True)
class Hit:
    passage_id: str
    doc_id: str
    score: float
    text: str


class PassageIndex:
    """Unit-normalised passage vectors of one (chunker, domain); cosine = dot product."""

    def __init__(
        self,
        passage_ids: Sequence[str],
        doc_ids: Sequence[str],
        texts: Sequence[str],
        vectors: np.ndarray,
    ):
        if not (len(passage_ids) == len(doc_ids) == len(texts) == len(vectors)):
            raise ValueError("passage ids, doc ids, texts and vectors differ in length")
        if len(set(passage_ids)) != len(passage_ids):
            raise ValueError("passage ids in one index are not unique")
        self.passage_ids = list(passage_ids)
        self.doc_ids = list(doc_ids)
        self.texts = list(texts)
        self.vectors = GridVectors(vectors)

    def __len__(self) -> int:
        return len(self.passage_ids)

    def search(self, query: np.ndarray, k: int) -> list[Hit]:
        if k < 1:
            raise ValueError(f"top_k must be >= 1, got {k}")
        # Exact on the grid, so ties are real ties on any CPU; they go to the lower passage id.
        scores = GridVectors(np.asarray(query)).cosine(self.vectors)[0]
        order = sorted(range(len(self)), key=lambda i: (-scores[i], self.passage_ids[i]))
        return [
            Hit(self.passage_ids[i], self.doc_ids[i], float(scores[i]), self.texts[i])
            for i in order[:k]
        ]


def build_indexes(
    passages: Sequence[Mapping[str, Any]], embedder: Embedder
) -> dict[tuple[str, str], PassageIndex]:
    """One index per (chunker, domain), passages in input order; all texts embedded in one go."""
    check_passages(passages)
    if not passages:
        return {}
    vectors = embedder.embed([p["text"] for p in passages])
    grouped: dict[tuple[str, str], list[int]] = defaultdict(list)
    for row, passage in enumerate(passages):
        grouped[(passage["chunker"], passage["domain"])].append(row)
    return {
        key: PassageIndex(
            [passages[r]["passage_id"] for r in rows],
            [passages[r]["doc_id"] for r in rows],
            [passages[r]["text"] for r in rows],
            vectors[rows],
        )
        for key, rows in grouped.items()
    }


def retrieve(
    questions: Sequence[Mapping[str, Any]],
    indexes: Mapping[tuple[str, str], PassageIndex],
    embedder: Embedder,
    *,
    chunkers: Sequence[str],
    top_k: int,
) -> dict[tuple[str, str], list[Hit]]:
    """``(question_id, chunker) -> hits`` for every question and chunker."""
    if not questions:
        return {}
    query_vectors = embedder.embed([q["question"] for q in questions])
    results: dict[tuple[str, str], list[Hit]] = {}
    for chunker in chunkers:
        for question, vector in zip(questions, query_vectors, strict=True):
            index = indexes.get((chunker, question["domain"]))
            if index is None or len(index) == 0:
                raise ValueError(
                    f"chunker {chunker!r} has no passages in domain {question['domain']!r} "
                    f"(question {question['question_id']!r})"
                )
            results[(question["question_id"], chunker)] = index.search(vector, top_k)
    return results
