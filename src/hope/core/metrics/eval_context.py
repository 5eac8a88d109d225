"""What the three sub-metrics share during one evaluation: models, settings, seeds, bookkeeping."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from hope.core.hope_settings import HopeSettings
from hope.core.metrics import equations
from hope.core.model_interface import ChatModel, Embedder, StructuredResponse
from hope.core.prompting import Prompt, load_prompt
from hope.core.result import Failure
from hope.core.seeding import derive_seed


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class EvalContext:
    llm: ChatModel
    embedder: Embedder
    settings: HopeSettings
    progress: Any | None = None
    failures: list[Failure] = field(default_factory=list)
    prompts_used: dict[str, Prompt] = field(default_factory=dict)

    def prompt(self, name: str) -> Prompt:
        prompt = load_prompt(name, self.settings.prompts_dir)
        self.prompts_used[name] = prompt
        return prompt

    def seed(self, *parts: object) -> int:
        # Seeds come from content, not position: the same passage or segment gets the same
        # request under every chunker, so work is shared through the cache and comparisons
        # between chunkers are not blurred by sampling noise.
        return derive_seed(self.settings.seed, *parts)

    async def embed(self, texts: list[str]) -> np.ndarray:
        lookup = getattr(self.embedder, "lookup", None)
        known = lookup(texts) if lookup is not None else None
        if known is not None:
            return known
        # A model runs in a worker thread so that LLM requests keep flowing meanwhile.
        return await asyncio.to_thread(self.embedder.embed, texts)

    async def ask(
        self,
        prompt: Prompt,
        response_model: type[BaseModel],
        *,
        temperature: float,
        seed: int,
        retry_temperatures: list[float] | None = None,
        validate: Any | None = None,
        **fields: Any,
    ) -> StructuredResponse:
        return await self.llm.structured(
            messages=prompt.render(**fields),
            response_model=response_model,
            schema_name=prompt.name,
            prompt_id=prompt.id,
            temperature=temperature,
            seed=seed,
            invalid_retry_temperatures=retry_temperatures,
            validate=validate,
        )

    def fail(self, metric: str, item: str, reason: str) -> None:
        self.failures.append(Failure(metric=metric, item=item, reason=reason))

    def scored(self, evidence: dict[str, Any], raw: float) -> None:
        """Record a per-passage value and its clipped score (paper: negatives set to 0)."""
        evidence["raw"] = raw
        evidence["score"] = equations.clip_score(raw, self.settings.aggregation.clip)

    def failed(self, evidence: dict[str, Any], metric: str, item: str, reason: str) -> None:
        """Mark an item failed: excluded from the mean, reported with its reason."""
        evidence["status"] = "failed"
        evidence["reason"] = reason
        self.fail(metric, item, reason)

    def advance(self) -> None:
        if self.progress is not None:
            self.progress.update(1)


def format_passages(passages: list[str]) -> str:
    return "\n\n".join(f"[Passage {i}]\n{text}" for i, text in enumerate(passages, start=1))
