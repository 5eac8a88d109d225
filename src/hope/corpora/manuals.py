"""Technical manuals: PDF files, from a list of URLs/paths with pinned SHA-256 or a user's folder.

The paper used Volkswagen car owner's manuals. They are copyrighted, so they are never shipped or
committed: a user lists the PDFs (``files`` relative to ``base_url``, or absolute URLs, with
``checksums``) or points ``folder`` at PDFs they hold. Text is extracted with pypdf; a corrupt or
text-less PDF (a scan without a text layer) is skipped with its reason recorded.
"""

from __future__ import annotations

import logging
import posixpath
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from hope.core.io import file_sha256
from hope.corpora.base import Candidate, CorpusError, SkipDocument, SourceSpec
from hope.corpora.document_schema import make_document
from hope.corpora.fetch import fetch, is_remote

log = logging.getLogger(__name__)
# pypdf warns on every slightly malformed object; the outcome that matters is logged here.
logging.getLogger("pypdf").setLevel(logging.ERROR)

_DOT_LEADERS = re.compile(r"(?:[ \t]?\.){5,}[ \t]*")
_NOT_TITLES = (".dvi", ".tex", ".doc", ".docx", ".pdf", "untitled", "microsoft word")


def _name(entry: str) -> str:
    path = urlsplit(entry).path if is_remote(entry) else entry
    return posixpath.basename(unquote(path))


def download(spec: SourceSpec, out_dir: Path) -> dict[str, Any]:
    folder = spec.options.get("folder")
    if folder:
        base = folder
        files = sorted(p.name for p in Path(folder).glob("*.pdf"))
        if not files:
            raise CorpusError(f"manuals: no *.pdf files in folder {folder}")
    else:
        base, files = spec.base, list(spec.files)
    if not files:
        raise CorpusError(
            "manuals: no PDFs configured. Car owner's manuals are copyrighted and not shipped: set "
            "corpora.sources.manuals.folder to a folder of PDFs, or list PDF URLs in "
            "corpora.sources.manuals.files with their sha256 in checksums"
        )
    records = []
    for entry in files:
        name = _name(entry)
        if not name.lower().endswith(".pdf"):
            raise CorpusError(f"manuals: {entry} is not a .pdf file")
        # An absolute URL in the list is fetched as is; anything else is relative to the base.
        got = fetch(
            entry if is_remote(entry) else base,
            "" if is_remote(entry) else entry,
            out_dir / name,
            sha256=spec.checksums.get(entry),
        )
        records.append({**got.record(out_dir), "verified": bool(spec.checksums.get(entry))})
    return {"files": records}


def extract_pdf_text(path: Path) -> tuple[str, str]:
    """Return (text, metadata title); raise SkipDocument for a corrupt or text-less PDF."""
    try:
        reader = PdfReader(path)
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise SkipDocument(f"corrupt PDF {path.name}: {type(exc).__name__}: {exc}") from exc
    # NFKC folds the ligatures (ﬁ, ﬂ) that PDF text layers are full of into plain letters.
    text = unicodedata.normalize("NFKC", "\n\n".join(p.strip() for p in pages if p.strip()))
    # Tables of contents come out as long runs of dot leaders (". . . . ."), which would count as
    # hundreds of characters of text; a short ellipsis keeps the line readable.
    text = _DOT_LEADERS.sub(" ... ", text)
    if not text.strip():
        raise SkipDocument(f"no extractable text in {path.name} (a scan without a text layer?)")
    return text, str(meta_title)


def _title(name: str, meta_title: str, titles: dict[str, str]) -> str:
    if name in titles:
        return titles[name]
    if meta_title.strip() and not any(t in meta_title.lower() for t in _NOT_TITLES):
        return meta_title.strip()
    return Path(name).stem


def candidates(spec: SourceSpec, raw_dir: Path, manifest: dict[str, Any]) -> Iterator[Candidate]:
    titles = dict(spec.options.get("pdf_titles") or {})
    licenses = dict(spec.options.get("pdf_licenses") or {})
    for rec in manifest["files"]:
        path = raw_dir / rec["file"]
        name = path.name

        def load(path: Path = path, rec: dict[str, Any] = rec, name: str = name):
            if file_sha256(path) != rec["sha256"]:
                raise CorpusError(f"{path} changed since it was downloaded (sha256 differs)")
            text, meta_title = extract_pdf_text(path)
            return make_document(
                doc_id=f"manuals-{rec['sha256'][:16]}",
                domain=spec.domain,
                title=_title(name, meta_title, titles),
                text=text,
                source=spec.source_label,
                url=rec["location"] if is_remote(rec["location"]) else "",
                license=licenses.get(name) or spec.license or "see the manual's copyright notice",
            )

        yield Candidate(key=rec["sha256"], title=titles.get(name, Path(name).stem), load=load)
