"""Parquet access by row group: light columns for every row, heavy text only for rows selected."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hope.corpora.base import Candidate, CorpusError, SourceSpec
from hope.corpora.document_schema import Document, make_document


def open_parquet(path: Path, required: set[str]) -> pq.ParquetFile:
    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise CorpusError(f"{path}: not a readable parquet file: {exc}") from exc
    missing = required - set(pf.schema_arrow.names)
    if missing:
        raise CorpusError(f"{path}: parquet file lacks columns {sorted(missing)}")
    return pf


def iter_light_rows(
    path: Path, columns: list[str], required: set[str]
) -> Iterator[tuple[int, int, dict[str, str]]]:
    """Yield (row_group, row_in_group, {column: value}) reading only ``columns``."""
    pf = open_parquet(path, required)
    for rg in range(pf.metadata.num_row_groups):
        table = pf.read_row_group(rg, columns=columns)
        for i, row in enumerate(table.to_pylist()):
            yield rg, i, {k: ("" if v is None else str(v)) for k, v in row.items()}


class RowGroupReader:
    """Reads one column of a row group on demand, keeping the last few groups decoded.

    Wikipedia shards have row groups of a few thousand articles; the selected articles are spread
    over many groups, so a small cache avoids decoding a group once per article it holds.
    """

    def __init__(self, path: Path, column: str, cache_groups: int = 4):
        self.path = path
        self.column = column
        self._pf = open_parquet(path, {column})
        self._get = functools.lru_cache(maxsize=cache_groups)(self._read)

    def _read(self, rg: int) -> list[str | None]:
        return self._pf.read_row_group(rg, columns=[self.column]).column(0).to_pylist()

    def value(self, rg: int, row: int) -> str:
        return self._get(rg)[row] or ""


def lazy_candidate(
    spec: SourceSpec,
    texts: RowGroupReader,
    rg: int,
    row: int,
    values: dict[str, str],
    *,
    key: str,
    doc_id: str,
) -> Candidate:
    """A candidate whose text is decoded from its row group only when it is selected."""

    def load() -> Document:
        return make_document(
            doc_id=doc_id,
            domain=spec.domain,
            title=values["title"],
            text=texts.value(rg, row),
            source=spec.source_label,
            url=values["url"],
            license=spec.license,
        )

    return Candidate(key=key, title=values["title"], load=load)
