"""An LLM-written probe question: Chroma's recipe through any configured ``ChatModel``.

Chroma's evaluation set was written this way: the model reads a passage of the corpus and returns
a question with the excerpts that answer it, copied verbatim; the excerpts are then located by
exact search and the question filtered (``hope.probe.probe_filters``). Here the passage is the
region of the drawn gold (``hope.probe.gold_draw``, so questions stay spread over the corpus and
shaped like real ones), and the model is asked for as many excerpts as were drawn. A paraphrasing
question is what code-written queries cannot give; the price is one model request per question.
What every LLM writer shares (the requests, a failed answer as a question not written) is
``hope.probe.model_writer``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from hope.probe.model_writer import ModelWriter, WriterRequest
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
class LLMWriter(ModelWriter):
    """Asks for the question and its excerpts copied verbatim (located later by the filters)."""

    name: str = "llm"

    def request(self, corpus: str, task: WritingTask) -> WriterRequest:
        user = USER.format(passage=passage_of(corpus, task), count=len(task.gold))
        return WriterRequest(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            response_model=ProbeAnswer,
            schema_name="probe_question",
            prompt_id=PROMPT_ID,
        )

    def draft(self, corpus: str, answer: ProbeAnswer, context: None) -> Draft | None:
        excerpts = tuple(e.strip() for e in answer.excerpts if e.strip())
        return Draft(answer.question.strip(), excerpts) if excerpts else None
