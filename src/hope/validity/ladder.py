"""A quality ladder per document: chunkings whose order of quality is known by construction.

``aligned`` follows the author's structure (paragraphs, a heading joined to what it heads) and is
the best rung; every other rung is a degradation of a kind a chunking metric should penalise:
``recursive_500`` (the project's recursive splitter, mostly paragraph-aligned, the gentlest),
``fixed_120`` (fixed windows that cut words and sentences), ``foreign_mixed`` (each aligned passage
glued to a passage of another document) and ``sentence_shuffled`` (the document's sentences in a
seeded random order, packed into as many passages as the aligned rung, so every fact is kept but no
passage holds one topic).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from hope.core.text import split_sentences

RUNGS = ("aligned", "recursive_500", "fixed_120", "foreign_mixed", "sentence_shuffled")
DEGRADED = RUNGS[1:]
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def truncate_to_paragraphs(text: str, max_chars: int) -> str:
    """The longest prefix of whole paragraphs within ``max_chars`` (at least the first paragraph):
    a cost knob that keeps the author's structure intact."""
    kept: list[str] = []
    length = 0
    for paragraph in paragraphs(text):
        added = len(paragraph) + (2 if kept else 0)
        if kept and length + added > max_chars:
            break
        kept.append(paragraph)
        length += added
    return "\n\n".join(kept)


def aligned_passages(text: str, min_chars: int = 80) -> list[str]:
    """One passage per paragraph; a paragraph shorter than ``min_chars`` (a heading such as
    "Abstract") is joined to the paragraph after it, the last one to the one before it."""
    passages: list[str] = []
    pending = ""
    for paragraph in paragraphs(text):
        merged = f"{pending}\n\n{paragraph}" if pending else paragraph
        if len(merged) < min_chars:
            pending = merged
            continue
        passages.append(merged)
        pending = ""
    if pending:
        if passages:
            passages[-1] = f"{passages[-1]}\n\n{pending}"
        else:
            passages.append(pending)
    return passages


def fixed_fragments(text: str, size: int) -> list[str]:
    """Consecutive windows of ``size`` characters, blind to words and sentences."""
    if size < 1:
        raise ValueError(f"fragment size must be positive, got {size}")
    windows = (text[i : i + size] for i in range(0, len(text), size))
    return [w for w in windows if w.strip()]


def foreign_mixed(aligned: list[str], foreign: list[str]) -> list[str]:
    """Each aligned passage followed by a passage of another document (cycled)."""
    if not foreign:
        raise ValueError("foreign_mixed needs at least one foreign passage")
    return [f"{p}\n\n{foreign[i % len(foreign)]}" for i, p in enumerate(aligned)]


def sentence_shuffled(text: str, n_passages: int, seed: int, language: str = "en") -> list[str]:
    """The document's sentences in a seeded random order, split into ``n_passages`` passages of
    near-equal sentence counts."""
    sentences = [s.text for s in split_sentences(text, language)]
    if not sentences:
        raise ValueError("sentence_shuffled needs a document with at least one sentence")
    order = np.random.default_rng(seed).permutation(len(sentences))
    groups = np.array_split(order, min(n_passages, len(sentences)))
    return [" ".join(sentences[i] for i in group) for group in groups if len(group)]


def build_ladder(
    text: str,
    foreign_text: str,
    *,
    recursive: Callable[[str], list[str]],
    fragment_chars: int = 120,
    seed: int = 0,
    language: str = "en",
) -> dict[str, list[str]]:
    """Every rung of ``text``'s ladder, best first (the order of :data:`RUNGS`).

    ``recursive`` is the project's recursive_500 chunker as a function of the text, injected so
    that this module stays free of configuration loading.
    """
    aligned = aligned_passages(text)
    ladder = {
        "aligned": aligned,
        "recursive_500": recursive(text),
        "fixed_120": fixed_fragments(text, fragment_chars),
        "foreign_mixed": foreign_mixed(aligned, aligned_passages(foreign_text)),
        "sentence_shuffled": sentence_shuffled(text, len(aligned), seed, language),
    }
    return {rung: ladder[rung] for rung in RUNGS}
