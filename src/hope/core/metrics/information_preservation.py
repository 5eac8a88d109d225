"""Collective Information Preservation (section 3.4, eq. 7-9): is the document's content kept?

Metric card.
- Range [0, 1]; higher is better: the share of sampled facts whose true statement an LLM picks
  out of four options when it sees only the passages retrieved for that fact (chance is 0.25).
- Procedure: d ~ U(D), segments of consecutive sentences; LLM(d) -> {s_t, s_f1, s_f2, s_f3};
  P_st = top-k passages by θ(s_t, p); options shuffled with a seed; LLM(s, P_st) -> a; score 1
  if a = s_t else 0.
- Segment sampling and quadruples depend only on the document, so every chunker of the same
  document is tested on the same facts.
- With ``position_debiasing`` (beyond the paper) the choice is asked again with the options in
  reverse order, and a segment counts only if both answers are right.
- With ``judgement: support`` (beyond the paper) each of the four statements is judged alone
  against P_st (supported or not), and a segment counts when the true statement is supported and
  no false one is. Without context nothing is supported, so a quadruple whose false statements
  a reader can reject unseen (absolutes) does not give its answer away.

Eq. 9: three of four true statements picked:

>>> from hope.core.metrics.equations import information_preservation
>>> information_preservation([True, False, True, True])
0.75

Eq. 7's segments: four sentences hold two windows of three, and without replacement both are
drawn, whatever the seed:

>>> [s.text for s in sample_segments("One. Two. Three. Four.", n_segments=20,
...                                  sentences_per_segment=3, replace=False, seed=7)]
['One. Two. Three.', 'Two. Three. Four.']

Requests per chunking: a quadruple per segment, shared by every chunking of the document, and
one choice per segment:

>>> from hope.core.hope_settings import load_profile
>>> [(r.kind, r.count, r.per_document) for r in planned_requests(
...     load_profile("paper"), focus=2, passages=4, segments=20)]
[('quadruple_generation', 20, True), ('truth_choice', 20, False)]
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np

from hope.core.hope_settings import HopeSettings
from hope.core.metrics import equations
from hope.core.metrics.eval_context import EvalContext, format_passages, text_digest
from hope.core.metrics.request_plan import PlannedRequest
from hope.core.model_interface import LLMCallError
from hope.core.prompts.response_schemas import ChoiceResponse, QuadrupleResponse, SupportResponse
from hope.core.text import split_sentences

NAME = "information_preservation"
LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class Segment:
    draw: int
    first_sentence: int
    n_sentences: int
    start: int
    end: int
    text: str


def sample_segments(
    document: str,
    *,
    n_segments: int,
    sentences_per_segment: int,
    replace: bool,
    seed: int,
    language: str = "en",
) -> list[Segment]:
    """d ~ U(D): uniform draws over the windows of consecutive sentences.

    A document with fewer sentences than a window holds is one segment: the whole text. Without
    replacement, at most as many segments as there are windows.
    """
    sentences = split_sentences(document, language)
    if not sentences:
        return []
    width = min(sentences_per_segment, len(sentences))
    n_windows = len(sentences) - width + 1
    rng = np.random.default_rng(seed)
    if replace:
        starts = rng.integers(0, n_windows, size=n_segments).tolist()
    else:
        starts = sorted(rng.choice(n_windows, size=min(n_segments, n_windows), replace=False))
    segments = []
    for draw, first in enumerate(int(s) for s in starts):
        last = sentences[first + width - 1]
        start = sentences[first].start
        segments.append(Segment(draw, first, width, start, last.end, document[start : last.end]))
    return segments


def require_distinct_statements(value: QuadrupleResponse) -> None:
    """Four equal or near-equal options leave no right answer: regenerate such a quadruple."""
    statements = [value.true_statement, *value.false_statements]
    if len({equations.normalised_text(s) for s in statements}) < len(statements):
        raise ValueError("the quadruple's four statements are not distinct")


@dataclass(frozen=True)
class Quadruple:
    """One segment's test item: its statements, the seeded option order and the answer key."""

    identity: tuple[Any, ...]
    true_statement: str
    false_statements: tuple[str, ...]
    order: tuple[int, ...]

    def options(self, reverse: bool = False) -> dict[str, str]:
        """Letters to statements; ``reverse`` lists the same order backwards, which moves the true
        statement to another letter (position i -> 3 - i) and so exposes a favourite letter."""
        statements = [self.true_statement, *self.false_statements]
        order = self.order[::-1] if reverse else self.order
        return {LETTERS[pos]: statements[src] for pos, src in enumerate(order)}

    def answer_key(self, reverse: bool = False) -> str:
        order = self.order[::-1] if reverse else self.order
        return LETTERS[order.index(0)]


class InformationPreservation:
    def __init__(self, ctx: EvalContext):
        self.ctx = ctx
        self.cfg = ctx.settings.information_preservation

    def segments(self, document: str) -> list[Segment]:
        return sample_segments(
            document,
            n_segments=self.cfg.n_segments,
            sentences_per_segment=self.cfg.sentences_per_segment,
            replace=self.cfg.replace,
            seed=self.ctx.seed(NAME, "segments", text_digest(document)),
            language=self.ctx.settings.language,
        )

    def identity(self, document: str, segment: Segment) -> tuple[Any, ...]:
        identity: tuple[Any, ...] = (text_digest(document), segment.start, segment.end)
        # With replacement the same window can be drawn twice; the draw number keeps them apart.
        return (*identity, segment.draw) if self.cfg.replace else identity

    async def quadruple(self, document: str, segment: Segment) -> Quadruple:
        """LLM(d) -> {s_t, s_f1, s_f2, s_f3} and the seeded shuffle of the options."""
        identity = self.identity(document, segment)
        quad = await self.ctx.ask(
            self.ctx.prompt("quadruple_generation"),
            QuadrupleResponse,
            temperature=self.cfg.generation_temperature,
            seed=self.ctx.seed(NAME, "quadruple", *identity),
            validate=require_distinct_statements,
            segment=segment.text,
        )
        rng = np.random.default_rng(self.ctx.seed(NAME, "options", *identity))
        return Quadruple(
            identity=identity,
            true_statement=quad.value.true_statement.strip(),
            false_statements=tuple(s.strip() for s in quad.value.false_statements),
            order=tuple(int(i) for i in rng.permutation(4)),
        )

    async def judge(self, quad: Quadruple, context: list[str]) -> list[dict[str, Any]]:
        """LLM(s, context) -> a: one choice per option order (two with position debiasing), or
        under ``judgement: support`` one verdict per statement."""
        rendered = format_passages(context) if context else "(no passages)"
        if self.cfg.judgement == "support":
            return [await self.support(quad, rendered)]
        orders = (False, True) if self.cfg.position_debiasing else (False,)
        choices = []
        for reverse in orders:
            options = quad.options(reverse)
            choice = await self.ctx.ask(
                self.ctx.prompt("truth_choice"),
                ChoiceResponse,
                temperature=self.cfg.choice_temperature,
                seed=self.ctx.seed(NAME, "choice", *quad.identity),
                retry_temperatures=self.cfg.choice_retry_temperatures or None,
                context=rendered,
                options="\n".join(f"{k}. {v}" for k, v in options.items()),
            )
            key = quad.answer_key(reverse)
            choices.append(
                {
                    "order": "reversed" if reverse else "seeded",
                    "options": options,
                    "answer_key": key,
                    "choice": choice.value.choice,
                    "correct": choice.value.choice == key,
                }
            )
        return choices

    async def support(self, quad: Quadruple, rendered_context: str) -> dict[str, Any]:
        """Beyond the paper: each option judged alone against the context. Right when the true
        statement is supported and no false one is; with no context a judge that reads it
        supports nothing, so a quadruple cannot give its answer away as it can in a choice."""
        options = quad.options()
        verdicts = {}
        for letter, statement in options.items():
            answer = await self.ctx.ask(
                self.ctx.prompt("statement_support"),
                SupportResponse,
                temperature=self.cfg.choice_temperature,
                seed=self.ctx.seed(NAME, "support", *quad.identity, letter),
                retry_temperatures=self.cfg.choice_retry_temperatures or None,
                context=rendered_context,
                statement=statement,
            )
            verdicts[letter] = answer.value.verdict
        key = quad.answer_key()
        supported = sorted(k for k, v in verdicts.items() if v == "yes")
        return {
            "order": "seeded",
            "options": options,
            "answer_key": key,
            "verdicts": verdicts,
            "choice": None,
            "correct": supported == [key],
        }

    async def score_segment(
        self,
        document: str,
        segment: Segment,
        passages: list[str],
        passage_index: equations.PassageIndex,
        passage_ids: list[str],
    ) -> dict[str, Any]:
        record: dict[str, Any] = {
            "draw": segment.draw,
            "first_sentence": segment.first_sentence,
            "start": segment.start,
            "end": segment.end,
            "segment": segment.text,
            "true_statement": None,
            "false_statements": None,
            "options": None,
            "answer_key": None,
            "retrieved": None,
            "choice": None,
            "choices": None,
            "correct": None,
            "status": "ok",
            "reason": None,
        }
        try:
            quad = await self.quadruple(document, segment)
            record["true_statement"] = quad.true_statement
            record["false_statements"] = list(quad.false_statements)
            record["options"], record["answer_key"] = quad.options(), quad.answer_key()
            true_vector = await self.ctx.embed([quad.true_statement])
            retrieved = passage_index.top_k(true_vector, self.cfg.top_k)[0]
            record["retrieved"] = [passage_ids[i] for i in retrieved]
            choices = await self.judge(quad, [passages[i] for i in retrieved])
            record["choices"] = choices
            record["choice"] = choices[0]["choice"]
            # Debiased: right only if right under every order, so a favourite letter scores 0.
            record["correct"] = all(c["correct"] for c in choices)
        except LLMCallError as exc:
            record["status"] = "failed"
            record["reason"] = exc.reason
            self.ctx.fail(
                NAME, f"segment {segment.draw} (chars {segment.start}-{segment.end})", exc.reason
            )
        finally:
            self.ctx.advance()
        return record

    async def score(
        self,
        document: str,
        passages: list[str],
        passage_vectors: np.ndarray | equations.PassageIndex,
        passage_ids: list[str],
    ) -> list[dict[str, Any]]:
        index = (
            passage_vectors
            if isinstance(passage_vectors, equations.PassageIndex)
            else equations.PassageIndex(passage_vectors)
        )
        return list(
            await asyncio.gather(
                *(
                    self.score_segment(document, s, passages, index, passage_ids)
                    for s in self.segments(document)
                )
            )
        )


def segment_count(settings: HopeSettings, n_sentences: int) -> int:
    """How many segments ``sample_segments`` draws from a document of ``n_sentences``."""
    cfg = settings.information_preservation
    if n_sentences < 1:
        return 0
    windows = n_sentences - min(cfg.sentences_per_segment, n_sentences) + 1
    return cfg.n_segments if cfg.replace else min(cfg.n_segments, windows)


def planned_requests(
    settings: HopeSettings, *, focus: int, passages: int, segments: int
) -> list[PlannedRequest]:
    """A quadruple per segment (the same for every chunking), then a choice among its four
    (asked twice, in two option orders, under ``position_debiasing``), or four verdicts under
    ``judgement: support``."""
    cfg = settings.information_preservation
    n, retrieved = segments, min(cfg.top_k, passages)
    quadruples = PlannedRequest(
        "quadruple_generation", QuadrupleResponse, n, segments=1, per_document=True
    )
    if cfg.judgement == "support":
        return [
            quadruples,
            PlannedRequest(
                "statement_support", SupportResponse, 4 * n, passages=retrieved, statements=1
            ),
        ]
    choices = n * (2 if cfg.position_debiasing else 1)
    return [
        quadruples,
        PlannedRequest("truth_choice", ChoiceResponse, choices, passages=retrieved, statements=4),
    ]
