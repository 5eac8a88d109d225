"""DVC stage ``prepare``: select, normalise and validate every corpus into one document table. This
module is the stage's work; ``hope.stages.prepare_stage`` is its ``main`` (arguments, the files
it reads and writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hope.core.io import jsonl_lines, write_atomic, write_json_atomic
from hope.corpora import DOMAIN_LABELS, DOMAINS, FIELDS, Document, get_adapter
from hope.corpora.base import (
    DOWNLOAD_MANIFEST,
    Candidate,
    CorpusError,
    Rejected,
    SkipDocument,
    SourceSpec,
    seeded_order,
)
from hope.corpora.corpus_config import (
    allow_shortfall,
    profile_of,
    resolve_source,
    target_count,
)

log = logging.getLogger("hope.stages.prepare_stage")


def _norm_title(title: str) -> str:
    return " ".join(title.replace("_", " ").split()).casefold()


def order_candidates(
    spec: SourceSpec, candidates: list[Candidate], seed: int
) -> tuple[list[Candidate], list[str]]:
    """Seeded order, or the order of an explicit title list (returning the titles not found)."""
    titles = spec.options.get("titles") or []
    if not titles:
        return seeded_order(candidates, seed, spec.domain), []
    by_title: dict[str, Candidate] = {}
    for cand in candidates:
        by_title.setdefault(_norm_title(cand.title), cand)
    ordered, missing = [], []
    for title in titles:
        cand = by_title.get(_norm_title(title))
        if cand is None:
            missing.append(title)
        elif cand not in ordered:
            ordered.append(cand)
    return ordered, missing


def select_documents(
    spec: SourceSpec,
    items: Iterable[Candidate | Rejected],
    *,
    count: int,
    seed: int,
    min_chars: int,
    strict: bool,
    seen: dict[str, str] | None = None,
) -> tuple[list[Document], dict[str, Any]]:
    """Pick ``count`` usable documents; every candidate passed over is logged and reported."""
    seen = {} if seen is None else seen  # text sha256 -> doc_id, shared across domains
    filtered: Counter = Counter()
    candidates: list[Candidate] = []
    for item in items:
        if isinstance(item, Rejected):
            filtered[item.reason] += 1
        else:
            candidates.append(item)
    ordered, missing_titles = order_candidates(spec, candidates, seed)
    docs: list[Document] = []
    ids: set[str] = set()
    skipped: list[dict[str, str]] = []

    def skip(cand: Candidate, reason: str) -> None:
        log.warning("%s: skipped %s (%s): %s", spec.domain, cand.key, cand.title[:60], reason)
        skipped.append({"key": cand.key, "title": cand.title, "reason": reason})

    for cand in ordered:
        if len(docs) >= count:
            break
        try:
            doc = cand.load()
        except SkipDocument as exc:
            skip(cand, str(exc))
            continue
        if not doc.text:
            skip(cand, "empty text")
        elif doc.n_chars < min_chars:
            skip(cand, f"too short: {doc.n_chars} characters < min_chars {min_chars}")
        elif doc.sha256 in seen:
            skip(cand, f"duplicate text of {seen[doc.sha256]}")
        elif doc.doc_id in ids:
            skip(cand, f"duplicate doc_id {doc.doc_id}")
        else:
            seen[doc.sha256] = doc.doc_id
            ids.add(doc.doc_id)
            docs.append(doc)
    shortfall = count - len(docs)
    if missing_titles:
        log.warning("%s: titles not found: %s", spec.domain, missing_titles)
    if shortfall > 0:
        message = (
            f"{spec.domain}: {len(docs)} usable documents of {count} requested "
            f"({len(candidates)} candidates, {len(skipped)} skipped, "
            f"{sum(filtered.values())} filtered out)"
        )
        if strict:
            raise CorpusError(message)
        log.warning("%s; continuing because this profile allows a shortfall", message)
    report = {
        "label": DOMAIN_LABELS[spec.domain],
        "source_label": spec.source_label,
        "requested": count,
        "selected": len(docs),
        "shortfall": max(shortfall, 0),
        "candidates": len(candidates),
        "selection": "titles" if spec.options.get("titles") else "seeded",
        "missing_titles": missing_titles,
        "filtered": dict(sorted(filtered.items())),
        "skipped_count": len(skipped),
        "skipped_reasons": dict(Counter(s["reason"].split(":")[0] for s in skipped)),
        "skipped": skipped,
        "doc_ids": [d.doc_id for d in docs],
    }
    return docs, report


def read_download_manifest(raw_dir: Path) -> dict[str, Any]:
    path = raw_dir / DOWNLOAD_MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CorpusError(f"{path} not found: run the download stage first") from exc


def run_prepare(
    cfg: dict[str, Any], raw_root: str | os.PathLike[str], out_dir: str | os.PathLike[str]
) -> dict[str, Any]:
    raw_root, out_dir = Path(raw_root), Path(out_dir)
    profile = profile_of(cfg)
    seed = int(cfg.get("seed", 0))
    min_chars = int(cfg.get("min_chars", 1))
    strict = not allow_shortfall(cfg)
    seen: dict[str, str] = {}
    all_docs: list[Document] = []
    domains: dict[str, Any] = {}
    for domain in DOMAINS:
        spec = resolve_source(cfg, domain)
        raw_dir = raw_root / domain
        download = read_download_manifest(raw_dir)
        if download["spec"]["profile"] != profile or download["spec"]["adapter"] != spec.adapter:
            raise CorpusError(
                f"{raw_dir} was downloaded for profile {download['spec']['profile']!r}, "
                f"params ask for {profile!r}: run the download stage again"
            )
        items = get_adapter(spec.adapter).candidates(spec, raw_dir, download)
        docs, report = select_documents(
            spec,
            items,
            count=target_count(cfg, domain),
            seed=seed,
            min_chars=min_chars,
            strict=strict,
            seen=seen,
        )
        for reason, n in (download.get("excluded") or {}).items():
            report["filtered"][f"at download: {reason}"] = n
        report["download"] = download
        domains[domain] = report
        all_docs.extend(docs)
        log.info("%s: selected %d of %d candidates", domain, len(docs), report["candidates"])
    lines = "".join(jsonl_lines(d.to_dict() for d in all_docs))
    manifest = {
        "profile": profile,
        "seed": seed,
        "min_chars": min_chars,
        "schema": list(FIELDS),
        "n_documents": len(all_docs),
        "documents_sha256": hashlib.sha256(lines.encode("utf-8")).hexdigest(),
        "skipped_total": sum(r["skipped_count"] for r in domains.values()),
        "domains": domains,
    }
    write_atomic(out_dir / "documents.jsonl", lines)
    write_json_atomic(out_dir / "manifest.json", manifest)
    return manifest
