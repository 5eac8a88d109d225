"""The seeded, stratified draw of gold spans and the writing rounds, on hand-made corpora."""

from __future__ import annotations

import random

from hope.core.text import Sentence
from hope.labelled.spans import covered, overlap
from hope.probe import ClozeWriter, KeywordWriter, write_probe_questions
from hope.probe.gold_draw import anchors_in, build_gold, excerpt_from, strata
from hope.probe.question_shape import QuestionShape

# Eligible sentences of 20 characters each, one space apart: sentence i spans [21 i, 21 i + 20).
SENTENCES = [Sentence("Cats eat red ham now", 21 * i, 21 * i + 20) for i in range(10)]


def shape(count: int, length: int, adjacent: float, gap: int = 0) -> QuestionShape:
    return QuestionShape(((count, 1.0),), (length,) * 11, adjacent, (gap,) * 11)


def test_strata_cover_the_corpus():
    assert strata(100, 3) == [(0, 33), (33, 67), (67, 100)]


def test_anchors_are_eligible_sentences_starting_in_the_stratum():
    sentences = [
        Sentence("Tiny one.", 0, 9),  # too few words
        Sentence("Rivers carry heavy loads of silt downstream.", 10, 54),
        Sentence("Deltas form where rivers meet the sea slowly.", 55, 100),
    ]
    assert anchors_in(sentences, (0, 55)) == [1]
    assert anchors_in(sentences, (0, 101)) == [1, 2]


def test_an_excerpt_takes_the_sentences_closest_to_its_length():
    # From sentence 2 (42..62): one sentence is 20 characters, two are 41, three 62.
    assert excerpt_from(SENTENCES, 2, 20) == ((42, 62), 3)
    assert excerpt_from(SENTENCES, 2, 45) == ((42, 83), 4)
    assert excerpt_from(SENTENCES, 2, 70) == ((42, 104), 5)
    assert excerpt_from(SENTENCES, 9, 500) == ((189, 209), 10)  # the corpus ends


def test_gold_in_the_drawn_shape():
    rng = random.Random(0)
    # Two excerpts of one sentence each, the second the next sentence.
    spans, wanted = build_gold(SENTENCES, 3, shape(2, 20, 1.0), rng)
    assert (spans, wanted) == (((63, 83), (84, 104)), 2)
    # A gap of 30 characters: the next sentence starting at or after 83 + 30 = 113 is number 6.
    spans, _ = build_gold(SENTENCES, 3, shape(2, 20, 0.0, gap=30), rng)
    assert spans == ((63, 83), (126, 146))
    # Three wanted from the last sentence: the corpus ends after one.
    spans, wanted = build_gold(SENTENCES, 9, shape(3, 20, 1.0), rng)
    assert (spans, wanted) == (((189, 209),), 3)


CORPUS = " ".join(
    f"Report {i}: the {animal} of {place} travelled {i * 3} miles to find {food} near the {thing}."
    for i, (animal, place, food, thing) in enumerate(
        zip(
            ["otter", "heron", "badger", "falcon", "beaver", "weasel", "marten", "osprey"] * 3,
            ["Dover", "Leeds", "Bath", "York", "Ely", "Wells", "Derby", "Truro"] * 3,
            ["trout", "frogs", "worms", "mice", "bark", "eggs", "berries", "perch"] * 3,
            ["weir", "marsh", "copse", "cliff", "dam", "barn", "hedge", "estuary"] * 3,
            strict=True,
        )
    )
)


def test_probe_questions_are_exact_spread_and_recorded():
    shape_two = shape(2, 80, 1.0)
    for writer in (ClozeWriter(), KeywordWriter()):
        probe = write_probe_questions(CORPUS, writer, 4, seed=3, shape=shape_two)
        assert 1 <= len(probe.questions) <= 4
        assert len(probe.questions) + probe.strata_without_question == 4
        strata_seen = [q.stratum for q in probe.questions]
        assert strata_seen == sorted(set(strata_seen))
        taken: list[tuple[int, int]] = []
        for question in probe.questions:
            assert question.writer == writer.name
            assert question.filters == dict.fromkeys(
                ("located", "relevant", "not_verbatim", "distinct_gold", "distinct_query"), True
            )
            for ref in question.references:
                assert CORPUS[ref.start : ref.end] == ref.text
            spans = [(r.start, r.end) for r in question.references]
            assert overlap(spans, taken) <= 0.5 * covered(spans)
            taken.extend((r.start, r.end) for r in question.references)
        again = write_probe_questions(CORPUS, writer, 4, seed=3, shape=shape_two)
        assert [q.to_dict() for q in again.questions] == [q.to_dict() for q in probe.questions]
