"""What a sub-metric will ask the LLM, declared beside the code that asks it.

Each metric module ends with ``planned_requests(settings, *, focus, passages, segments)``; the
dry-run estimate (``hope.pipeline.estimate``) adds these up, so a changed count or a new prompt
shows in the estimate without a second copy of the request pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel


@dataclass(frozen=True)
class PlannedRequest:
    """``count`` requests of prompt ``kind`` for one (document, chunking) pair, ``unique`` of them
    distinct (default: all). Besides its template the prompt holds ``passages`` passages,
    ``segments`` document segments and ``statements`` generated texts. ``per_document``: every
    chunking of the document asks the very same requests, so they are sent once per document.
    """

    kind: str
    response_model: type[BaseModel]
    count: int
    passages: int = 0
    segments: int = 0
    statements: int = 0
    per_document: bool = False
    unique: int = -1

    def __post_init__(self) -> None:
        if self.unique < 0:
            object.__setattr__(self, "unique", self.count)
