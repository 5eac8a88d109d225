"""The data a run read as MLflow datasets (``mlflow.data``): the prepared corpus and chunk table,
each named with its DVC hash (the md5 dvc.lock records), logged as inputs of the chunker runs."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hope.tracking.store import with_retry

CORPUS = "corpus"
CHUNKS = "chunks"
CONTEXT = "evaluation"


@dataclass(frozen=True)
class DataFile:
    """A file a run read: its role (``corpus``, ``chunks``), where it is, its md5."""

    role: str
    path: Path
    md5: str

    @property
    def name(self) -> str:
        return f"{self.role}-{self.md5}"


def meta_dataset(data: DataFile):
    """The file as an ``mlflow.data`` MetaDataset: a name, a digest (the md5), a source (its
    path); no copy of the data (the corpus and chunk table are DVC-tracked already)."""
    from mlflow.data.dataset_source_registry import resolve_dataset_source
    from mlflow.data.meta_dataset import MetaDataset

    if len(data.md5) != 32 or any(c not in "0123456789abcdef" for c in data.md5):
        raise ValueError(f"dataset {data.role} ({data.path}): {data.md5!r} is not an md5")
    with warnings.catch_warnings():
        # MLflow registers its local-file source twice and says the path is ambiguous between them.
        warnings.filterwarnings("ignore", "The specified dataset source", UserWarning)
        source = resolve_dataset_source(Path(data.path).resolve().as_uri())
    return MetaDataset(source=source, name=data.name, digest=data.md5)


def log_datasets(client: Any, run_id: str, files: Sequence[DataFile]) -> None:
    """Log ``files`` as dataset inputs of ``run_id`` (context ``evaluation``)."""
    from mlflow.entities import DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    if not files:
        return
    inputs = [
        DatasetInput(
            meta_dataset(f)._to_mlflow_entity(),
            tags=[
                InputTag(MLFLOW_DATASET_CONTEXT, CONTEXT),
                InputTag("hope.role", f.role),
            ],
        )
        for f in files
    ]
    with_retry(lambda: client.log_inputs(run_id, datasets=inputs))
