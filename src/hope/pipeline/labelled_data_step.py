"""DVC stage ``labelled_data``: the labelled benchmark's corpora and questions, copied and checked.
This module is the stage's work; ``hope.stages.labelled_data_stage`` is its ``main`` (arguments,
the files it reads and writes), and ``hope-run``, the dry-run estimate and batch call the same
functions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from hope.pipeline.config_schema import LabelledParams
from hope.pipeline.stage_support import StageOutput

LICENCE = "LICENSE"

QUESTIONS = "questions.jsonl"


def source_files(corpora: Sequence[str]) -> list[str]:
    """The files the benchmark needs, relative to the source folder."""
    return [*(f"corpora/{name}.md" for name in corpora), QUESTIONS, LICENCE]


def copy_labelled_data(labelled: LabelledParams, base: Path, out: Path) -> StageOutput:
    """The checked files under ``out``; ``labelled.source`` is relative to ``base`` (the
    repository root) unless absolute."""
    source = Path(labelled.source)
    source = source if source.is_absolute() else base / source
    if not source.is_dir():
        raise FileNotFoundError(
            f"labelled.source {labelled.source}: no such folder (the labelled benchmark is "
            "read from a local copy of Chroma's general evaluation set)"
        )
    checksums = labelled.checksums
    files: dict[Path, str] = {}
    for relative in source_files(labelled.corpora):
        path = source / relative
        if not path.is_file():
            raise FileNotFoundError(f"labelled.source: {path} is missing")
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        expected = checksums.get(relative)
        if expected is None:
            raise ValueError(f"labelled.checksums has no sha256 for {relative}")
        if digest != expected:
            raise ValueError(f"{path}: sha256 {digest} differs from labelled.checksums {expected}")
        files[out / relative] = data.decode("utf-8")
    return StageOutput(
        files=files,
        message=f"{len(labelled.corpora)} corpora and their questions -> {out} (sha256 checked)",
    )
