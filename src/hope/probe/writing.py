"""What a probe writer is given and what it returns: the interface every writer implements.

A writer turns drawn gold (``hope.probe.gold_draw``) into a question. It is handed, per question,
the region of the corpus around the drawn gold and the drawn excerpt spans, and returns a
:class:`Draft`: the question and the verbatim excerpts that answer it. A code-written writer keeps
the drawn excerpts (and says so with their spans); an LLM writer may pick its own excerpts from
the region, which are then located exactly in the corpus, as Chroma locates its LLM's excerpts.
Writers see many tasks at once so that a model-backed writer can send its requests together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from hope.probe.salience import Salience

Span = tuple[int, int]


@dataclass(frozen=True)
class WritingTask:
    """One question to write: the drawn gold spans, the region of the corpus they lie in
    (``region`` covers every span) and the question's seed."""

    gold: tuple[Span, ...]
    region: Span
    seed: int


@dataclass(frozen=True)
class Draft:
    """A written question and its excerpts, verbatim; ``spans`` when the writer knows where each
    excerpt is (code writers), else None and the excerpts are searched for in the corpus."""

    question: str
    excerpts: tuple[str, ...]
    spans: tuple[Span, ...] | None = None


@runtime_checkable
class ProbeWriter(Protocol):
    """``kind`` decides the relevance filter: a ``code`` writer's query words must all come from
    its excerpts; an ``llm`` writer's excerpts must each share a content word with its question."""

    name: str
    kind: Literal["code", "llm"]

    def write(
        self, corpus: str, salience: Salience, tasks: Sequence[WritingTask]
    ) -> list[Draft | None]:
        """One draft per task (None: the writer could not write this one)."""
        ...


def region_of(gold: Sequence[Span]) -> Span:
    return min(s for s, _ in gold), max(e for _, e in gold)
