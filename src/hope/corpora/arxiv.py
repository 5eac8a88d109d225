"""arXiv full text in the unarXive format (one paper per JSON line; Saier & Färber).

Files may be ``*.jsonl``, ``*.jsonl.gz`` or a tar archive of them (the unarXive data sample). Only
papers whose arXiv licence is open (CC BY, CC BY-SA, CC0 by default) are kept. unarXive replaces
formulas, citations, figures and tables with ``{{type:id}}`` placeholders; they are normalised to
short bracketed markers (or dropped) so that they do not inflate character counts.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hope.corpora.base import (
    Candidate,
    CorpusError,
    Rejected,
    SkipDocument,
    SourceSpec,
    download_files,
)
from hope.corpora.document_schema import make_document

DEFAULT_LICENSES = (
    "creativecommons.org/licenses/by/",
    "creativecommons.org/licenses/by-sa/",
    "creativecommons.org/publicdomain/zero/",
)
_PLACEHOLDER = re.compile(r"\{\{(formula|cite|figure|table|ref)[^{}]*\}\}")
_ONE_PLACEHOLDER = r"\{\{(?:formula|cite|figure|table|ref)[^{}]*\}\}"
_PLACEHOLDER_RUN = re.compile(rf"{_ONE_PLACEHOLDER}(?:[\s,;]*{_ONE_PLACEHOLDER})*")
_MARKERS = {"formula": "[formula]", "cite": "[citation]", "figure": "[figure]", "table": "[table]"}
_LICENSE_URL = re.compile(
    r"creativecommons\.org/(?:licenses/([a-z-]+)|publicdomain/(zero))/([\d.]+)"
)


def download(spec: SourceSpec, out_dir: Path) -> dict[str, Any]:
    return {"files": download_files(spec, out_dir)}


def license_name(url: str) -> str:
    match = _LICENSE_URL.search(url or "")
    if not match:
        return url or "unknown"
    kind, zero, version = match.groups()
    return f"CC0 {version}" if zero else f"CC {kind.upper()} {version}"


def normalise_placeholders(text: str, mode: str = "mark") -> str:
    if mode not in ("mark", "drop"):
        raise CorpusError(f"arxiv: placeholders must be 'mark' or 'drop', got {mode!r}")
    if mode == "drop":
        # "[1], [2] and" must become "and", not ", and": a run of placeholders goes as one.
        text = _PLACEHOLDER_RUN.sub("", text)
        text = re.sub(r"\(\s*[,;]?\s*\)", "", text)
        text = re.sub(r"[ \t]+([,.;:)])", r"\1", text)
    else:
        text = _PLACEHOLDER.sub(lambda m: _MARKERS.get(m.group(1), "[reference]"), text)
        # A run of the same marker (a displayed equation split into pieces, "[1], [2], [3]")
        # carries no more information than one marker.
        for marker in set(_MARKERS.values()):
            esc = re.escape(marker)
            text = re.sub(rf"{esc}(?:[\s,;]*{esc})+", marker, text)
        text = re.sub(r"\][ \t]+([,.;:])", r"]\1", text)
    return re.sub(r"[ \t]{2,}", " ", text)


def body_chars(record: dict[str, Any]) -> int:
    return sum(len(_PLACEHOLDER.sub("", p.get("text", ""))) for p in record.get("body_text") or [])


def paper_text(record: dict[str, Any], mode: str = "mark") -> str:
    parts: list[str] = []
    abstract = record.get("abstract") or {}
    abstract_text = abstract.get("text", "") if isinstance(abstract, dict) else str(abstract)
    if abstract_text.strip():
        # arXiv metadata abstracts are hard-wrapped at ~80 columns; blank lines separate paragraphs.
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", abstract_text)]
        abstract_text = "\n\n".join(p for p in paragraphs if p)
        parts += ["Abstract", normalise_placeholders(abstract_text, mode).strip()]
    heading = None
    for para in record.get("body_text") or []:
        # Section titles carry placeholders too ("Choosing the integer {{formula:...}}").
        raw_section = f"{para.get('sec_number') or ''} {para.get('section') or ''}"
        section = normalise_placeholders(" ".join(raw_section.split()), mode)
        if section and section != heading:
            parts.append(section)
            heading = section
        text = normalise_placeholders(para.get("text", ""), mode).strip()
        if text:
            parts.append(text)
    return "\n\n".join(parts)


def _iter_members(path: Path) -> Iterator[tuple[str, bytes]]:
    name = path.name
    if name.endswith((".tar", ".tar.gz", ".tgz")):
        try:
            with tarfile.open(path) as tar:
                for member in tar:
                    if member.isfile() and member.name.endswith((".jsonl", ".jsonl.gz")):
                        data = tar.extractfile(member).read()  # type: ignore[union-attr]
                        if member.name.endswith(".gz"):
                            data = gzip.decompress(data)
                        yield f"{name}:{member.name}", data
        except tarfile.TarError as exc:
            raise CorpusError(f"{path}: not a readable tar archive: {exc}") from exc
    elif name.endswith(".gz"):
        try:
            yield name, gzip.decompress(path.read_bytes())
        except (OSError, EOFError) as exc:
            raise CorpusError(f"{path}: not a readable gzip file: {exc}") from exc
    else:
        yield name, path.read_bytes()


def candidates(
    spec: SourceSpec, raw_dir: Path, manifest: dict[str, Any]
) -> Iterator[Candidate | Rejected]:
    allowed = tuple(spec.options.get("licenses") or DEFAULT_LICENSES)
    mode = spec.options.get("placeholders", "mark")
    # unarXive's LaTeX conversion sometimes fails and leaves a body of a few stray macro lines
    # behind an intact abstract; such a paper is not the full text it claims to be.
    min_body = int(spec.options.get("min_body_chars", 2000))
    for rec in manifest["files"]:
        for origin, data in _iter_members(raw_dir / rec["file"]):
            for lineno, line in enumerate(io.BytesIO(data), start=1):
                if not line.strip():
                    continue
                try:
                    paper = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CorpusError(f"{origin}: line {lineno} is not valid JSON: {exc}") from exc
                meta = paper.get("metadata") or {}
                paper_id = str(paper.get("paper_id") or meta.get("id") or f"{origin}:{lineno}")
                lic = meta.get("license") or ""
                if not any(a in lic for a in allowed):
                    yield Rejected(paper_id, f"licence not open: {license_name(lic)}")
                    continue

                def load(paper: dict[str, Any] = paper, paper_id: str = paper_id, lic: str = lic):
                    if body_chars(paper) < min_body:
                        raise SkipDocument(
                            f"body text under min_body_chars {min_body} (failed LaTeX conversion?)"
                        )
                    return make_document(
                        doc_id=f"arxiv-{paper_id}",
                        domain=spec.domain,
                        title=(paper.get("metadata") or {}).get("title") or paper_id,
                        text=paper_text(paper, mode),
                        source=spec.source_label,
                        url=f"https://arxiv.org/abs/{paper_id}",
                        license=license_name(lic),
                    )

                yield Candidate(key=paper_id, title=meta.get("title") or "", load=load)
