"""Concept Unity (section 3.2, eq. 2-3): do a passage's statements say one thing?

Metric card.
- Range [0, 1] after clipping (raw cosine mean in [-1, 1]); higher is better: 1 means every
  statement generated about the passage is semantically alike (one core concept).
- Paper profile: LLM(p*) -> S, ζ̄ = mean θ over all |S|² ordered pairs, negatives set to 0;
  ζ_con (eq. 3) is the mean over the focus passages.
- Reference profile (the authors' code): question/answer pairs, critic-filtered, mean θ of the
  questions to their centroid.
- S is a set (eq. 2): statements equal after normalisation count once and the duplicates are
  counted in the evidence, so a model that repeats one statement cannot score a perfect unity.

Eq. 2 on three statement vectors: two point the same way, one is orthogonal to both, so θ is 1
for 5 of the 9 ordered pairs (the diagonal included) and 0 for the other 4:

>>> from hope.core.metrics.equations import concept_unity_centroid, concept_unity_pairwise
>>> round(concept_unity_pairwise([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]), 4)  # 5 / 9
0.5556

The reference variant: two orthogonal questions are each 45° from their centroid, cos 45° ≈ 0.7071:

>>> round(concept_unity_centroid([[1.0, 0.0], [0.0, 1.0]]), 4)
0.7071

What it asks the LLM per chunking with two focus passages (``planned_requests`` below):

>>> from hope.core.hope_settings import load_profile
>>> [(r.kind, r.count) for r in planned_requests(load_profile("paper"), focus=2, passages=4,
...                                               segments=20)]
[('concept_statements', 2)]
>>> [(r.kind, r.count) for r in planned_requests(load_profile("reference"), focus=2, passages=4,
...                                               segments=20)]
[('qa_pairs', 2), ('qa_critic', 2)]
"""

from __future__ import annotations

from typing import Any

from hope.core.hope_settings import HopeSettings
from hope.core.metrics import equations
from hope.core.metrics.eval_context import EvalContext, text_digest
from hope.core.metrics.request_plan import PlannedRequest
from hope.core.model_interface import LLMCallError
from hope.core.prompts.response_schemas import critic_model, qa_pairs_model, statements_model

NAME = "concept_unity"


class ConceptUnity:
    def __init__(self, ctx: EvalContext):
        self.ctx = ctx
        self.cfg = ctx.settings.concept_unity

    async def score_passage(self, index: int, passage: str) -> dict[str, Any]:
        evidence: dict[str, Any] = {"score": None, "raw": None, "status": "ok", "reason": None}
        try:
            if self.cfg.method == "statements":
                items, duplicates = equations.distinct_texts(await self._statements(passage))
                evidence["statements"] = items
                evidence["duplicate_statements"] = duplicates
            else:
                items, pairs, kept = await self._critic_filtered_questions(passage)
                evidence["qa_pairs"] = pairs
                evidence["critic_keep"] = kept
                evidence["questions"] = items
            if len(items) < self.cfg.min_items:
                raise LLMCallError(
                    f"{len(items)} distinct usable item(s), fewer than "
                    f"min_items={self.cfg.min_items}",
                    attempts=0,
                )
            vectors = await self.ctx.embed(items)
            if self.cfg.method == "statements":
                raw = equations.concept_unity_pairwise(vectors)
            else:
                raw = equations.concept_unity_centroid(vectors)
            self.ctx.scored(evidence, raw)
        except LLMCallError as exc:
            self.ctx.failed(evidence, NAME, f"passage {index}", exc.reason)
        finally:
            self.ctx.advance()
        return evidence

    async def _statements(self, passage: str) -> list[str]:
        prompt = self.ctx.prompt("concept_statements")
        response = await self.ctx.ask(
            prompt,
            statements_model(self.cfg.n_items),
            temperature=self.cfg.temperature,
            seed=self.ctx.seed(NAME, text_digest(passage)),
            n=self.cfg.n_items,
            passage=passage,
        )
        return [s.strip() for s in response.value.statements if s.strip()]

    async def _critic_filtered_questions(
        self, passage: str
    ) -> tuple[list[str], list[dict[str, str]], list[bool]]:
        prompt = self.ctx.prompt("qa_pairs")
        seed = self.ctx.seed(NAME, "qa", text_digest(passage))
        response = await self.ctx.ask(
            prompt,
            qa_pairs_model(self.cfg.n_items),
            temperature=self.cfg.temperature,
            seed=seed,
            n=self.cfg.n_items,
            passage=passage,
        )
        pairs = [
            {"question": p.question.strip(), "answer": p.answer.strip()}
            for p in response.value.pairs
        ]
        keep = [True] * len(pairs)
        if self.cfg.critic:
            critic = self.ctx.prompt("qa_critic")
            listing = "\n".join(
                f"{i}. Q: {p['question']}\n   A: {p['answer']}" for i, p in enumerate(pairs, 1)
            )
            verdict = await self.ctx.ask(
                critic,
                critic_model(len(pairs)),
                temperature=self.cfg.temperature,
                seed=self.ctx.seed(NAME, "critic", text_digest(passage)),
                passage=passage,
                pairs=listing,
            )
            keep = list(verdict.value.keep)
        questions = [p["question"] for p, k in zip(pairs, keep, strict=True) if k and p["question"]]
        return questions, pairs, keep


def planned_requests(
    settings: HopeSettings, *, focus: int, passages: int, segments: int
) -> list[PlannedRequest]:
    """One generation per focus passage; the critic then reads the passage and every pair."""
    cfg, n = settings.concept_unity, settings.concept_unity.n_items
    if cfg.method == "statements":
        return [PlannedRequest("concept_statements", statements_model(n), focus, passages=1)]
    plan = [PlannedRequest("qa_pairs", qa_pairs_model(n), focus, passages=1)]
    if cfg.critic:  # the critic reads the passage and every pair: 2n texts
        plan.append(PlannedRequest("qa_critic", critic_model(n), focus, 1, statements=2 * n))
    return plan
