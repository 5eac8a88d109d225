"""The built-in sample corpus: seven short original documents, one per domain, as package data.

It lets ``dvc repro`` run offline with no mirror. Its files are fetched through the same fetch
layer (with pinned checksums from ``sample/index.json``) as every other source.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hope.corpora.base import Candidate, SourceSpec, download_files
from hope.corpora.corpus_config import sample_index
from hope.corpora.document_schema import make_document


def download(spec: SourceSpec, out_dir: Path) -> dict[str, Any]:
    return {"files": download_files(spec, out_dir)}


def candidates(spec: SourceSpec, raw_dir: Path, manifest: dict[str, Any]) -> Iterator[Candidate]:
    entries = {d["file"]: d for d in sample_index()["documents"] if d["domain"] == spec.domain}
    for rec in manifest["files"]:
        entry = entries[rec["file"]]
        path = raw_dir / rec["file"]

        def load(entry: dict[str, Any] = entry, path: Path = path):
            return make_document(
                doc_id=entry["doc_id"],
                domain=spec.domain,
                title=entry["title"],
                text=path.read_text(encoding="utf-8"),
                source=spec.source_label,
                url="",
                license=entry["license"],
            )

        yield Candidate(key=entry["doc_id"], title=entry["title"], load=load)
