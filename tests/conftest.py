from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# CI clones the repo into some folder and lays shared/ beside it, as in the developers' checkout.
SHARED_DIR = Path(os.environ.get("HOPE_SHARED_DIR", REPO_ROOT.parent / "shared")).resolve()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.fail(f"shared folder not found at {SHARED_DIR} (set HOPE_SHARED_DIR)")
    return SHARED_DIR


@pytest.fixture(scope="session")
def corpora_dir(shared_dir: Path) -> Path:
    return shared_dir / "corpora"
