"""Where a run's numbers come from: the git commit and the DVC hashes of the data."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml


def git_commit(
    repo: Path | str, *, ignore: Iterable[str] | None = None
) -> tuple[str | None, bool | None]:
    """(HEAD commit, tracked files modified?) or (None, None) outside git or without git.

    A change to a file DVC itself writes during ``dvc repro`` does not make the tree dirty: the
    run starts while DVC is rewriting ``dvc.lock`` and the outputs the earlier stages wrote
    (``dvc_written_paths``; ``ignore`` replaces them). Only a change to the code, the configs,
    the params or any other tracked file does.
    """

    def git(*args: str, timeout: int) -> str:
        command = ["git", "-C", str(repo), *args]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=True
        ).stdout

    try:
        head = git("rev-parse", "HEAD", timeout=10).strip()
        prefix = git("rev-parse", "--show-prefix", timeout=10).strip()
        status = git("status", "--porcelain=v1", "-z", "--untracked-files=no", timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None, None
    skipped = [
        (prefix + path.strip("/")).rstrip("/")
        for path in (dvc_written_paths(repo) if ignore is None else ignore)
    ]
    changed = [path for path in porcelain_paths(status) if not _under_any(path, skipped)]
    return head or None, bool(changed)


def porcelain_paths(status: str) -> list[str]:
    """The paths of ``git status --porcelain=v1 -z`` (both sides of a rename), from the root."""
    paths: list[str] = []
    entries = iter(status.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":  # a rename or copy: the source path follows as its own entry
            paths.append(next(entries, ""))
    return [p for p in paths if p]


def _under_any(path: str, roots: Iterable[str]) -> bool:
    return any(root and (path == root or path.startswith(root + "/")) for root in roots)


def dvc_written_paths(repo: Path | str) -> list[str]:
    """The files ``dvc repro`` writes in ``repo``: ``dvc.lock`` and every stage's outputs, metrics
    and plots in ``dvc.yaml`` (paths relative to ``repo``; only dvc.lock without a dvc.yaml)."""
    paths = ["dvc.lock"]
    dvc_yaml = Path(repo) / "dvc.yaml"
    if not dvc_yaml.is_file():
        return paths
    try:
        spec = yaml.safe_load(dvc_yaml.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        return paths
    for stage in (spec.get("stages") or {}).values():
        if not isinstance(stage, Mapping):
            continue
        body = stage.get("do") if isinstance(stage.get("do"), Mapping) else stage
        for section in ("outs", "metrics", "plots"):
            for out in body.get(section) or []:
                names = out.keys() if isinstance(out, Mapping) else [out]
                paths.extend(str(name).strip().removeprefix("./") for name in names)
    return paths


def source_tags(commit: str | None, dirty: bool | None, source_name: str) -> dict[str, str]:
    """The MLflow system tags its run page shows as the run's source (``mlflow.source.name``,
    ``.type``) and commit (``mlflow.source.git.commit``), and ``hope.git_dirty``."""
    tags = {"mlflow.source.name": source_name, "mlflow.source.type": "LOCAL"}
    if commit:
        tags["mlflow.source.git.commit"] = commit
        tags["hope.git_dirty"] = str(bool(dirty)).lower()
    return tags


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
