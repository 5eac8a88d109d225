"""The RAG generator: answer each question from its top-k passages of one chunker's index."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hope.core.concurrency import gather_bounded
from hope.core.io import without_run_timings
from hope.core.prompting import Prompt, load_prompt
from hope.core.seeding import derive_seed
from hope.models.llm import ChatLLM, LLMCallError
from hope.rag.rag_retrieval import Hit

PROMPT_DIR = str(Path(__file__).parent / "prompts")


class RagAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1, max_length=800)


def _validate_answer(value: Any) -> None:
    if not value.answer.strip():
        raise ValueError("empty answer")


def render_context(hits: Sequence[Hit]) -> str:
    return "\n\n".join(f"[Passage {n}]\n{hit.text.strip()}" for n, hit in enumerate(hits, 1))


async def answer_one(
    question: Mapping[str, Any],
    chunker: str,
    hits: Sequence[Hit],
    llm: ChatLLM,
    prompt: Prompt,
    *,
    seed: int,
    temperature: float,
) -> dict[str, Any]:
    """One answer record; a failed LLM call gives ``answer: None`` and its reason in ``error``."""
    record: dict[str, Any] = {
        "question_id": question["question_id"],
        "chunker": chunker,
        "doc_id": question["doc_id"],
        "domain": question["domain"],
        "retrieved_passage_ids": [h.passage_id for h in hits],
        "retrieved_doc_ids": [h.doc_id for h in hits],
        "retrieved_scores": [round(h.score, 6) for h in hits],
        "answer": None,
        "error": None,
    }
    try:
        # The same seed for a question under every chunker: only the passages differ.
        response = await llm.structured(
            messages=prompt.render(context=render_context(hits), question=question["question"]),
            response_model=RagAnswer,
            schema_name="rag_answer",
            prompt_id=prompt.id,
            temperature=temperature,
            seed=derive_seed(seed, "answer", question["question_id"]),
            validate=_validate_answer,
        )
    except LLMCallError as exc:
        record["error"] = exc.reason
    else:
        record["answer"] = response.value.answer.strip()
    record["usage"] = without_run_timings(llm.usage.to_dict())
    return record


async def answer_all(
    questions: Sequence[Mapping[str, Any]],
    chunkers: Sequence[str],
    hits: Mapping[tuple[str, str], Sequence[Hit]],
    make_llm: Any,
    *,
    seed: int,
    temperature: float = 0.0,
    concurrency: int = 2,
    prompt: Prompt | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Answers for every (chunker, question), in that order.

    ``make_llm()`` returns a fresh ``ChatLLM`` (sharing client and cache) per answer so that each
    record carries its own usage; ``concurrency`` bounds the requests in flight overall.
    """
    prompt = prompt or load_prompt("rag_answer", PROMPT_DIR)

    def one(pair: tuple[Mapping[str, Any], str]) -> Awaitable[dict[str, Any]]:
        question, chunker = pair
        return answer_one(
            question,
            chunker,
            hits[(question["question_id"], chunker)],
            make_llm(),
            prompt,
            seed=seed,
            temperature=temperature,
        )

    pairs = [(q, chunker) for chunker in chunkers for q in questions]
    return await gather_bounded(
        one, pairs, limit=concurrency, progress="rag answers" if progress else None
    )
