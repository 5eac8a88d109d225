"""CORD-19 (AI2): a release's ``metadata.csv`` plus ``document_parses`` JSON (``body_text[].text``).

The download stage reads ``metadata.csv`` in file order, applies the licence filter, keeps papers
that have a full-text parse (the PMC parse is preferred, as AI2 recommends, else the first PDF
parse) and stops after ``max_papers`` of them; only those papers' parse files are transferred.
Parses are read either from an extracted release (``document_parses/...`` under the base) or, as
AI2 publishes them, from inside ``document_parses.tar.gz`` (option ``parses_archive``).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import tarfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hope.core.io import write_atomic
from hope.corpora.base import Candidate, CorpusError, Rejected, SkipDocument, SourceSpec
from hope.corpora.document_schema import make_document
from hope.corpora.fetch import Fetched, FetchError, fetch

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = (
    "cord_uid",
    "title",
    "license",
    "abstract",
    "pdf_json_files",
    "pmc_json_files",
    "url",
    "doi",
)


def _split(value: str) -> list[str]:
    return [v.strip() for v in (value or "").split(";") if v.strip()]


def read_metadata(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot read CORD-19 metadata: {exc}") from exc
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise CorpusError(
            f"{path}: not a CORD-19 metadata.csv of 2020-06 or later (missing columns {missing})"
        )
    return list(reader)


def parse_path(row: dict[str, str]) -> str | None:
    pmc = _split(row.get("pmc_json_files", ""))
    pdf = _split(row.get("pdf_json_files", ""))
    return (pmc or pdf or [None])[0]


def select_rows(
    rows: list[dict[str, str]], licenses: list[str], max_papers: int
) -> tuple[list[dict[str, str]], Counter]:
    """Metadata rows to fetch, in file order, and why the others before the cut were left out."""
    chosen: list[dict[str, str]] = []
    excluded: Counter = Counter()
    seen: set[str] = set()
    for row in rows:
        if len(chosen) >= max_papers:
            break
        uid = row["cord_uid"]
        if uid in seen:
            # CORD-19 lists a paper once per source it was found in; the first row is kept.
            excluded["duplicate cord_uid row"] += 1
            continue
        seen.add(uid)
        if licenses and row.get("license", "") not in licenses:
            excluded[f"licence not selected: {row.get('license') or '(none)'}"] += 1
            continue
        if parse_path(row) is None:
            excluded["no full-text parse"] += 1
            continue
        chosen.append(row)
    return chosen, excluded


def _extract_from_archive(archive: Path, wanted: set[str], out_dir: Path) -> None:
    remaining = set(wanted)
    try:
        # Streaming mode: the archive is read once, front to back, however large it is.
        with tarfile.open(archive, mode="r|*") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if name in remaining and member.isfile():
                    data = tar.extractfile(member).read()  # type: ignore[union-attr]
                    write_atomic(out_dir / name, data)
                    remaining.discard(name)
                    if not remaining:
                        break
    except tarfile.TarError as exc:
        raise CorpusError(f"{archive}: not a readable tar archive: {exc}") from exc
    if remaining:
        raise FetchError(f"{archive}: missing parse files {sorted(remaining)[:5]}")


def _fetch(spec: SourceSpec, rel: str, out_dir: Path) -> tuple[Fetched, dict[str, Any]]:
    """``rel`` fetched into ``out_dir`` (against its pinned sha256, if any) and its record."""
    got = fetch(spec.base, rel, out_dir / rel, sha256=spec.checksums.get(rel))
    return got, {**got.record(out_dir), "verified": bool(spec.checksums.get(rel))}


def download(spec: SourceSpec, out_dir: Path) -> dict[str, Any]:
    metadata_rel = spec.options.get("metadata", "metadata.csv")
    max_papers = int(spec.options.get("max_papers", 200))
    licenses = list(spec.options.get("licenses") or [])
    meta, record = _fetch(spec, metadata_rel, out_dir)
    files = [record]
    chosen, excluded = select_rows(read_metadata(meta.path), licenses, max_papers)
    wanted = {parse_path(row) for row in chosen}
    archive_rel = spec.options.get("parses_archive")
    if archive_rel:
        archive, record = _fetch(spec, archive_rel, out_dir)
        files.append(record)
        _extract_from_archive(archive.path, wanted, out_dir)  # type: ignore[arg-type]
        # The archive is tens of gigabytes for a full release; only the extracted parses are kept.
        archive.path.unlink()
    else:
        for rel in sorted(wanted):  # type: ignore[type-var]
            files.append(_fetch(spec, rel, out_dir)[1])  # type: ignore[arg-type]
    return {
        "files": files,
        "metadata": metadata_rel,
        "max_papers": max_papers,
        "licenses": licenses,
        "papers": [{"cord_uid": r["cord_uid"], "parse": parse_path(r)} for r in chosen],
        "excluded": dict(excluded),
    }


def parse_text(parse: dict[str, Any], abstract: str) -> str:
    parts: list[str] = []
    if not abstract.strip():
        abstract = "\n\n".join(p.get("text", "") for p in parse.get("abstract") or [])
    if abstract.strip():
        parts += ["Abstract", abstract.strip()]
    heading = None
    for para in parse.get("body_text") or []:
        # PMC parses nest sections as "Subsection ::: Section"; the innermost name is the heading.
        section = (para.get("section") or "").split(" ::: ")[0].strip()
        if section and section != heading:
            parts.append(section)
            heading = section
        if (para.get("text") or "").strip():
            parts.append(para["text"].strip())
    return "\n\n".join(parts)


def candidates(
    spec: SourceSpec, raw_dir: Path, manifest: dict[str, Any]
) -> Iterator[Candidate | Rejected]:
    rows = {r["cord_uid"]: r for r in read_metadata(raw_dir / manifest["metadata"])}
    for paper in manifest["papers"]:
        row = rows[paper["cord_uid"]]
        path = raw_dir / paper["parse"]

        def load(row: dict[str, str] = row, path: Path = path):
            try:
                parse = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise SkipDocument(f"corrupt parse {path.name}: {exc}") from exc
            if not any((p.get("text") or "").strip() for p in parse.get("body_text") or []):
                raise SkipDocument(f"parse {path.name} has no body_text")
            urls = _split(row.get("url", ""))
            doi = row.get("doi", "")
            return make_document(
                doc_id=f"cord19-{row['cord_uid']}",
                domain=spec.domain,
                title=row.get("title") or (parse.get("metadata") or {}).get("title", ""),
                text=parse_text(parse, row.get("abstract", "")),
                source=spec.source_label,
                url=urls[0] if urls else (f"https://doi.org/{doi}" if doi else ""),
                license=f"{spec.license}; article licence: {row.get('license') or 'unknown'}",
            )

        yield Candidate(key=row["cord_uid"], title=row.get("title", ""), load=load)
