"""What every source adapter shares: the resolved source spec, candidates and seeded ranking."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hope.corpora.document_schema import Document
from hope.corpora.fetch import fetch

log = logging.getLogger(__name__)

DOWNLOAD_MANIFEST = "download.json"


class CorpusError(RuntimeError):
    """A corpus cannot be built as configured (bad parameters, too few documents...)."""


class SkipDocument(Exception):
    """Raised by a candidate's loader: the document exists but is unusable (reason in args[0])."""


@dataclass(frozen=True)
class SourceSpec:
    domain: str
    adapter: str
    profile: str
    base: str
    files: list[str]
    checksums: dict[str, str]
    revision: str | None
    source_label: str
    license: str
    options: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The spec as DVC outputs record it: no absolute path, the same bytes in any checkout."""
        options = dict(self.options)
        if options.get("folder"):
            options["folder"] = portable_location(str(options["folder"]))
        return {
            "domain": self.domain,
            "adapter": self.adapter,
            "profile": self.profile,
            "base": portable_location(self.base),
            "revision": self.revision,
            "files": list(self.files),
            "source_label": self.source_label,
            "license": self.license,
            "options": options,
        }


def portable_location(location: str) -> str:
    """A source location that does not depend on where the checkout lives.

    URLs stay as they are. A folder inside the installed ``hope`` package becomes
    ``package:hope/<path>``; any other local folder becomes relative to the working directory
    (the repository root when DVC runs a stage), e.g. ``../shared/corpora/news``.
    """
    if not location or "://" in location:
        return location
    path = Path(location).resolve()
    package_root = Path(__file__).resolve().parent.parent
    if path == package_root or package_root in path.parents:
        return "package:hope/" + path.relative_to(package_root).as_posix()
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive (Windows): no relative form exists
        return path.as_posix()


@dataclass
class Candidate:
    """A document that may be selected; ``load`` does the (possibly costly) parsing lazily."""

    key: str
    title: str
    load: Callable[[], Document]


@dataclass(frozen=True)
class Rejected:
    """A record the source holds but the configured filters exclude (licence, news domain...)."""

    key: str
    reason: str


def rank_key(seed: int, domain: str, key: str) -> str:
    # Each candidate's rank depends only on (seed, domain, its own key), not on the order or
    # number of the other candidates, so a pool that grows keeps earlier picks in the same order.
    return hashlib.sha256(f"{int(seed)}\x1f{domain}\x1f{key}".encode()).hexdigest()


def seeded_order(candidates: Iterable[Candidate], seed: int, domain: str) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (rank_key(seed, domain, c.key), c.key))


def download_files(spec: SourceSpec, out_dir: Path) -> list[dict[str, Any]]:
    """Fetch every file of ``spec`` into ``out_dir`` under its relative path."""
    if not spec.files:
        raise CorpusError(f"{spec.domain}: no files configured for profile {spec.profile!r}")
    records = []
    for rel in spec.files:
        fetched = fetch(spec.base, rel, out_dir / rel, sha256=spec.checksums.get(rel))
        rec = fetched.record(relative_to=out_dir)
        rec["location"] = portable_location(rec["location"])
        rec["verified"] = bool(spec.checksums.get(rel))
        if not rec["verified"]:
            log.warning("%s: no pinned sha256 for %s; recorded %s", spec.domain, rel, rec["sha256"])
        records.append(rec)
    return records
