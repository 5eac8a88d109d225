"""An LLM-written probe question: Chroma's recipe through any configured ``ChatModel``.

Chroma's evaluation set was written this way: the model reads a passage of the corpus and returns
a question with the excerpts that answer it, copied verbatim; the excerpts are then located by
exact search and the question filtered (``hope.probe.probe_filters``). Here the passage is the
region of the drawn gold (``hope.probe.gold_draw``, so questions stay spread over the corpus and
shaped like real ones), and the model is asked for as many excerpts as were drawn. A paraphrasing
question is what code-written queries cannot give; the price is one model request per question.
An answer that fails (``LLMCallError``) is a question not written, counted like a filter's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from hope.core.model_interface import ChatModel, LLMCallError
from hope.probe.salience import Salience
from hope.probe.writing import Draft, WritingTask

PROMPT_ID = "probe_question_v1"
SYSTEM = (
    "You write test questions for a search engine over a document collection. A question must "
    "be answerable from the given passage alone, ask about its content in your own words, and "
    "not copy its sentences."
)
USER = """Passage:
\"\"\"
{passage}
\"\"\"

Write one question that this passage answers. Then copy {count} excerpt(s) of the passage that \
answer it, each an exact, contiguous copy of one or more whole sentences of the passage, \
character for character. Answer in JSON with the keys "question" and "excerpts"."""


class ProbeAnswer(BaseModel):
    question: str = Field(min_length=1)
    excerpts: list[str] = Field(min_length=1, max_length=8)


def passage_of(corpus: str, task: WritingTask) -> str:
    return corpus[task.region[0] : task.region[1]]


@dataclass
class LLMWriter:
    """Writes with ``llm`` (any ``ChatModel``: the embedded model, an OpenAI-compatible server)."""

    llm: ChatModel
    name: str = "llm"
    kind: Literal["code", "llm"] = field(default="llm")
    temperature: float = 0.0
    max_tokens: int = 512

    def write(
        self, corpus: str, salience: Salience, tasks: Sequence[WritingTask]
    ) -> list[Draft | None]:
        """Every task's request at once (the client bounds its own concurrency)."""
        return asyncio.run(self.awrite(corpus, tasks))

    async def awrite(self, corpus: str, tasks: Sequence[WritingTask]) -> list[Draft | None]:
        return list(await asyncio.gather(*(self._one(corpus, task) for task in tasks)))

    async def _one(self, corpus: str, task: WritingTask) -> Draft | None:
        messages = [
            {"role": "system", "content": SYSTEM},
            {
                "role": "user",
                "content": USER.format(passage=passage_of(corpus, task), count=len(task.gold)),
            },
        ]
        try:
            response = await self.llm.structured(
                messages=messages,
                response_model=ProbeAnswer,
                schema_name="probe_question",
                prompt_id=PROMPT_ID,
                temperature=self.temperature,
                seed=task.seed,
                max_tokens=self.max_tokens,
            )
        except LLMCallError:
            return None
        answer = response.value
        assert isinstance(answer, ProbeAnswer)
        excerpts = tuple(e.strip() for e in answer.excerpts if e.strip())
        return Draft(answer.question.strip(), excerpts) if excerpts else None
