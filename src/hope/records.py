"""The records the stages hand each other as JSON lines (documents, passages, questions), checked.

Records stay plain dicts, since every stage adds its own fields and writes them on unchanged; a
check only guarantees the fields a consumer reads, and unique ids where the records are keyed by
them. Errors are ``ValueError`` naming the source, the record and the field. The full schema of a
prepared document (derived fields included) is :func:`hope.corpora.schema.validate_record`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RecordKind:
    name: str
    fields: tuple[str, ...]
    key: str | None = None  # a field whose values must be unique
    strings: tuple[str, ...] = ()  # fields that must hold text

    def check(self, records: Sequence[Mapping[str, Any]], source: str) -> None:
        seen: set[Any] = set()
        for position, record in enumerate(records, start=1):
            missing = [f for f in self.fields if f not in record]
            if missing:
                raise ValueError(f"{source}: {self.name} #{position} lacks field(s) {missing}")
            label = record[self.key] if self.key else f"#{position}"
            for name in self.strings:
                if not isinstance(record[name], str):
                    raise ValueError(f"{source}: {self.name} {label!r} has a non-string {name}")
            if self.key is None:
                continue
            if label in seen:
                raise ValueError(f"{source}: duplicate {self.key} {label!r}")
            seen.add(label)


DOCUMENT = RecordKind("document", ("doc_id", "text", "domain"), key="doc_id", strings=("text",))
# Scoring and BLEU put a document's passages back in order; retrieval indexes them per domain.
SCORED_PASSAGE = RecordKind(
    "passage", ("passage_id", "doc_id", "chunker", "index", "text"), strings=("text",)
)
RETRIEVED_PASSAGE = RecordKind(
    "passage", ("passage_id", "doc_id", "chunker", "text", "domain"), strings=("text",)
)
QUESTION = RecordKind(
    "question", ("question_id", "domain", "doc_id", "question", "reference"), key="question_id"
)


def check_documents(documents: Sequence[Mapping[str, Any]], source: str = "documents") -> None:
    DOCUMENT.check(documents, source)


def check_questions(questions: Sequence[Mapping[str, Any]], source: str = "questions") -> None:
    QUESTION.check(questions, source)


def check_passages(
    passages: Sequence[Mapping[str, Any]],
    source: str = "passages",
    kind: RecordKind = RETRIEVED_PASSAGE,
) -> None:
    kind.check(passages, source)


def group_passages(
    passages: Sequence[Mapping[str, Any]], doc_ids: set[str], source: str = "passages"
) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Passages per (doc_id, chunker) in ``index`` order, pairs in first-seen order; a passage
    of a document not in ``doc_ids`` is an error."""
    check_passages(passages, source, SCORED_PASSAGE)
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
