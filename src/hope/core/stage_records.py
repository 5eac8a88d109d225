"""The records the stages hand each other as JSON lines (documents, passages, questions), checked.

Records stay plain dicts: every stage adds fields and passes them on. A check guarantees the fields
a consumer reads and unique ids where records are keyed by them; errors are ``ValueError`` naming
the source and the record. A prepared document's full schema is ``corpora.schema.validate_record``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

DOCUMENT_FIELDS = ("doc_id", "text", "domain")
QUESTION_FIELDS = ("question_id", "domain", "doc_id", "question", "reference")
# Scoring and BLEU put a document's passages back in order; retrieval indexes them per domain.
SCORED_PASSAGE_FIELDS = ("passage_id", "doc_id", "chunker", "index", "text")
RETRIEVED_PASSAGE_FIELDS = ("passage_id", "doc_id", "chunker", "text", "domain")


def check_records(
    records: Sequence[Mapping[str, Any]],
    kind: str,
    fields: Sequence[str],
    source: str,
    key: str | None = None,
) -> None:
    """Every record has ``fields`` (a ``text`` among them is a string); ``key`` is unique."""
    seen: set[Any] = set()
    for position, record in enumerate(records, start=1):
        missing = [f for f in fields if f not in record]
        if missing:
            raise ValueError(f"{source}: {kind} #{position} lacks field(s) {missing}")
        label = record[key] if key else f"#{position}"
        if "text" in fields and not isinstance(record["text"], str):
            raise ValueError(f"{source}: {kind} {label!r} has a non-string text")
        if key is not None:
            if label in seen:
                raise ValueError(f"{source}: duplicate {key} {label!r}")
            seen.add(label)


def check_documents(documents: Sequence[Mapping[str, Any]], source: str = "documents") -> None:
    check_records(documents, "document", DOCUMENT_FIELDS, source, key="doc_id")


def check_questions(questions: Sequence[Mapping[str, Any]], source: str = "questions") -> None:
    check_records(questions, "question", QUESTION_FIELDS, source, key="question_id")


def check_passages(
    passages: Sequence[Mapping[str, Any]],
    source: str = "passages",
    fields: Sequence[str] = RETRIEVED_PASSAGE_FIELDS,
) -> None:
    check_records(passages, "passage", fields, source)


def group_passages(
    passages: Sequence[Mapping[str, Any]], doc_ids: set[str], source: str = "passages"
) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Passages per (doc_id, chunker) in ``index`` order, pairs in first-seen order; a passage
    of a document not in ``doc_ids`` is an error."""
    check_passages(passages, source, SCORED_PASSAGE_FIELDS)
    pairs: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in passages:
        if record["doc_id"] not in doc_ids:
            raise ValueError(
                f"{source}: passage {record['passage_id']!r} belongs to unknown document "
                f"{record['doc_id']!r}"
            )
        pairs[(record["doc_id"], record["chunker"])].append(record)
    for records in pairs.values():
        records.sort(key=lambda r: int(r["index"]))
    return dict(pairs)
