"""Open-book test questions per domain (section 4.2): RAGAS test-set generation, with a generator
of our own as the documented fallback.

Every question carries its reference answer, reference contexts, source ``doc_id`` and the
generator that produced it (``ragas`` or ``fallback``), so each chunker is judged on the same set.

Fallback generator: the domain's documents are taken in a seeded order and the questions are dealt
out round-robin over them; each question is written by the LLM from one sentence-aligned excerpt
(about ``context_chars`` characters) of its document, which becomes its single reference context.
A failed LLM call tries the next excerpt of the same document, up to ``max_attempts``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hope.concurrency import gather_bounded
from hope.models.llm import ChatLLM, LLMCallError
from hope.models.openai_client import backend_error_in
from hope.prompting import Prompt, load_prompt
from hope.seeding import derive_seed
from hope.text import split_sentences

PROMPT_DIR = str(Path(__file__).parent / "prompts")
GENERATORS = ("ragas", "fallback")

RagasGenerate = Callable[[str, Sequence[Mapping[str, Any]], int], list[dict[str, Any]]]


def question_prompt() -> Prompt:
    return load_prompt("rag_question", PROMPT_DIR)


class GeneratedQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=10, max_length=300)
    answer: str = Field(min_length=1, max_length=600)


def _validate_generated(value: Any) -> None:
    if len(value.question.split()) < 3:
        raise ValueError("question has fewer than three words")
    if not value.answer.strip():
        raise ValueError("empty answer")


def excerpt_windows(text: str, context_chars: int) -> list[str]:
    """Consecutive excerpts of whole sentences, each at most ``context_chars`` long (a sentence
    longer than that is cut at a word boundary)."""
    windows: list[str] = []
    start: int | None = None
    end = 0
    for sentence in split_sentences(text):
        if start is not None and sentence.end - start > context_chars:
            windows.append(text[start:end])
            start = None
        if start is None:
            start = sentence.start
        end = sentence.end
        if end - start > context_chars:
            cut = text.rfind(" ", start, start + context_chars)
            cut = cut if cut > start else start + context_chars
            windows.append(text[start:cut])
            start = None
    if start is not None:
        windows.append(text[start:end])
    return [w.strip() for w in windows if w.strip()]


@dataclass
class Slot:
    """One question to write: its document and the excerpts to try, in order."""

    domain: str
    ordinal: int
    doc_id: str
    title: str
    excerpts: list[str]


def plan_slots(
    domain: str,
    documents: Sequence[Mapping[str, Any]],
    count: int,
    *,
    seed: int,
    context_chars: int,
    first_ordinal: int = 0,
) -> list[Slot]:
    """``count`` slots dealt round-robin over the documents in a seeded order."""
    if not documents:
        raise ValueError(f"domain {domain!r} has no documents")
    rng = random.Random(derive_seed(seed, "questions", domain))
    order = sorted(documents, key=lambda d: d["doc_id"])
    rng.shuffle(order)
    windows: dict[str, list[str]] = {}
    for doc in order:
        pieces = excerpt_windows(doc["text"], context_chars)
        if not pieces:
            raise ValueError(f"document {doc['doc_id']!r} has no text to ask about")
        rng.shuffle(pieces)
        windows[doc["doc_id"]] = pieces
    slots = []
    for offset in range(count):
        ordinal = first_ordinal + offset
        doc = order[ordinal % len(order)]
        pieces = windows[doc["doc_id"]]
        turn = ordinal // len(order)
        rotated = pieces[turn % len(pieces) :] + pieces[: turn % len(pieces)]
        slots.append(Slot(domain, ordinal, doc["doc_id"], doc.get("title") or "", rotated))
    return slots


@dataclass
class SlotOutcome:
    slot: Slot
    record: dict[str, Any] | None
    errors: list[str] = field(default_factory=list)


async def write_question(
    slot: Slot, llm: ChatLLM, prompt: Prompt, *, seed: int, max_attempts: int
) -> SlotOutcome:
    outcome = SlotOutcome(slot, None)
    for attempt in range(max_attempts):
        excerpt = slot.excerpts[attempt % len(slot.excerpts)]
        try:
            response = await llm.structured(
                messages=prompt.render(title=slot.title or slot.doc_id, excerpt=excerpt),
                response_model=GeneratedQuestion,
                schema_name="generated_question",
                prompt_id=prompt.id,
                temperature=0.0,
                seed=derive_seed(seed, "question", slot.domain, slot.ordinal, attempt),
                validate=_validate_generated,
            )
        except LLMCallError as exc:
            outcome.errors.append(exc.reason)
            continue
        value = response.value
        outcome.record = {
            "domain": slot.domain,
            "doc_id": slot.doc_id,
            "question": value.question.strip(),
            "reference": value.answer.strip(),
            "reference_contexts": [excerpt],
            "source_doc_ids": [slot.doc_id],
            "generator": "fallback",
            "generator_detail": prompt.id,
        }
        return outcome
    return outcome


async def fallback_questions(
    slots: Sequence[Slot],
    llm: ChatLLM,
    *,
    seed: int,
    max_attempts: int,
    prompt: Prompt | None = None,
    progress: str | None = None,
) -> list[SlotOutcome]:
    """One outcome per slot; ``llm`` bounds the requests in flight, ``progress`` labels a bar."""
    prompt = prompt or question_prompt()

    def one(slot: Slot) -> Awaitable[SlotOutcome]:
        return write_question(slot, llm, prompt, seed=seed, max_attempts=max_attempts)

    return await gather_bounded(one, slots, progress=progress)


def _normalise(text: str) -> str:
    return " ".join(text.split())


def source_document(context: str, documents: Sequence[Mapping[str, Any]]) -> str:
    """The document a ragas reference context came from: the one containing it verbatim (up to
    whitespace), else the one sharing the most words with it."""
    needle = _normalise(context)
    for doc in documents:
        if needle and needle in _normalise(doc["text"]):
            return doc["doc_id"]
    words = set(needle.lower().split())
    return max(
        documents,
        key=lambda d: (len(words & set(d["text"].lower().split())), d["doc_id"]),
    )["doc_id"]


CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def tiktoken_cl100k_cached() -> bool:
    """Whether tiktoken can load cl100k_base without the network (its cache, as tiktoken finds it).

    ragas' test-set transforms count tokens with it; tiktoken would otherwise try to download it.
    """
    import hashlib
    import os
    import tempfile

    cache_dir = os.environ.get(
        "TIKTOKEN_CACHE_DIR",
        os.environ.get("DATA_GYM_CACHE_DIR", os.path.join(tempfile.gettempdir(), "data-gym-cache")),
    )
    if not cache_dir:
        return False
    key = hashlib.sha1(CL100K_URL.encode()).hexdigest()
    return os.path.exists(os.path.join(cache_dir, key))


def ragas_testset(
    domain: str,
    documents: Sequence[Mapping[str, Any]],
    count: int,
    *,
    llm: Any,
    embeddings: Any,
    seed: int,
    call_timeout_s: float,
    max_workers: int = 4,
) -> list[dict[str, Any]]:
    """Questions from ragas' ``TestsetGenerator`` on the domain's documents (may raise)."""
    if not tiktoken_cl100k_cached():
        raise RuntimeError(
            "ragas test-set generation needs tiktoken's cl100k_base encoding, which is not in "
            "tiktoken's cache (TIKTOKEN_CACHE_DIR) and cannot be downloaded offline"
        )
    import numpy as np
    from langchain_core.documents import Document
    from ragas.run_config import RunConfig
    from ragas.testset import TestsetGenerator

    # ragas draws personas, nodes and query types with the global generators.
    random.seed(derive_seed(seed, "ragas-testset", domain))
    np.random.seed(derive_seed(seed, "ragas-testset", domain))
    docs = [
        Document(page_content=d["text"], metadata={"doc_id": d["doc_id"], "title": d.get("title")})
        for d in documents
    ]
    generator = TestsetGenerator(llm=llm, embedding_model=embeddings)
    testset = generator.generate_with_langchain_docs(
        docs,
        testset_size=count,
        run_config=RunConfig(
            timeout=int(call_timeout_s), max_retries=1, max_workers=max_workers, seed=seed
        ),
        raise_exceptions=True,
    )
    records = []
    for sample in testset.samples:
        item = sample.eval_sample
        question = (getattr(item, "user_input", None) or "").strip()
        reference = (getattr(item, "reference", None) or "").strip()
        contexts = [c for c in (getattr(item, "reference_contexts", None) or []) if c.strip()]
        if not (question and reference and contexts):
            continue
        sources = [source_document(c, documents) for c in contexts]
        records.append(
            {
                "domain": domain,
                "doc_id": sources[0],
                "question": question,
                "reference": reference,
                "reference_contexts": contexts,
                "source_doc_ids": list(dict.fromkeys(sources)),
                "generator": "ragas",
                "generator_detail": sample.synthesizer_name,
            }
        )
    return records[:count]


def group_by_domain(
    documents: Sequence[Mapping[str, Any]],
) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for doc in documents:
        grouped.setdefault(doc["domain"], []).append(doc)
    return grouped


def generate_questions(
    documents: Sequence[Mapping[str, Any]],
    *,
    per_domain: int,
    mode: Literal["auto", "ragas", "fallback"],
    seed: int,
    fallback_llm: ChatLLM | None,
    ragas_generate: RagasGenerate | None = None,
    context_chars: int = 1200,
    max_attempts: int = 3,
    progress: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(questions, report)``: ``per_domain`` questions for each domain, in first-seen order.

    ``mode='auto'`` asks ``ragas_generate`` first and writes the questions it could not deliver
    (it raised, or returned fewer) with the fallback generator; the reason is kept on each
    fallback question. ``report`` counts per domain what each generator produced and what failed.
    """
    if mode not in ("auto", "ragas", "fallback"):
        raise ValueError(f"unknown question generator {mode!r}")
    if mode != "fallback" and ragas_generate is None:
        raise ValueError(f"question generator {mode!r} needs a ragas generator")
    report: dict[str, Any] = {}
    questions: list[dict[str, Any]] = []
    for domain, docs in group_by_domain(documents).items():
        entry: dict[str, Any] = {
            "requested": per_domain,
            "ragas": 0,
            "fallback": 0,
            "failed": 0,
            "ragas_error": None,
            "fallback_errors": [],
        }
        produced: list[dict[str, Any]] = []
        fallback_reason = "configured (questions.generator: fallback)"
        if mode != "fallback":
            assert ragas_generate is not None
            try:
                produced = list(ragas_generate(domain, docs, per_domain))[:per_domain]
            except Exception as exc:
                if (fatal := backend_error_in(exc)) is not None:
                    raise fatal from exc  # no fallback: the run stops
                if mode == "ragas":
                    raise RuntimeError(
                        f"ragas test-set generation failed for domain {domain!r}: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                entry["ragas_error"] = f"{type(exc).__name__}: {_short(str(exc))}"
                fallback_reason = f"ragas failed: {entry['ragas_error']}"
            else:
                fallback_reason = f"ragas produced {len(produced)} of {per_domain}"
            entry["ragas"] = len(produced)
        missing = per_domain - len(produced)
        if missing > 0 and mode != "ragas":
            if fallback_llm is None:
                raise ValueError("the fallback question generator needs an LLM")
            slots = plan_slots(
                domain,
                docs,
                missing,
                seed=seed,
                context_chars=context_chars,
                first_ordinal=len(produced),
            )
            outcomes = asyncio.run(
                fallback_questions(
                    slots,
                    fallback_llm,
                    seed=seed,
                    max_attempts=max_attempts,
                    progress=f"questions {domain}" if progress else None,
                )
            )
            for outcome in outcomes:
                if outcome.record is None:
                    entry["failed"] += 1
                    entry["fallback_errors"].append(
                        {"doc_id": outcome.slot.doc_id, "errors": outcome.errors}
                    )
                else:
                    produced.append({**outcome.record, "fallback_reason": fallback_reason})
                    entry["fallback"] += 1
        elif mode == "ragas":
            entry["failed"] = max(0, missing)
        for number, record in enumerate(produced):
            record.setdefault("fallback_reason", None)
            questions.append({"question_id": f"{domain}-q{number:03d}", **record})
        report[domain] = entry
    return questions, report


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
