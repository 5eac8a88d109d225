"""The passage record every chunker returns, and the checks that make chunker output trustworthy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any


class ChunkingError(RuntimeError):
    """A chunker produced output that the rest of the pipeline cannot use."""


def passage_id(doc_id: str, chunker: str, index: int) -> str:
    # Zero-padded so that ids sort in passage order as plain strings.
    return f"{doc_id}::{chunker}::{index:04d}"


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage of one document under one chunker.

    ``start``/``end`` are character offsets into the original document with
    ``document[start:end] == text``; both are ``None`` when the chunker rewrites text, so no span of
    the document equals the passage.
    """

    passage_id: str
    doc_id: str
    chunker: str
    index: int
    text: str
    start: int | None = None
    end: int | None = None

    def __post_init__(self) -> None:
        if (self.start is None) != (self.end is None):
            raise ValueError(
                f"passage {self.passage_id}: start and end must both be set or both be None"
            )
        if self.start is not None and not 0 <= self.start <= self.end:  # type: ignore[operator]
            raise ValueError(
                f"passage {self.passage_id}: invalid span start={self.start} end={self.end}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Passage:
        return cls(
            passage_id=record["passage_id"],
            doc_id=record["doc_id"],
            chunker=record["chunker"],
            index=int(record["index"]),
            text=record["text"],
            start=record.get("start"),
            end=record.get("end"),
        )


def _raw_text_and_span(item: Any) -> tuple[str, int | None, int | None]:
    if isinstance(item, Passage):
        return item.text, item.start, item.end
    if isinstance(item, str):
        return item, None, None
    if isinstance(item, Mapping) and isinstance(item.get("text"), str):
        return item["text"], item.get("start"), item.get("end")
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return text, None, None
    raise TypeError(
        f"a chunker must return Passage objects, strings or mappings with 'text'; got "
        f"{type(item).__name__}"
    )


def build_passages(
    items: Iterable[Any],
    document_text: str,
    doc_id: str,
    chunker_name: str,
    *,
    search_floor_back: int = 0,
) -> list[Passage]:
    """Turn whatever a chunker returned into numbered, checked passages of ``doc_id``.

    Items may be ``Passage`` objects, strings, or mappings with ``text`` (and optionally
    ``start``/``end``). A given span must reproduce the text exactly, or the chunker is reported as
    broken. A string without a span is located in the document, scanning forward from the
    previous passage so that repeated boilerplate maps to the right occurrence;
    ``search_floor_back`` lets the scan start that many characters before the previous passage's
    end (the chunk overlap). Text not found verbatim keeps ``start=end=None``. Whitespace-only
    items are dropped: they carry no content for retrieval and would only add empty passages.
    """
    passages: list[Passage] = []
    prev_start = -1
    prev_end = 0
    for item in items:
        text, start, end = _raw_text_and_span(item)
        if not text.strip():
            continue
        where = f"chunker {chunker_name!r} on document {doc_id!r}"
        if start is not None or end is not None:
            if start is None or end is None or document_text[start:end] != text:
                raise ChunkingError(
                    f"{where}: passage {len(passages)} claims span [{start}, {end}) but that span "
                    "of the document does not equal the passage text"
                )
        else:
            floor = max(prev_start + 1, prev_end - search_floor_back, 0) if passages else 0
            found = document_text.find(text, floor)
            if found < 0 and passages:
                # Splitters that merge pieces can start a passage before the expected floor.
                found = document_text.find(text, prev_start + 1)
            if found >= 0:
                start, end = found, found + len(text)
        index = len(passages)
        passages.append(
            Passage(
                passage_id=passage_id(doc_id, chunker_name, index),
                doc_id=doc_id,
                chunker=chunker_name,
                index=index,
                text=text,
                start=start,
                end=end,
            )
        )
        if start is not None and end is not None:
            prev_start, prev_end = start, end
    return passages
