"""Wikipedia: Hugging Face ``wikimedia/wikipedia`` (config ``20231101.en``) parquet shards.

Columns ``id, url, title, text``. Only ``id`` and ``title`` are read for every article; the text of
an article is decoded from its row group only if the article is selected.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hope.corpora._parquet import RowGroupReader, iter_light_rows, lazy_candidate
from hope.corpora.base import Candidate, SourceSpec, download_files

_COLUMNS = {"id", "url", "title", "text"}


def download(spec: SourceSpec, out_dir: Path) -> dict[str, Any]:
    return {"files": download_files(spec, out_dir)}


def candidates(spec: SourceSpec, raw_dir: Path, manifest: dict[str, Any]) -> Iterator[Candidate]:
    for rec in manifest["files"]:
        path = raw_dir / rec["file"]
        texts = RowGroupReader(path, "text")
        for rg, row, values in iter_light_rows(path, ["id", "url", "title"], _COLUMNS):
            yield lazy_candidate(
                spec, texts, rg, row, values, key=values["id"], doc_id=f"wiki-{values['id']}"
            )
