"""Turn the ``corpora:`` section of params.yaml into one resolved source spec per domain.

Three profiles share one parser per source and differ only in where the files are and how many
documents are wanted:

* ``sample``: the seven short documents shipped in ``hope/corpora/sample`` (offline, one each);
* ``mirror``: the offline mirror of real files (``mirror_path``), same relative paths as online;
* ``paper``: the online sources at pinned revisions, with the paper's Table 1 counts.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from hope.core.io import InputFileError, read_params
from hope.corpora.base import CorpusError, SourceSpec
from hope.corpora.document_schema import DOMAINS, PAPER_COUNTS
from hope.corpora.fetch import is_remote, join_location

PROFILES = ("sample", "mirror", "paper")
# Keys of a source entry that describe where files are; everything else is an adapter option.
_LOCATION_KEYS = {
    "adapter",
    "base_url",
    "revision",
    "files",
    "checksums",
    "mirror_dir",
    "mirror_files",
    "mirror_checksums",
    "source_label",
    "license",
    "mirror_source_label",
    "mirror_license",
    "mirror_options",
}


def load_params(path: str | os.PathLike[str] = "params.yaml") -> dict[str, Any]:
    path = Path(path)
    try:
        params = read_params(path)
    except InputFileError as exc:
        raise CorpusError(str(exc)) from exc
    if "corpora" not in params:
        raise CorpusError(f"{path} has no 'corpora' section")
    cfg = dict(params["corpora"])
    cfg["_params_dir"] = str(path.resolve().parent)
    return cfg


def profile_of(cfg: dict[str, Any]) -> str:
    profile = cfg.get("profile", "sample")
    if profile not in PROFILES:
        raise CorpusError(f"corpora.profile is {profile!r}; expected one of {', '.join(PROFILES)}")
    return profile


def sample_dir() -> Path:
    return Path(str(resources.files("hope.corpora") / "sample"))


def sample_index() -> dict[str, Any]:
    return json.loads((sample_dir() / "index.json").read_text(encoding="utf-8"))


def target_count(cfg: dict[str, Any], domain: str) -> int:
    if profile_of(cfg) == "sample":
        return sum(1 for d in sample_index()["documents"] if d["domain"] == domain)
    counts = cfg.get("counts", PAPER_COUNTS)
    if domain not in counts:
        raise CorpusError(f"corpora.counts has no entry for {domain!r}")
    count = counts[domain]
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise CorpusError(f"corpora.counts.{domain} must be a positive integer, got {count!r}")
    return count


def allow_shortfall(cfg: dict[str, Any]) -> bool:
    # The mirror holds fewer documents than the paper used for some domains (48 wiki articles,
    # 5 manuals...); it is a test bed, so it may fall short. The paper profile may not.
    return bool(cfg.get("allow_shortfall", {}).get(profile_of(cfg), False))


def _resolve_dir(cfg: dict[str, Any], value: str) -> str:
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        path = Path(cfg.get("_params_dir", ".")) / path
    return str(path.resolve())


def _format(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return value.format(**variables)
    if isinstance(value, list):
        return [_format(v, variables) for v in value]
    if isinstance(value, dict):
        return {_format(k, variables): _format(v, variables) for k, v in value.items()}
    return value


def resolve_source(cfg: dict[str, Any], domain: str) -> SourceSpec:
    if domain not in DOMAINS:
        raise CorpusError(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    profile = profile_of(cfg)
    if profile == "sample":
        entries = [d for d in sample_index()["documents"] if d["domain"] == domain]
        return SourceSpec(
            domain=domain,
            adapter="sample",
            profile=profile,
            base=str(sample_dir()),
            files=[d["file"] for d in entries],
            checksums={d["file"]: d["sha256"] for d in entries},
            revision=None,
            source_label="HOPE sample document (original text written for this project)",
            license=entries[0]["license"] if entries else "",
        )
    sources = cfg.get("sources", {})
    if domain not in sources:
        raise CorpusError(f"corpora.sources has no entry for {domain!r}")
    src = dict(sources[domain])
    options = {k: v for k, v in src.items() if k not in _LOCATION_KEYS}
    variables = {"revision": str(src.get("revision") or "main"), **options}
    if profile == "mirror":
        mirror_root = cfg.get("mirror_path")
        if not mirror_root:
            raise CorpusError("corpora.mirror_path must be set for the mirror profile")
        mirror_dir = src.get("mirror_dir", domain)
        if is_remote(mirror_root) or mirror_root.startswith("file://"):
            # A mirror may itself be served over HTTP; it is then read by the online code path.
            base = join_location(mirror_root, mirror_dir)
        else:
            base = str(Path(_resolve_dir(cfg, mirror_root)) / mirror_dir)
        files = _format(src.get("mirror_files", []), variables)
        checksums = _format(src.get("mirror_checksums", {}) or {}, variables)
        # The mirror's documents often come from a different origin than the online source (e.g.
        # Wikipedia text via SQuAD), so it may carry its own provenance and licence.
        src["source_label"] = src.get("mirror_source_label", src.get("source_label", ""))
        src["license"] = src.get("mirror_license", src.get("license", ""))
        options.update(src.get("mirror_options") or {})
    else:
        base = _format(src.get("base_url") or "", variables)
        files = _format(src.get("files", []) or [], variables)
        checksums = _format(src.get("checksums", {}) or {}, variables)
        if options.get("folder"):
            options["folder"] = _resolve_dir(cfg, options["folder"])
    return SourceSpec(
        domain=domain,
        adapter=src.get("adapter", domain),
        profile=profile,
        base=base,
        files=list(files),
        checksums=dict(checksums),
        revision=None if src.get("revision") is None else str(src["revision"]),
        source_label=src.get("source_label", ""),
        license=src.get("license", ""),
        options=options,
    )
