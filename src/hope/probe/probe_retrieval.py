"""Which chunking retrieves best at the user's retrieval setting, measured on probe questions.

For every chunking, the labelled measures of ``hope.labelled`` (``evaluate_chunking``: recall,
precision and IoU of the top k passages, recall within a character budget) on questions with
known gold spans, at one k and any number of budgets, with bootstrap intervals over questions;
then a ranking per measure and the pairwise decisions (paired bootstrap over questions,
``hope.labelled.bootstrap.paired_difference``: which chunking beats which, where the interval
excludes 0). :func:`measure_chunkings` takes any questions (the bench passes the real ones
through it too, so probe and real are measured alike); :func:`probe_ranking` writes the probe
questions first and never needs real labels.

What it can tell: how chunkings *rank* for retrieval of written questions at this setting. Not
absolute recall (code-written queries share more words with their gold than users' questions),
and not users' questions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from hope.labelled.bootstrap import DEFAULT_RESAMPLES, paired_difference
from hope.labelled.chunking_evaluation import LabelledSettings, evaluate_chunking
from hope.labelled.labelled_inputs import ChunkPassage, LabelledQuestion
from hope.models.embeddings import CachingEmbedder, Embedder
from hope.probe.code_writers import ClozeWriter, KeywordWriter, MixedWriter, TopicWriter
from hope.probe.llm_writer import LLMWriter
from hope.probe.probe_questions import DEFAULT_ATTEMPTS, ProbeSet, write_probe_questions
from hope.probe.question_shape import CHROMA_SHAPE, QuestionShape
from hope.probe.sentence_writer import SentenceWriter
from hope.probe.writing import ProbeWriter

DEFAULT_BUDGETS = (1000, 2500, 5000)
CODE_WRITERS = {
    "cloze": ClozeWriter,
    "keyword": KeywordWriter,
    "mixed": MixedWriter,
    "topic": TopicWriter,
}
# Writers that ask a ChatModel: excerpts copied verbatim (llm) or sentences chosen by number.
LLM_WRITERS = {"llm": LLMWriter, "llm_sentences": SentenceWriter}
# The default writer: the one bench/results/probe.json chooses (section question_seeds,
# default_choice: agreement with Chroma's real questions over question draws, per minute). topic is
# the only code writer whose median pair agreement meets the target on every measure, and its mean
# tau is the highest; cloze follows the real ranking more closely at the largest budget.
DEFAULT_WRITER = "topic"


@dataclass(frozen=True)
class ProbeSettings:
    """The retrieval setting (k, budgets; the embedder is passed beside it) and the probe's size."""

    k: int = 5
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    n_questions: int = 200
    seed: int = 0
    attempts: int = DEFAULT_ATTEMPTS
    shape: QuestionShape = CHROMA_SHAPE
    n_resamples: int = DEFAULT_RESAMPLES
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.k < 1 or not self.budgets or min(self.budgets) < 1:
            raise ValueError("k and every budget must be at least 1, with at least one budget")

    def measure_names(self) -> list[str]:
        k = self.k
        return [f"recall@{k}", f"precision@{k}", f"iou@{k}"] + [
            f"budget_recall@{b}" for b in self.budgets
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "budgets": list(self.budgets),
            "n_questions": self.n_questions,
            "seed": self.seed,
            "attempts": self.attempts,
            "n_resamples": self.n_resamples,
            "confidence": self.confidence,
        }


def code_writer(name: str) -> ProbeWriter:
    try:
        return CODE_WRITERS[name]()
    except KeyError:
        raise ValueError(f"unknown writer {name!r}; code writers: {sorted(CODE_WRITERS)}") from None


def _passages(chunking: Sequence[ChunkPassage | str]) -> list[ChunkPassage]:
    return [p if isinstance(p, ChunkPassage) else ChunkPassage(p) for p in chunking]


def measure_chunkings(
    corpus: str,
    questions: Sequence[LabelledQuestion],
    chunkings: Mapping[str, Sequence[ChunkPassage | str]],
    embedder: Embedder,
    settings: ProbeSettings = ProbeSettings(),
) -> dict[str, Any]:
    """Per chunking the measures (mean, interval, per question), per measure the ranking and the
    significant pairwise decisions. A chunking whose passages cannot be placed in the corpus is
    reported ``not_evaluable`` and left out of rankings and pairs."""
    # evaluate_chunking embeds once per budget; remember vectors for this call at least.
    memo = embedder if isinstance(embedder, CachingEmbedder) else CachingEmbedder(embedder)
    names = settings.measure_names()
    rows: dict[str, dict[str, Any]] = {}
    for name, chunking in chunkings.items():
        passages = _passages(chunking)
        row: dict[str, Any] = {"n_passages": len(passages), "measures": {}, "per_question": {}}
        for number, budget in enumerate(settings.budgets):
            labelled = evaluate_chunking(
                corpus,
                questions,
                passages,
                memo,
                LabelledSettings(
                    k=settings.k,
                    budget=budget,
                    n_resamples=settings.n_resamples,
                    seed=settings.seed,
                    confidence=settings.confidence,
                ),
            )
            if labelled["status"] != "ok":
                row = {"status": "not_evaluable", "reason": labelled["reason"]}
                break
            per_question = labelled["per_question"]
            picks = {f"budget_recall@{budget}": "budget_recall"}
            if number == 0:
                k = settings.k
                picks |= {f"recall@{k}": "recall", f"precision@{k}": "precision", f"iou@{k}": "iou"}
            for measure, key in picks.items():
                row["measures"][measure] = labelled["summary"][key]
                row["per_question"][measure] = [r[key] for r in per_question]
        row.setdefault("status", "ok")
        rows[name] = row
    scored = [n for n, r in rows.items() if r["status"] == "ok"]
    return {
        "settings": settings.to_dict() | {"embedder": embedder.identity},
        "n_questions": len(questions),
        "chunkings": rows,
        "rankings": {m: ranking(rows, scored, m) for m in names},
        "pairs": {m: pairwise_decisions(rows, scored, m, settings) for m in names},
    }


def ranking(rows: Mapping[str, Mapping[str, Any]], names: Sequence[str], measure: str) -> list[str]:
    """Chunking names, best mean first (NaN last; ties keep the given order)."""

    def key(name: str) -> float:
        mean = rows[name]["measures"][measure]["mean"]
        return -mean if math.isfinite(mean) else math.inf

    return sorted(names, key=key)


def pairwise_decisions(
    rows: Mapping[str, Mapping[str, Any]],
    names: Sequence[str],
    measure: str,
    settings: ProbeSettings,
) -> list[dict[str, Any]]:
    """Every pair with its paired difference (first minus second) and, where significant, the
    better chunking."""
    decisions = []
    for a, b in combinations(names, 2):
        diff = paired_difference(
            rows[a]["per_question"][measure],
            rows[b]["per_question"][measure],
            n_resamples=settings.n_resamples,
            seed=settings.seed,
            confidence=settings.confidence,
        )
        better = (a if diff["mean"] > 0 else b) if diff["significant"] else None
        decisions.append(
            {
                "pair": [a, b],
                "difference": diff["mean"],
                "low": diff["low"],
                "high": diff["high"],
                "significant": diff["significant"],
                "better": better,
            }
        )
    return decisions


def probe_ranking(
    corpus_text: str,
    chunkings: Mapping[str, Sequence[ChunkPassage | str]],
    embedder: Embedder,
    settings: ProbeSettings = ProbeSettings(),
    writer: ProbeWriter | str = DEFAULT_WRITER,
) -> dict[str, Any]:
    """Write probe questions from ``corpus_text`` and rank ``chunkings`` by retrieving them.

    ``chunkings`` maps a name to its passages (``ChunkPassage`` with spans, or plain strings that
    are located in the corpus). Returns :func:`measure_chunkings`' result with the probe's
    questions (``probe``: writer, counts, rejections, the questions with their filter outcomes)
    and wall times (``timings_s``: writing, measuring).
    """
    chosen = code_writer(writer) if isinstance(writer, str) else writer
    started = time.perf_counter()
    probe: ProbeSet = write_probe_questions(
        corpus_text,
        chosen,
        settings.n_questions,
        seed=settings.seed,
        shape=settings.shape,
        attempts=settings.attempts,
    )
    written = time.perf_counter()
    if not probe.questions:
        raise ValueError("no probe question passed the filters; is the corpus prose?")
    result = measure_chunkings(corpus_text, probe.labelled(), chunkings, embedder, settings)
    result["probe"] = {
        "writer": chosen.name,
        **probe.summary(),
        "questions": [q.to_dict() for q in probe.questions],
    }
    result["timings_s"] = {
        "writing_and_filtering": round(written - started, 3),
        "retrieval_and_measures": round(time.perf_counter() - written, 3),
    }
    return result
