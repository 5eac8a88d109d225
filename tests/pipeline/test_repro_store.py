"""Issue #33's checks on the store of a real ``make repro`` (the embedded models, every stage):
``HOPE_REPRO_DIR=<a clone where make repro ran> pytest tests/pipeline/test_repro_store.py``.

CI runs the same checks on the store of a whole ``dvc repro`` with the simulated LLM
(``test_dvc_e2e``); a real repro takes 20 minutes on 2 cores, so this one runs where one exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .mlflow_views import Rest, check_repro_store, mlflow_server

pytestmark = pytest.mark.slow


def test_the_store_make_repro_wrote(tmp_path: Path):
    folder = os.environ.get("HOPE_REPRO_DIR")
    if not folder:
        pytest.skip("set HOPE_REPRO_DIR to a clone where `make repro` ran")
    repo = Path(folder)
    assert (repo / "mlflow.db").is_file(), f"{repo}: no mlflow.db (has make repro run there?)"
    with mlflow_server(repo / "mlflow.db", tmp_path / "served", tmp_path / "server.log") as base:
        counted = check_repro_store(Rest(base), repo)
    assert counted["chunker_runs"] >= 3 and counted["traces"] > 0, counted
