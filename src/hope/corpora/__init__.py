"""Corpora of Table 1: one adapter per online source, a shared fetch layer and one document schema.

An adapter module provides ``download(spec, out_dir) -> manifest`` (fetch raw files through
:mod:`hope.corpora.fetch`) and ``candidates(spec, raw_dir, manifest)`` (parse them into lazily
loaded :class:`~hope.corpora.base.Candidate` documents). Selection, validation and de-duplication
are shared and live in :mod:`hope.stages.prepare_stage`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from hope.corpora.document_schema import DOMAIN_LABELS, DOMAINS, FIELDS, PAPER_COUNTS, Document

ADAPTERS = ("sample", "wiki", "news", "arxiv", "pile_of_law", "cord19", "manuals")


def get_adapter(name: str) -> ModuleType:
    if name not in ADAPTERS:
        raise ValueError(f"unknown corpus adapter {name!r}; expected one of {', '.join(ADAPTERS)}")
    return importlib.import_module(f"hope.corpora.{name}")


__all__ = [
    "ADAPTERS",
    "DOMAINS",
    "DOMAIN_LABELS",
    "FIELDS",
    "PAPER_COUNTS",
    "Document",
    "get_adapter",
]
