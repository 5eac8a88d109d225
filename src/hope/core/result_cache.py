"""Whole (document, chunking) results kept in the response cache, so unchanged work is a lookup.

A warm rerun that finds every LLM answer in the cache still costs the evaluator's own work per
request (prompt rendering, cache keys, lookups, similarity matrices): about 5 % of the cold time at
the scale benchmark's 30 documents. Keeping each pair's finished result, keyed by everything that
determines it, makes such a rerun a read per pair.

The key holds the document and passages (hashes), the passage ids, every HOPE setting, the LLM's
identity and the settings that change its answers, the embedder's identity, and a fingerprint of
the installed package's source, prompts and profiles, so that any change of code or prompt makes
new results. A result that met a transient server fault (not cached as an answer either) is not
kept: its rerun asks again.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from hope.core.io import text_sha256
from hope.core.response_cache import ResponseCache, content_key
from hope.core.result import HopeResult

NAMESPACE = "result"
# What changes an answer of the LLM besides its identity (concurrency and time-outs do not).
ANSWER_SETTINGS = ("max_tokens", "strict_schema", "send_seed", "extra_body", "max_retries")
SOURCE_SUFFIXES = {".py", ".yaml", ".yml", ".txt", ".j2", ".json", ".jinja"}


# The whole ``hope`` package (this module is in hope/core): models, prompts and profiles included.
PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def fingerprinted_files() -> list[Path]:
    """The package's source, prompt and profile files, in the order they are hashed."""
    return [
        path
        for path in sorted(PACKAGE_ROOT.rglob("*"))
        if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts and path.is_file()
    ]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of the package's source, prompt and profile files (paths and bytes)."""
    digest = hashlib.sha256()
    for path in fingerprinted_files():
        digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def result_key(
    document: str,
    passages: list[str],
    passage_ids: list[str],
    *,
    settings: dict[str, Any],
    llm: Any,
    embedder_identity: str,
) -> str:
    llm_settings = getattr(llm, "settings", None)
    answer_settings = {
        name: getattr(llm_settings, name, None) for name in ANSWER_SETTINGS if llm_settings
    }
    return content_key(
        {
            "code": code_fingerprint(),
            "document": text_sha256(document),
            "passages": [text_sha256(p) for p in passages],
            "passage_ids": list(passage_ids),
            "settings": {k: v for k, v in settings.items() if k != "progress"},
            "llm": getattr(llm, "identity", type(llm).__name__),
            "llm_settings": answer_settings,
            "embedder": embedder_identity,
        }
    )


def load(cache: ResponseCache, key: str) -> HopeResult | None:
    stored = cache.get_json(NAMESPACE, key)
    return HopeResult.from_dict(stored) if stored is not None else None


def store(cache: ResponseCache, key: str, result: HopeResult) -> bool:
    """Keep ``result`` unless a transient fault touched it; True when kept."""
    if result.usage.get("llm", {}).get("transient_failures", 0):
        return False
    cache.put_json(NAMESPACE, key, result.to_dict())
    return True
