"""Semantic Independence (section 3.3, eq. 4-6): does a passage mean the same with its neighbours?

Metric card.
- Range [0, 1] after clipping (raw mean cosine in [-1, 1]); higher is better: 1 means answers
  from the focus passage alone (a*) and with the k most similar other passages added (a) are
  semantically identical.
- Procedure per focus passage p*: LLM(p*) -> Q; for each q: a* = LLM(q, p*), a = LLM(q, p*, P_q)
  where P_q are the top-k passages by θ(q, p); ζ̄ = mean_q θ(a*, a), negatives set to 0;
  ζ_sem (eq. 6) is the mean over the focus passages.
- a* and a are asked with the same seed, so at a non-zero answer temperature only the context
  differs.
- Questions are de-duplicated on normalised text (a set). Paper: P_q is the top-k of all
  passages, so p* may be among them (the context is then {p*} ∪ P_q, p* once);
  ``exclude_focus`` (the published code) takes P_q from the other passages only.

Eq. 5 for two questions: the first pair of answers agrees (θ = 1), the second is 45° apart
(θ = cos 45° ≈ 0.7071), so ζ̄ = (1 + 0.7071) / 2:

>>> from hope.core.metrics.equations import (
...     clip_score, paired_similarities, semantic_independence_passage)
>>> similarities = paired_similarities([[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [1.0, 1.0]])
>>> [round(float(s), 4) for s in similarities]
[1.0, 0.7071]
>>> round(semantic_independence_passage(similarities), 4)
0.8536

A passage whose answers turn opposite scores 0, not below (the paper's clipping):

>>> clip_score(semantic_independence_passage([-0.5, 0.1]), "negative_to_zero")
0.0

Requests per chunking (paper profile: 5 questions, a* and a for each); with a single passage
there are no neighbours, so a is the very request a* is and is sent once:

>>> from hope.core.hope_settings import load_profile
>>> [(r.kind, r.count, r.unique) for r in planned_requests(load_profile("paper"), focus=2,
...                                                         passages=4, segments=20)]
[('question_generation', 2, 2), ('answer_question', 10, 10), ('answer_question', 10, 10)]
>>> [r.unique for r in planned_requests(load_profile("paper"), focus=1, passages=1, segments=20)]
[1, 5, 0]
"""

from __future__ import annotations

import asyncio
from typing import Any

from hope.core.hope_settings import HopeSettings
from hope.core.metrics import equations
from hope.core.metrics.eval_context import EvalContext, format_passages, text_digest
from hope.core.metrics.request_plan import PlannedRequest
from hope.core.model_interface import LLMCallError
from hope.core.prompts.response_schemas import AnswerResponse, questions_model

NAME = "semantic_independence"


class SemanticIndependence:
    def __init__(self, ctx: EvalContext):
        self.ctx = ctx
        self.cfg = ctx.settings.semantic_independence

    async def score_passage(
        self,
        index: int,
        passages: list[str],
        passage_index: equations.PassageIndex,
        passage_ids: list[str],
    ) -> dict[str, Any]:
        focus = passages[index]
        evidence: dict[str, Any] = {
            "score": None,
            "raw": None,
            "status": "ok",
            "reason": None,
            "questions": [],
        }
        try:
            prompt = self.ctx.prompt("question_generation")
            response = await self.ctx.ask(
                prompt,
                questions_model(self.cfg.n_questions),
                temperature=self.cfg.question_temperature,
                seed=self.ctx.seed(NAME, "questions", text_digest(focus)),
                n=self.cfg.n_questions,
                passage=focus,
            )
            questions, duplicates = equations.distinct_texts(response.value.questions)
            evidence["duplicate_questions"] = duplicates
            if not questions:
                raise LLMCallError("no usable question generated", attempts=0)
            question_vectors = await self.ctx.embed(questions)
            # P_q of every question from one product against the passages, which are read
            # once per focus passage instead of once per question.
            retrievals = passage_index.top_k(
                question_vectors,
                self.cfg.top_k,
                exclude=[index] if self.cfg.exclude_focus else (),
            )
            records = await asyncio.gather(
                *(
                    self._answer_pair(index, q, retrieved, passages, passage_ids)
                    for q, retrieved in zip(questions, retrievals, strict=True)
                )
            )
            evidence["questions"] = records
            sims = [r["similarity"] for r in records if r["similarity"] is not None]
            if not sims:
                raise LLMCallError("every question failed to get both answers", attempts=0)
            raw = equations.semantic_independence_passage(sims)
            self.ctx.scored(evidence, raw)
        except LLMCallError as exc:
            self.ctx.failed(evidence, NAME, f"passage {index}", exc.reason)
        finally:
            self.ctx.advance()
        return evidence

    async def _answer_pair(
        self,
        index: int,
        question: str,
        retrieved: list[int],
        passages: list[str],
        passage_ids: list[str],
    ) -> dict[str, Any]:
        record: dict[str, Any] = {
            "question": question,
            "retrieved": [passage_ids[i] for i in retrieved],
            "answer_alone": None,
            "answer_with_context": None,
            "similarity": None,
            "status": "ok",
            "reason": None,
        }
        focus = passages[index]
        prompt = self.ctx.prompt("answer_question")
        seed = self.ctx.seed(NAME, "answer", text_digest(focus), question)
        contexts = ([focus], [focus] + [passages[i] for i in retrieved if i != index])
        results = await asyncio.gather(
            *(
                self.ctx.ask(
                    prompt,
                    AnswerResponse,
                    temperature=self.cfg.answer_temperature,
                    seed=seed,
                    context=format_passages(ctx),
                    question=question,
                )
                for ctx in contexts
            ),
            return_exceptions=True,
        )
        problems = []
        answers: list[str | None] = []
        for label, outcome in zip(("a*", "a"), results, strict=True):
            if isinstance(outcome, LLMCallError):
                problems.append(f"{label}: {outcome.reason}")
                answers.append(None)
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                text = outcome.value.answer.strip()
                if not text:
                    problems.append(f"{label}: empty answer")
                answers.append(text or None)
        record["answer_alone"], record["answer_with_context"] = answers
        if problems:
            reason = "; ".join(problems)
            record["reason"] = reason
            if self.cfg.failed_answer == "zero":
                record["status"] = "scored_zero"
                record["similarity"] = 0.0
            else:
                record["status"] = "failed"
                self.ctx.fail(NAME, f"passage {index} question {question!r}", reason)
            return record
        vectors = await self.ctx.embed([answers[0], answers[1]])
        record["similarity"] = float(equations.paired_similarities(vectors[:1], vectors[1:])[0])
        return record


def planned_requests(
    settings: HopeSettings, *, focus: int, passages: int, segments: int
) -> list[PlannedRequest]:
    """Questions per focus passage, then a* (alone) and a (with neighbours) for each question;
    without neighbours a is the very request a* is, sent once."""
    cfg = settings.semantic_independence
    answers, neighbours = focus * cfg.n_questions, min(cfg.top_k, passages - 1)
    return [
        PlannedRequest("question_generation", questions_model(cfg.n_questions), focus, passages=1),
        PlannedRequest("answer_question", AnswerResponse, answers, passages=1, statements=1),
        PlannedRequest(
            "answer_question",
            AnswerResponse,
            answers,
            passages=1 + neighbours,
            statements=1,
            unique=answers if neighbours else 0,
        ),
    ]
