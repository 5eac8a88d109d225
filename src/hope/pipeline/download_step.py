"""DVC stage ``download@<domain>``: fetch one corpus's raw files into ``data/raw/<domain>``. This
module is the stage's work; ``hope.stages.download_stage`` is its ``main`` (arguments, the files
it reads and writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

from hope.core.io import write_json_atomic
from hope.corpora import get_adapter
from hope.corpora.base import DOWNLOAD_MANIFEST
from hope.corpora.corpus_config import resolve_source
from hope.corpora.fetch import ChecksumError, is_remote
from hope.corpora.pinning import (
    check_pinned,
    locked_spec,
    read_lock,
    record_checksums,
)

log = logging.getLogger("hope.stages.download_stage")


def run_download(
    cfg: dict[str, Any],
    domain: str,
    out_dir: str | os.PathLike[str],
    *,
    lock_path: str | os.PathLike[str] | None = None,
    update_checksums: bool = False,
    allow_unpinned: bool = False,
) -> dict:
    """Fetch ``domain``'s files as configured in ``cfg`` (the ``corpora:`` params).

    A remote source must be pinned (hope.corpora.pinning.check_pinned). With ``lock_path``, the
    sha256 recorded there at the first download is enforced for a remote source's files (a
    changed file is refused unless ``update_checksums``), and new ones are recorded.
    """
    spec = resolve_source(cfg, domain)
    remote = is_remote(spec.base)
    pinned = check_pinned(spec, allow_unpinned=allow_unpinned) if remote else None
    if lock_path is not None:
        spec = locked_spec(spec, read_lock(lock_path), update=update_checksums)
    adapter = get_adapter(spec.adapter)
    out_dir = Path(out_dir)
    staging = out_dir.with_name(f".{out_dir.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        result = adapter.download(spec, staging)
        manifest = {"domain": domain, "spec": spec.record(), **result}
        if remote:
            manifest["pinned"] = pinned
        write_json_atomic(staging / DOWNLOAD_MANIFEST, manifest)
        if lock_path is not None:
            record_checksums(spec, manifest["files"], lock_path)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, ChecksumError) and lock_path is not None:
            raise ChecksumError(
                f"{exc} (sha256 pinned in corpora.sources.{domain}.checksums or recorded in "
                f"{lock_path} at the first download); if the source changed on purpose, rerun "
                "with --update-checksums (HOPE_UPDATE_CHECKSUMS=1) to record the new file"
            ) from exc
        raise
    log.info("%s: %d file(s) from %s -> %s", domain, len(manifest["files"]), spec.base, out_dir)
    return manifest
