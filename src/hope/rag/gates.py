"""Quality gates for generated test questions (issue 12), whatever generator wrote them.

A question is kept only if

1. ``about_context``: it is a question about its reference context, not about the prompt: it is
   phrased as a question, does not talk about "the question", "the answer", "the excerpt" and the
   like (unless its context does), shares content words with its reference context, and does
   not give its own answer away;
2. ``supported``: its reference answer is supported by the reference context: by code when the
   answer is extractive (it occurs in the context, up to case, whitespace and end punctuation),
   else by the judge, whose verdict is recorded and counts only with a supporting quote that does
   occur in the context;
3. ``not_duplicate``: it is not a near-duplicate of a question already kept (Jaccard similarity of
   their content words at least ``duplicate_jaccard``).

Each check returns a :class:`GateResult`; its reason is one of the stable reason codes below,
which the questions stage counts in ``data/questions/summary.json``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hope.core.prompting import Prompt, load_prompt
from hope.models.llm import ChatLLM, LLMCallError

PROMPT_DIR = str(Path(__file__).parent / "prompts")

# Reason codes (summary.json counts them).
NOT_A_QUESTION = "not_a_question"
ABOUT_PROMPT = "about_the_prompt"
NOT_GROUNDED = "not_about_context"
GIVES_ANSWER = "gives_answer_away"
EMPTY_REFERENCE = "empty_reference"
UNSUPPORTED = "reference_not_supported"
NO_VERDICT = "judge_failed"
NEAR_DUPLICATE = "near_duplicate"

_STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just me
    more most my no nor not of off on once only or other our out over own same she should so some
    such than that the their them then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    according many much one two use used using""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
# Questions about the prompt rather than the document: the 135M model's favourites.
_META = re.compile(
    r"\b(?:the|this|that|your|an?)\s+(?:question|answer|excerpt|prompt|passage|schema|json|"
    r"instruction|instructions|text\s+above|above\s+text)\b|\banswer\s+to\b|\bexcerpt\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|"
    r"should|would|will|has|have|had|in|on|at|by|for|from|according|to|under|after|before|"
    r"name|list|describe|explain)\b",
    re.IGNORECASE,
)


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` that carry content (no stop words, numbers kept)."""
    words = _WORD.findall(text.lower())
    return [w for w in words if w not in _STOP and (len(w) > 2 or w.isdigit())]


def normalise(text: str) -> str:
    """Lower case, single spaces, no surrounding quotes or end punctuation."""
    text = " ".join(text.lower().replace("’", "'").split())
    return text.strip(" \"'`.,;:!?")


@dataclass(frozen=True)
class GateResult:
    passed: bool
    reason: str | None = None
    detail: str = ""
    method: str = "code"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def about_context(question: str, contexts: Sequence[str], reference: str = "") -> GateResult:
    """Whether ``question`` is a question about ``contexts`` (see the module docstring)."""
    text = question.strip()
    if not text.endswith("?") and not _QUESTION_START.match(text):
        return GateResult(False, NOT_A_QUESTION, "neither ends with '?' nor starts like a question")
    # "the answer" is about the prompt unless the context itself talks about answers.
    context_text = normalise(" ".join(contexts))
    for meta in _META.finditer(text):
        if normalise(meta.group(0)) not in context_text:
            return GateResult(False, ABOUT_PROMPT, f"talks about the prompt: {meta.group(0)!r}")
    words = set(content_words(text))
    context_words = set(content_words(" ".join(contexts)))
    shared = words & context_words
    needed = min(2, len(words))
    if not words or len(shared) < needed:
        return GateResult(
            False,
            NOT_GROUNDED,
            f"shares {len(shared)} content word(s) with its context, needs {max(needed, 1)}",
        )
    answer_words = set(content_words(reference))
    if len(answer_words) >= 3 and answer_words <= words:
        return GateResult(False, GIVES_ANSWER, "every content word of the answer is in it")
    if reference and normalise(reference) and normalise(reference) in normalise(text):
        return GateResult(False, GIVES_ANSWER, "contains its reference answer")
    return GateResult(True, detail=f"shares {len(shared)} content words with its context")


def is_extractive(reference: str, contexts: Sequence[str]) -> bool:
    """Whether ``reference`` occurs in one of ``contexts`` (case, whitespace, end punctuation)."""
    needle = normalise(reference)
    return bool(needle) and any(needle in normalise(c) for c in contexts)


class SupportVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    supported: bool
    quote: str = Field(default="", max_length=400)


async def supported(
    question: str,
    reference: str,
    contexts: Sequence[str],
    judge: ChatLLM | None,
    *,
    seed: int | None = None,
    prompt: Prompt | None = None,
) -> tuple[GateResult, dict[str, Any] | None]:
    """``(result, verdict)``: code decides an extractive reference; otherwise the judge answers
    whether the context supports it and quotes the sentence that does. The verdict (or the
    judge's failure) is returned for the record; a 'supported' verdict whose quote is not in the
    context, or shares no content word with the answer, does not count."""
    if not reference.strip():
        return GateResult(False, EMPTY_REFERENCE, "empty reference answer"), None
    if is_extractive(reference, contexts):
        return GateResult(True, detail="reference occurs in its context"), None
    if judge is None:
        no_judge = GateResult(False, UNSUPPORTED, "not extractive and no judge to check it", "none")
        return no_judge, None
    prompt = prompt or load_prompt("rag_support", PROMPT_DIR)
    try:
        response = await judge.structured(
            messages=prompt.render(
                context="\n\n".join(contexts), question=question, answer=reference
            ),
            response_model=SupportVerdict,
            schema_name="support_verdict",
            prompt_id=prompt.id,
            temperature=0.0,
            seed=seed,
        )
    except LLMCallError as exc:
        verdict = {"supported": None, "quote": "", "error": exc.reason}
        return GateResult(False, NO_VERDICT, exc.reason, "judge"), verdict
    value = response.value
    verdict = {"supported": value.supported, "quote": value.quote}
    if not value.supported:
        failure = "judge: not supported"
    elif not (is_extractive(value.quote, contexts) and len(normalise(value.quote)) >= 10):
        failure = "judge said supported but its quote is not in the context"
    elif not set(content_words(value.quote)) & set(content_words(reference)):
        failure = "judge's quote shares no content word with the answer"
    else:
        passed = GateResult(True, detail="judge: supported, quote found in context", method="judge")
        return passed, verdict
    return GateResult(False, UNSUPPORTED, failure, "judge"), verdict


def jaccard(a: str, b: str) -> float:
    wa, wb = set(content_words(a)), set(content_words(b))
    if not wa and not wb:
        return 1.0 if normalise(a) == normalise(b) else 0.0
    return len(wa & wb) / len(wa | wb)


def not_duplicate(question: str, kept: Sequence[str], threshold: float) -> GateResult:
    """Whether ``question`` is no near-duplicate of any question in ``kept``."""
    for other in kept:
        score = jaccard(question, other)
        if normalise(question) == normalise(other) or score >= threshold:
            return GateResult(False, NEAR_DUPLICATE, f"Jaccard {score:.2f} with {other!r}")
    return GateResult(True)
