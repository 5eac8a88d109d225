"""Wikipedia: Hugging Face ``wikimedia/wikipedia`` (config ``20231101.en``) parquet shards.

Columns ``id, url, title, text``. Only ``id`` and ``title`` are read for every article; the text of
an article is decoded from its row group only if the article is selected.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hope.corpora._parquet import RowGroupReader, iter_light_rows
from hope.corpora.base import Candidate, SourceSpec, download_files
from hope.corpora.schema import make_document

_COLUMNS = {"id", "url", "title", "text"}


def download(spec: SourceSpec, out_dir: Path) -> dict[str, Any]:
    return {"files": download_files(spec, out_dir)}


def candidates(spec: SourceSpec, raw_dir: Path, manifest: dict[str, Any]) -> Iterator[Candidate]:
    for rec in manifest["files"]:
        path = raw_dir / rec["file"]
        texts = RowGroupReader(path, "text")
        for rg, row, values in iter_light_rows(path, ["id", "url", "title"], _COLUMNS):

            def load(
                texts: RowGroupReader = texts,
                rg: int = rg,
                row: int = row,
                values: dict[str, str] = values,
            ):
                return make_document(
                    doc_id=f"wiki-{values['id']}",
                    domain=spec.domain,
                    title=values["title"],
                    text=texts.value(rg, row),
                    source=spec.source_label,
                    url=values["url"],
                    license=spec.license,
                )

            yield Candidate(key=values["id"], title=values["title"], load=load)
