"""Writing a corpus' probe questions: draw gold, let a writer word it, keep what passes the filters.

One question per stratum of the corpus (``hope.probe.gold_draw``). Writing goes in rounds: each
round asks the writer for the next candidate of every stratum still without a question (all at
once, so a model-backed writer can batch), then filters the drafts in corpus order; a stratum
whose candidates all fail stays without a question and is counted. Every kept question records
its writer, seed, stratum, attempt and filter outcomes; the counts of rejections per filter are
returned beside them, so a reader sees what the filters removed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hope.labelled.labelled_inputs import GoldReference, LabelledQuestion
from hope.probe.gold_draw import GoldDraw, corpus_sentences, draw_candidates
from hope.probe.probe_filters import (
    FILTERS,
    locate,
    near_duplicate,
    not_verbatim,
    overlaps,
    relevant,
)
from hope.probe.question_shape import CHROMA_SHAPE, QuestionShape
from hope.probe.salience import Salience, content_words
from hope.probe.writing import ProbeWriter, Span, WritingTask, region_of

DEFAULT_ATTEMPTS = 6


@dataclass(frozen=True)
class ProbeQuestion:
    question: str
    references: tuple[GoldReference, ...]
    writer: str
    seed: int
    stratum: int
    attempt: int
    wanted_excerpts: int
    filters: dict[str, bool] = field(default_factory=dict)

    def labelled(self) -> LabelledQuestion:
        return LabelledQuestion(self.question, self.references)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "references": [
                {"start": r.start, "end": r.end, "text": r.text} for r in self.references
            ],
            "writer": self.writer,
            "seed": self.seed,
            "stratum": self.stratum,
            "attempt": self.attempt,
            "wanted_excerpts": self.wanted_excerpts,
            "filters": dict(self.filters),
        }


@dataclass
class ProbeSet:
    questions: list[ProbeQuestion]
    requested: int
    rejected: dict[str, int]
    strata_without_question: int

    def labelled(self) -> list[LabelledQuestion]:
        return [q.labelled() for q in self.questions]

    def summary(self) -> dict[str, Any]:
        n = len(self.questions)
        return {
            "requested": self.requested,
            "written": n,
            "strata_without_question": self.strata_without_question,
            "rejected": dict(self.rejected),
            "mean_excerpts": sum(len(q.references) for q in self.questions) / n if n else None,
        }


def write_probe_questions(
    corpus: str,
    writer: ProbeWriter,
    n_questions: int = 100,
    *,
    seed: int = 0,
    shape: QuestionShape = CHROMA_SHAPE,
    attempts: int = DEFAULT_ATTEMPTS,
) -> ProbeSet:
    """Up to ``n_questions`` probe questions of ``corpus``, one per character stratum."""
    if n_questions < 1:
        raise ValueError(f"n_questions must be at least 1, got {n_questions}")
    sentences = corpus_sentences(corpus)
    salience = Salience(s.text for s in sentences)
    candidates = draw_candidates(corpus, sentences, n_questions, shape, seed, attempts)
    kept: dict[int, ProbeQuestion] = {}
    taken: list[Span] = []
    accepted_words: list[set[str]] = []
    rejected: Counter[str] = Counter()
    for attempt in range(attempts):
        round_ = [
            (stratum, draws[attempt])
            for stratum, draws in enumerate(candidates)
            if stratum not in kept and attempt < len(draws) and draws[attempt].spans
        ]
        if not round_:
            continue
        tasks = [
            WritingTask(gold=d.spans, region=region_of(d.spans), seed=_seed(seed, s, attempt))
            for s, d in round_
        ]
        drafts = writer.write(corpus, salience, tasks)
        for (stratum, draw), task, draft in zip(round_, tasks, drafts, strict=True):
            question = _judge(corpus, writer, draw, task, draft, taken, accepted_words, attempt)
            if isinstance(question, str):
                rejected[question] += 1
                continue
            kept[stratum] = question
            taken.extend((r.start, r.end) for r in question.references)
            accepted_words.append(set(content_words(question.question)))
    return ProbeSet(
        questions=[kept[s] for s in sorted(kept)],
        requested=n_questions,
        rejected={name: rejected[name] for name in ("written", *FILTERS) if rejected[name]},
        strata_without_question=n_questions - len(kept),
    )


def _seed(seed: int, stratum: int, attempt: int) -> int:
    return seed * 1_000_003 + stratum * 101 + attempt


def _judge(
    corpus: str,
    writer: ProbeWriter,
    draw: GoldDraw,
    task: WritingTask,
    draft: Any,
    taken: Sequence[Span],
    accepted_words: Sequence[set[str]],
    attempt: int,
) -> ProbeQuestion | str:
    """The kept question, or the name of the first filter it failed."""
    if draft is None or not draft.question.strip():
        return "written"
    spans = locate(corpus, draft, task.region)
    if spans is None:
        return "located"
    excerpts = [corpus[s:e] for s, e in spans]
    checks = (
        ("relevant", lambda: relevant(draft.question, excerpts, writer.kind)),
        ("not_verbatim", lambda: not_verbatim(draft.question, excerpts)),
        ("distinct_gold", lambda: not overlaps(spans, taken)),
        ("distinct_query", lambda: not near_duplicate(draft.question, accepted_words)),
    )
    outcomes = {"located": True}
    for name, check in checks:
        outcomes[name] = check()
        if not outcomes[name]:
            return name
    references = tuple(
        GoldReference(s, e, text) for (s, e), text in sorted(zip(spans, excerpts, strict=True))
    )
    return ProbeQuestion(
        question=draft.question,
        references=references,
        writer=writer.name,
        seed=task.seed,
        stratum=draw.stratum,
        attempt=attempt,
        wanted_excerpts=draw.wanted_excerpts,
        filters=outcomes,
    )
