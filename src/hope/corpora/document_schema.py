"""The document record every corpus is normalised to, and the domain vocabulary of Table 1."""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass, fields
from typing import Any

from hope.core.io import text_sha256

# Order follows Table 1 of the paper; it is also the row order of the reproduced table.
DOMAINS: tuple[str, ...] = ("news", "arxiv", "wiki", "manuals", "debates", "tos", "cord19")
DOMAIN_LABELS: dict[str, str] = {
    "news": "Newspapers",
    "arxiv": "Academic articles",
    "wiki": "Wiki articles",
    "manuals": "Technical manuals",
    "debates": "Debates",
    "tos": "Terms of service",
    "cord19": "Medical",
}
# Documents per domain in Table 1 (131 in total).
PAPER_COUNTS: dict[str, int] = {
    "news": 20,
    "arxiv": 12,
    "wiki": 54,
    "manuals": 10,
    "debates": 5,
    "tos": 10,
    "cord19": 20,
}


class SchemaError(ValueError):
    pass


def normalise_text(text: str) -> str:
    """Unicode NFC, Unix newlines, no trailing spaces, at most one blank line between paragraphs.

    Chunkers count characters, so the same document must have the same length whatever the
    source's line-ending or byte-order-mark conventions were.
    """
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = text.replace("\ufeff", "").replace("\u00a0", " ")
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    blank = False
    for line in lines:
        if not line.strip():
            blank = bool(out)
            continue
        if blank:
            out.append("")
            blank = False
        out.append(line)
    return "\n".join(out).strip()


@dataclass(frozen=True)
class Document:
    doc_id: str
    domain: str
    title: str
    text: str
    source: str
    url: str
    license: str
    n_chars: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Document))


def make_document(
    *, doc_id: str, domain: str, title: str, text: str, source: str, url: str, license: str
) -> Document:
    if domain not in DOMAIN_LABELS:
        raise SchemaError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    clean = normalise_text(text)
    return Document(
        doc_id=doc_id,
        domain=domain,
        title=" ".join(title.split()),
        text=clean,
        source=source,
        url=url,
        license=license,
        n_chars=len(clean),
        sha256=text_sha256(clean),
    )


def validate_record(record: dict[str, Any]) -> Document:
    """Check one row of documents.jsonl against the schema, including its derived fields."""
    if set(record) != set(FIELDS):
        missing = sorted(set(FIELDS) - set(record))
        extra = sorted(set(record) - set(FIELDS))
        raise SchemaError(f"record fields differ from the schema: missing={missing} extra={extra}")
    for name in FIELDS:
        expected = int if name == "n_chars" else str
        if not isinstance(record[name], expected) or isinstance(record[name], bool):
            raise SchemaError(f"field {name!r} of {record.get('doc_id')!r} is not {expected}")
    doc = Document(**record)
    if doc.domain not in DOMAIN_LABELS:
        raise SchemaError(f"unknown domain {doc.domain!r} in {doc.doc_id!r}")
    if not doc.text:
        raise SchemaError(f"document {doc.doc_id!r} has no text")
    if doc.n_chars != len(doc.text):
        raise SchemaError(f"n_chars of {doc.doc_id!r} is {doc.n_chars}, text has {len(doc.text)}")
    if doc.sha256 != text_sha256(doc.text):
        raise SchemaError(f"sha256 of {doc.doc_id!r} does not match its text")
    return doc
