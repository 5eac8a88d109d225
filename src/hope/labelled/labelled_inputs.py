"""The inputs of labelled retrieval: questions with gold character spans, and a chunking's passages.

Offsets are Unicode code points into the corpus (Python string indices), ``[start, end)``, as in
Chroma's general evaluation set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class LabelledInputError(ValueError):
    """Questions or passages that do not fit the corpus; the message names the input."""


@dataclass(frozen=True)
class GoldReference:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class LabelledQuestion:
    question: str
    references: tuple[GoldReference, ...]

    @property
    def spans(self) -> list[tuple[int, int]]:
        return [(r.start, r.end) for r in self.references]


@dataclass(frozen=True)
class ChunkPassage:
    """One passage of the chunking; ``start``/``end`` are None when the chunker rewrote the text."""

    text: str
    start: int | None = None
    end: int | None = None


def check_reference(corpus: str, reference: GoldReference, where: str) -> None:
    """LabelledInputError unless ``reference`` is a non-empty span with its text in the corpus."""
    if not 0 <= reference.start < reference.end <= len(corpus):
        raise LabelledInputError(
            f"{where}: reference span [{reference.start}, {reference.end}) is out of range for "
            f"the corpus ({len(corpus)} characters) or empty"
        )
    if corpus[reference.start : reference.end] != reference.text:
        found = corpus[reference.start : reference.end]
        raise LabelledInputError(
            f"{where}: reference text does not match the corpus at [{reference.start}, "
            f"{reference.end}): expected {_preview(reference.text)}, corpus has {_preview(found)}"
        )


def check_passage_span(corpus: str, passage: ChunkPassage, where: str) -> None:
    if (passage.start is None) != (passage.end is None):
        raise LabelledInputError(f"{where}: give both 'start' and 'end', or neither")
    if passage.start is None or passage.end is None:
        return
    if not 0 <= passage.start < passage.end <= len(corpus):
        raise LabelledInputError(
            f"{where}: passage span [{passage.start}, {passage.end}) is out of range for the "
            f"corpus ({len(corpus)} characters) or empty"
        )
    if corpus[passage.start : passage.end] != passage.text:
        raise LabelledInputError(
            f"{where}: passage text does not match the corpus at [{passage.start}, {passage.end})"
        )


def locate_passages(
    corpus: str, passages: Sequence[ChunkPassage]
) -> tuple[list[tuple[int, int]] | None, str | None]:
    """Spans for every passage, or ``(None, reason)`` if one cannot be placed in the corpus.

    A passage without a span is matched by exact substring search, scanning forward from just after
    the previous passage's start so that repeated text maps to the occurrence in reading order, then
    from the beginning. A passage found nowhere makes the whole chunking not evaluable: scoring
    the rest would silently count its text as never retrieved.
    """
    spans: list[tuple[int, int]] = []
    unmatched: list[int] = []
    floor = 0
    for index, passage in enumerate(passages):
        if passage.start is not None and passage.end is not None:
            spans.append((passage.start, passage.end))
            floor = passage.start + 1
            continue
        found = corpus.find(passage.text, floor)
        if found < 0:
            found = corpus.find(passage.text)
        if found < 0:
            unmatched.append(index)
            continue
        spans.append((found, found + len(passage.text)))
        floor = found + 1
    if unmatched:
        shown = ", ".join(str(i) for i in unmatched[:5])
        more = f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else ""
        return None, (
            f"{len(unmatched)} of {len(passages)} passages have no span and are not an exact "
            f"substring of the corpus (passages {shown}{more}); their gold characters cannot be "
            "attributed, so the chunking is not evaluable"
        )
    return spans, None


def _preview(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[:width] + "…")
