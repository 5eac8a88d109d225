"""Pile of Law (``pile-of-law/pile-of-law``): raw ``data/train.<subset>.jsonl.xz`` files.

Used for two domains: ``tos`` (terms of service) and ``debates``, whose subset is a parameter
(``undebates``, UN General Debate speeches, or ``euro_parl``, European Parliament debates). The xz
stream is decompressed while it downloads and stops after ``max_lines`` records, so only the head
of a large file is ever transferred; that head is what the download stage stores.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import lzma
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from hope.core.io import write_atomic
from hope.corpora.base import Candidate, CorpusError, SourceSpec, portable_location
from hope.corpora.document_schema import make_document
from hope.corpora.fetch import ChecksumError, join_location, open_location

DEBATE_SUBSETS = ("undebates", "euro_parl")


def head_lines(
    base: str, relpath: str, max_lines: int, *, sha256: str | None = None
) -> tuple[list[bytes], dict[str, Any]]:
    """Read at most ``max_lines`` lines of an xz-compressed JSONL file, streaming."""
    location = join_location(base, relpath)
    with open_location(location) as opened:
        try:
            with lzma.open(opened.stream, "rb") as xz:
                lines = list(itertools.islice(xz, max_lines))
                # One more read tells a file of exactly max_lines lines from a longer one.
                complete = len(lines) < max_lines or xz.readline() == b""
        except lzma.LZMAError as exc:
            raise CorpusError(f"{opened.location}: not a valid xz stream: {exc}") from exc
        info: dict[str, Any] = {
            "location": portable_location(opened.location),
            "lines": len(lines),
            "complete": complete,
            "compressed_bytes_read": opened.stream.bytes_read,
        }
        if opened.headers:
            info["headers"] = opened.headers
        if complete:
            digest = opened.stream.hexdigest()
            if sha256 and digest != sha256.lower():
                raise ChecksumError(
                    f"checksum mismatch for {opened.location}: expected sha256 {sha256}, "
                    f"got {digest}"
                )
            info["sha256"] = digest
            info["verified"] = bool(sha256)
        else:
            # Stopping early means the whole-file checksum cannot be computed; the pinned
            # revision and the hash of the stored head are the provenance instead.
            info["verified"] = False
    return lines, info


def download(spec: SourceSpec, out_dir: Path) -> dict[str, Any]:
    subset = spec.options.get("subset")
    if spec.domain == "debates" and subset not in DEBATE_SUBSETS:
        raise CorpusError(
            f"corpora.sources.debates.subset must be one of {', '.join(DEBATE_SUBSETS)}, "
            f"got {subset!r}"
        )
    max_lines = int(spec.options.get("max_lines", 1000))
    if max_lines < 1:
        raise CorpusError(f"{spec.domain}: max_lines must be positive, got {max_lines}")
    records = []
    for rel in spec.files:
        lines, info = head_lines(spec.base, rel, max_lines, sha256=spec.checksums.get(rel))
        stored = rel.removesuffix(".xz")
        data = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
        write_atomic(out_dir / stored, data)
        records.append({**info, "file": stored, "content_sha256": hashlib.sha256(data).hexdigest()})
    return {"files": records, "max_lines": max_lines}


def title_from(record: dict[str, Any]) -> str:
    path = unquote(urlsplit(record.get("url") or "").path)
    stem = posixpath.splitext(posixpath.basename(path))[0]
    if stem:
        return stem.replace("_", " ") if " " not in stem else stem
    first = (record.get("text") or "").strip().split("\n", 1)[0]
    return first[:120]


def candidates(spec: SourceSpec, raw_dir: Path, manifest: dict[str, Any]) -> Iterator[Candidate]:
    for rec in manifest["files"]:
        path = raw_dir / rec["file"]
        with open(path, "rb") as handle:
            for lineno, line in enumerate(handle, start=1):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CorpusError(f"{path}: line {lineno} is not valid JSON: {exc}") from exc
                if "text" not in record:
                    raise CorpusError(f"{path}: line {lineno} has no 'text' field")
                url = record.get("url") or ""
                key = url or f"{rec['file']}:{lineno}"
                ident = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]

                def load(record: dict[str, Any] = record, ident: str = ident, url: str = url):
                    return make_document(
                        doc_id=f"{spec.domain}-{ident}",
                        domain=spec.domain,
                        title=title_from(record),
                        text=record["text"],
                        source=spec.source_label,
                        url=url,
                        license=spec.license,
                    )

                yield Candidate(key=key, title=title_from(record), load=load)
