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
    for attempt in range(DUPLICATE_ATTEMPTS):
        try:
            with_retry(lambda: client.log_inputs(run_id, datasets=inputs))
            return
        except Exception as exc:
            if not _another_writer_inserted_it(exc) or attempt == DUPLICATE_ATTEMPTS - 1:
                raise


# Jobs of a parallel sweep read the same corpus, so they log the same dataset (same experiment,
# name and digest). MLflow looks the dataset up and inserts it when missing, in one transaction:
# two jobs that both find it missing both insert it, and the second insert fails on the unique
# key (seen in a CI run of tests/pipeline/test_multirun.py with the joblib launcher). That whole
# write is rolled back, so writing again is safe, and it finds the other job's dataset and links
# this run to it.
DUPLICATE_ATTEMPTS = 3


def _another_writer_inserted_it(exc: Exception) -> bool:
    text = str(exc).lower()
    return "datasets" in text and any(
        marker in text for marker in ("unique constraint", "duplicate key", "duplicate entry")
    )
