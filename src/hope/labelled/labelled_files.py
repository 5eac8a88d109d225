"""Reading labelled questions and passages from JSON lines, with errors naming file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hope.core.io import iter_json_objects
from hope.labelled.labelled_inputs import (
    ChunkPassage,
    GoldReference,
    LabelledInputError,
    LabelledQuestion,
    check_passage_span,
    check_reference,
)


def _offset(value: Any, name: str, where: str) -> int:
    # bool is an int subclass; true/false as an offset is a mistake, not 1/0.
    if isinstance(value, bool) or not isinstance(value, int):
        raise LabelledInputError(f"{where}: {name!r} must be an integer, got {value!r}")
    return value


def read_questions(
    path: str | Path,
    corpus: str,
    corpus_name: str | None = None,
    *,
    outside_slice_ok: bool = False,
) -> tuple[list[LabelledQuestion], int]:
    """Questions of ``corpus`` from ``{"corpus"?, "question", "references": [{"start", "end",
    "text"}]}`` lines, every reference checked against the corpus, and how many lines were
    skipped: lines naming another corpus (``corpus_name`` None keeps every line) and, with
    ``outside_slice_ok`` (``corpus`` is the beginning of the labelled text), questions with a
    reference ending past ``corpus``."""
    questions: list[LabelledQuestion] = []
    other_corpus = 0
    for where, record in iter_json_objects(path, "questions file"):
        name = record.get("corpus")
        if corpus_name is not None and name is not None and name != corpus_name:
            other_corpus += 1
            continue
        if outside_slice_ok and any(
            isinstance(r, dict) and isinstance(r.get("end"), int) and r["end"] > len(corpus)
            for r in record.get("references") or []
        ):
            other_corpus += 1
            continue
        text = record.get("question")
        if not isinstance(text, str) or not text.strip():
            raise LabelledInputError(f"{where}: no non-empty 'question' string")
        raw_refs = record.get("references")
        if not isinstance(raw_refs, list) or not raw_refs:
            raise LabelledInputError(f"{where}: 'references' must be a non-empty list")
        references = []
        for number, raw in enumerate(raw_refs):
            ref_where = f"{where}, reference {number}"
            if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
                raise LabelledInputError(
                    f"{ref_where}: expected an object with 'start', 'end' and 'text'"
                )
            reference = GoldReference(
                start=_offset(raw.get("start"), "start", ref_where),
                end=_offset(raw.get("end"), "end", ref_where),
                text=raw["text"],
            )
            check_reference(corpus, reference, ref_where)
            references.append(reference)
        questions.append(LabelledQuestion(text, tuple(references)))
    if not questions:
        selected = f" for corpus {corpus_name!r}" if corpus_name is not None else ""
        raise LabelledInputError(
            f"questions file {path}: no questions{selected} ({other_corpus} lines name another "
            "corpus)"
        )
    return questions, other_corpus


def read_passages(path: str | Path, corpus: str) -> list[ChunkPassage]:
    """Passages from ``{"text", "start"?, "end"?}`` lines; a given span must match the corpus."""
    passages: list[ChunkPassage] = []
    for where, record in iter_json_objects(path, "passages file"):
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            raise LabelledInputError(f"{where}: no non-empty 'text' string")
        start, end = record.get("start"), record.get("end")
        passage = ChunkPassage(
            text=text,
            start=None if start is None else _offset(start, "start", where),
            end=None if end is None else _offset(end, "end", where),
        )
        check_passage_span(corpus, passage, where)
        passages.append(passage)
    if not passages:
        raise LabelledInputError(f"passages file {path}: no passages")
    return passages
