"""What every LLM probe writer shares: one structured request per writing task, all of them at
once (the client bounds its own concurrency), and an answer that fails (``LLMCallError``) counted
as a question not written, like a filter's rejection. A writer says what to ask
(``request``) and how to turn the validated answer into a draft (``draft``). A small model on
two cores takes seconds a request, so a round of requests shows a progress bar on stderr."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from hope.core.concurrency import gather_bounded
from hope.core.model_interface import ChatModel, LLMCallError
from hope.probe.salience import Salience
from hope.probe.writing import Draft, WritingTask


@dataclass(frozen=True)
class WriterRequest:
    """One task's request: the messages, the answer's model and the names the cache keys on."""

    messages: list[dict[str, str]]
    response_model: type[BaseModel]
    schema_name: str
    prompt_id: str
    context: Any = None  # what ``draft`` needs besides the answer (e.g. the numbered sentences)


@dataclass
class ModelWriter:
    """Writes with ``llm`` (any ``ChatModel``: the embedded model, an OpenAI-compatible server)."""

    llm: ChatModel
    name: str = "llm"
    kind: Literal["code", "llm"] = field(default="llm")
    temperature: float = 0.0
    max_tokens: int = 512
    progress: bool = True

    def request(self, corpus: str, task: WritingTask) -> WriterRequest | None:
        """The request for ``task``; None when there is nothing to ask about."""
        raise NotImplementedError

    def draft(self, corpus: str, answer: Any, context: Any) -> Draft | None:
        """The draft from a validated answer; None when the answer gives no question."""
        raise NotImplementedError

    def write(
        self, corpus: str, salience: Salience, tasks: Sequence[WritingTask]
    ) -> list[Draft | None]:
        return asyncio.run(self.awrite(corpus, tasks))

    async def awrite(self, corpus: str, tasks: Sequence[WritingTask]) -> list[Draft | None]:
        label = f"probe questions ({self.name})" if self.progress else None
        return await gather_bounded(
            lambda task: self._one(corpus, task), tasks, progress=label, unit="question"
        )

    async def _one(self, corpus: str, task: WritingTask) -> Draft | None:
        request = self.request(corpus, task)
        if request is None:
            return None
        try:
            response = await self.llm.structured(
                messages=request.messages,
                response_model=request.response_model,
                schema_name=request.schema_name,
                prompt_id=request.prompt_id,
                temperature=self.temperature,
                seed=task.seed,
                max_tokens=self.max_tokens,
            )
        except LLMCallError:
            return None
        answer = response.value
        assert isinstance(answer, request.response_model)
        return self.draft(corpus, answer, request.context)
