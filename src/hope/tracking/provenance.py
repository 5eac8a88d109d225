"""Where a run's numbers come from: the git commit and the DVC hashes of the data."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml


def git_commit(repo: Path | str) -> tuple[str | None, bool | None]:
    """(HEAD commit, tracked files modified?) or (None, None) outside git or without git."""

    def git(*args: str, timeout: int) -> str:
        command = ["git", "-C", str(repo), *args]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=True
        ).stdout

    try:
        head = git("rev-parse", "HEAD", timeout=10).strip()
        status = git("status", "--porcelain", "--untracked-files=no", timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head or None, bool(status.strip())


def dvc_hashes(lock_path: Path | str) -> dict[str, str]:
    """``out path -> md5`` of every stage output recorded in dvc.lock ({} if there is none)."""
    path = Path(lock_path)
    if not path.is_file():
        return {}
    lock = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    hashes: dict[str, str] = {}
    for stage in (lock.get("stages") or {}).values():
        for out in stage.get("outs") or []:
            if isinstance(out, Mapping) and out.get("path") and out.get("md5"):
                hashes[str(out["path"])] = str(out["md5"])
    return dict(sorted(hashes.items()))


def file_md5s(paths: Iterable[Path | str]) -> dict[str, str]:
    """``path -> md5`` of files, computed now: what dvc.lock records for a file dependency.

    A stage logging its own run needs this: while it runs, dvc.lock still holds its previous
    dependencies.
    """
    hashes: dict[str, str] = {}
    for path in paths:
        digest = hashlib.md5(usedforsecurity=False)
        with Path(path).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        hashes[str(path)] = digest.hexdigest()
    return dict(sorted(hashes.items()))
