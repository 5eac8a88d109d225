"""An LLM-written probe question whose excerpts cannot fail location: sentences chosen by number.

``hope.probe.llm_writer`` asks the model to copy its excerpts verbatim; small local models
paraphrase instead, and a paraphrased excerpt is not found in the corpus, so the question is lost
to the ``located`` filter. Here the region of the drawn gold is shown as numbered sentences (the
project's splitter, ``hope.core.text.split_sentences``, on the region) and the model answers with
its question and the numbers of the sentences that answer it. The numbers are mapped back to the
sentences' corpus spans, so every excerpt is ``corpus[start:end]`` by construction and the draft
carries its spans, as a code writer's does; consecutive numbers make one excerpt (a run of whole
sentences, like the drawn gold). The drawn number of excerpts is asked for, as a request: any
valid choice within the region is accepted. Numbers out of range or repeated are dropped; with
none left, or an answer that fails (``LLMCallError``), the question is not written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from hope.core.text import Sentence, split_sentences
from hope.probe.model_writer import ModelWriter, WriterRequest
from hope.probe.writing import Draft, Span, WritingTask

PROMPT_ID = "probe_question_sentences_v1"
SCHEMA_NAME = "probe_question_sentences"
SYSTEM = (
    "You write test questions for a search engine over a document collection. A question must "
    "be answerable from the given sentences alone, ask about their content in your own words, "
    "and not copy them."
)
USER = """Numbered sentences of a passage:
\"\"\"
{passage}
\"\"\"

Write one question that these sentences answer. Then name the {count} sentence(s) that answer \
it, by their numbers. Answer in JSON with the keys "question" (the question) and "sentences" \
(a list of sentence numbers)."""


class SentenceAnswer(BaseModel):
    question: str = Field(min_length=1)
    sentences: list[int] = Field(min_length=1, max_length=8)


def region_sentences(corpus: str, region: Span) -> list[Sentence]:
    """The sentences of ``corpus[region]``, with absolute corpus offsets."""
    start = region[0]
    return [
        Sentence(s.text, start + s.start, start + s.end)
        for s in split_sentences(corpus[region[0] : region[1]])
    ]


def numbered(sentences: Sequence[Sentence]) -> str:
    """One line per sentence, ``[n] text`` from 1, its whitespace runs shown as one space."""
    return "\n".join(f"[{n}] {' '.join(s.text.split())}" for n, s in enumerate(sentences, 1))


def chosen_spans(sentences: Sequence[Sentence], numbers: Sequence[int]) -> tuple[Span, ...]:
    """The spans of the sentences numbered ``numbers`` (from 1), in corpus order, consecutive
    numbers joined into one span; numbers out of range and repeats dropped."""
    valid = sorted({n for n in numbers if 1 <= n <= len(sentences)})
    runs: list[list[int]] = []
    for n in valid:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return tuple((sentences[run[0] - 1].start, sentences[run[-1] - 1].end) for run in runs)


@dataclass
class SentenceWriter(ModelWriter):
    """Asks for the question and the numbers of the sentences that answer it."""

    name: str = "llm_sentences"

    def request(self, corpus: str, task: WritingTask) -> WriterRequest | None:
        sentences = region_sentences(corpus, task.region)
        if not sentences:
            return None
        user = USER.format(passage=numbered(sentences), count=len(task.gold))
        return WriterRequest(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            response_model=SentenceAnswer,
            schema_name=SCHEMA_NAME,
            prompt_id=PROMPT_ID,
            context=sentences,
        )

    def draft(self, corpus: str, answer: SentenceAnswer, context: list[Sentence]) -> Draft | None:
        spans = chosen_spans(context, answer.sentences)
        question = answer.question.strip()
        if not spans or not question:
            return None
        return Draft(question, tuple(corpus[s:e] for s, e in spans), spans)
