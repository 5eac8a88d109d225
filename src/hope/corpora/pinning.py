"""Pinned revisions and a checksum lock for the online sources.

Two rules for every remote (http/https) source of the ``paper`` profile:

* A Hugging Face source must name a commit (40 hex digits) as its ``revision``: a branch such
  as ``main`` moves, so the same configuration would download other bytes later. Refused with
  an error naming the setting, unless unpinned sources are explicitly allowed
  (``--allow-unpinned`` or ``HOPE_ALLOW_UNPINNED=1``); the download manifest then says
  ``"pinned": false``.
* The sha256 of every downloaded file is recorded in a lock file (``corpora.lock.json`` at the
  repository root, committed like any lock file) the first time it is downloaded. A later
  download of the same source (domain, base URL, revision) must give the same bytes; a changed
  file is refused (``ChecksumError``) unless updating is asked for (``--update-checksums`` or
  ``HOPE_UPDATE_CHECKSUMS=1``), which records the new sha256. Checksums configured in
  ``sources.yaml`` (``checksums:``) always apply and win over the lock.

Local folders and mirrors are not affected: the sample and the mirror profile carry their own
checksums (the package index, ``mirror_checksums``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from hope.core.io import write_json_atomic
from hope.corpora.base import CorpusError, SourceSpec
from hope.corpora.fetch import is_remote

DEFAULT_LOCK = Path("corpora.lock.json")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
HF_HOSTS = ("huggingface.co", "hf.co")


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def is_huggingface(base: str) -> bool:
    host = re.sub(r"^[a-z]+://", "", base).split("/", 1)[0].lower()
    return any(host == h or host.endswith("." + h) for h in HF_HOSTS)


def check_pinned(spec: SourceSpec, *, allow_unpinned: bool = False) -> bool:
    """Whether a remote ``spec`` is pinned (a Hugging Face source: to a commit; another remote
    source: to any configured revision); an unpinned Hugging Face source is an error unless
    allowed."""
    if not is_huggingface(spec.base):
        return spec.revision is not None
    pinned = bool(spec.revision and COMMIT.match(spec.revision))
    if not pinned and not allow_unpinned:
        raise CorpusError(
            f"{spec.domain}: corpora.sources.{spec.domain}.revision is {spec.revision!r}, a "
            "Hugging Face source must be pinned to a commit (40 hex digits) so that the same "
            "configuration downloads the same bytes; set it, or pass --allow-unpinned "
            "(HOPE_ALLOW_UNPINNED=1) to download the moving revision anyway"
        )
    return pinned


def read_lock(path: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        return {}
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusError(f"checksum lock {path} is not valid JSON: {exc}") from exc
    if not isinstance(lock, dict) or not isinstance(lock.get("sources", {}), dict):
        raise CorpusError(f"checksum lock {path}: expected {{'sources': {{...}}}}")
    return lock


def locked_spec(spec: SourceSpec, lock: dict[str, Any], *, update: bool = False) -> SourceSpec:
    """``spec`` with the lock's sha256 of each file added to its checksums (config wins).

    The lock entry applies only while the domain's base URL and revision are those it recorded;
    with ``update`` it is not applied (the download records fresh checksums instead).
    """
    if not is_remote(spec.base) or update:
        return spec
    entry = lock.get("sources", {}).get(spec.domain)
    if not entry or entry.get("base") != spec.base or entry.get("revision") != spec.revision:
        return spec
    return replace(spec, checksums={**entry.get("files", {}), **spec.checksums})


def record_checksums(
    spec: SourceSpec, files: list[dict[str, Any]], lock_path: str | os.PathLike[str]
) -> dict[str, str]:
    """Write the sha256 of every downloaded file of a remote source into the lock file.

    Returns the recorded ``{file: sha256}``; local sources record nothing. The entry of the
    domain is replaced (a new base URL or revision makes new files).
    """
    if not is_remote(spec.base):
        return {}
    prefix = spec.base.rstrip("/") + "/"  # the lock names files relative to the source's base
    recorded = {
        f["location"].removeprefix(prefix): f["sha256"]
        for f in files
        if f.get("location") and f.get("sha256")
    }
    lock = read_lock(lock_path)
    sources = lock.setdefault("sources", {})
    entry = {"base": spec.base, "revision": spec.revision, "files": dict(sorted(recorded.items()))}
    if sources.get(spec.domain) != entry:
        sources[spec.domain] = entry
        lock["sources"] = dict(sorted(sources.items()))
        write_json_atomic(lock_path, lock)
    return recorded
