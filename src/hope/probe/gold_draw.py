"""Where probe questions come from: a seeded, stratified draw of gold spans over the whole corpus.

The corpus is cut into as many equal character strata as questions are wanted, and each question
is anchored at a random sentence of its stratum, so the probe covers the beginning, middle and end
of a corpus alike (a uniform draw can leave long stretches unasked). From the anchor the gold is
built in the shape of real questions (``hope.probe.question_shape``): a drawn number of excerpts,
each a run of whole sentences close to a drawn length, the next excerpt either the following
sentence or a drawn gap further on. Every excerpt is a span of the corpus, so its text is
``corpus[start:end]`` by construction.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from dataclasses import dataclass

from hope.core.text import Sentence, split_sentences
from hope.probe.question_shape import QuestionShape
from hope.probe.salience import content_words

Span = tuple[int, int]

# An anchor sentence must look like prose: enough words to ask about, not a whole unpunctuated page.
MIN_ANCHOR_WORDS = 5
MIN_ANCHOR_CONTENT_WORDS = 3
MAX_SENTENCE_CHARS = 600


@dataclass(frozen=True)
class GoldDraw:
    """The gold of one probe question before a writer words it: spans in reading order."""

    spans: tuple[Span, ...]
    stratum: int
    wanted_excerpts: int


def corpus_sentences(corpus: str) -> list[Sentence]:
    return split_sentences(corpus)


def eligible(sentence: Sentence) -> bool:
    return (
        len(sentence.text) <= MAX_SENTENCE_CHARS
        and len(sentence.text.split()) >= MIN_ANCHOR_WORDS
        and len(content_words(sentence.text)) >= MIN_ANCHOR_CONTENT_WORDS
    )


def strata(corpus_length: int, n: int) -> list[Span]:
    """``n`` equal character ranges covering ``[0, corpus_length)`` (the last takes the rest)."""
    if n < 1:
        raise ValueError(f"need at least one stratum, got {n}")
    size = corpus_length / n
    return [(round(i * size), round((i + 1) * size)) for i in range(n)]


def anchors_in(sentences: list[Sentence], stratum: Span) -> list[int]:
    """Indices of the eligible sentences starting inside ``stratum``."""
    starts = [s.start for s in sentences]
    first, last = bisect_left(starts, stratum[0]), bisect_left(starts, stratum[1])
    return [i for i in range(first, last) if eligible(sentences[i])]


def excerpt_from(sentences: list[Sentence], first: int, length: int) -> tuple[Span, int]:
    """Whole sentences from ``first`` whose span is closest to ``length`` characters (at least one
    sentence, never past an ineligible, page-long one), and the index after the last taken."""
    start = sentences[first].start
    end = sentences[first].end
    last = first
    while last + 1 < len(sentences):
        nxt = sentences[last + 1]
        if len(nxt.text) > MAX_SENTENCE_CHARS:
            break
        if abs(nxt.end - start - length) >= abs(end - start - length):
            break
        last += 1
        end = nxt.end
    return (start, end), last + 1


def build_gold(
    sentences: list[Sentence], anchor: int, shape: QuestionShape, rng: random.Random
) -> tuple[tuple[Span, ...], int]:
    """Excerpt spans from ``anchor`` in the shape drawn from ``shape``, and how many were wanted
    (fewer are built where the corpus ends first)."""
    wanted = shape.draw_count(rng)
    spans: list[Span] = []
    index = anchor
    while len(spans) < wanted and index < len(sentences):
        span, index = excerpt_from(sentences, index, shape.draw_length(rng))
        spans.append(span)
        if len(spans) == wanted:
            break
        gap = shape.draw_gap(rng)
        floor = span[1] + gap
        while index < len(sentences) and (
            sentences[index].start < floor or not eligible(sentences[index])
        ):
            index += 1
    return tuple(spans), wanted


def draw_candidates(
    corpus: str,
    sentences: list[Sentence],
    n_questions: int,
    shape: QuestionShape,
    seed: int,
    attempts: int,
) -> list[list[GoldDraw]]:
    """Per stratum, up to ``attempts`` gold candidates in a seeded random order (the writer takes
    the first that passes the filters)."""
    rng = random.Random(seed)
    per_stratum: list[list[GoldDraw]] = []
    for number, stratum in enumerate(strata(len(corpus), n_questions)):
        anchors = anchors_in(sentences, stratum)
        rng.shuffle(anchors)
        per_stratum.append([_draw(sentences, a, shape, rng, number) for a in anchors[:attempts]])
    return per_stratum


def _draw(
    sentences: list[Sentence], anchor: int, shape: QuestionShape, rng: random.Random, stratum: int
) -> GoldDraw:
    spans, wanted = build_gold(sentences, anchor, shape, rng)
    return GoldDraw(spans=spans, stratum=stratum, wanted_excerpts=wanted)
