"""Code-written probe queries on hand-made text: salience, the cloze, the keywords."""

from __future__ import annotations

import math

from hope.probe.code_writers import (
    ClozeWriter,
    KeywordWriter,
    TopicWriter,
    cloze,
    keywords,
    salient_window,
    topic_words,
)
from hope.probe.salience import Salience, content_words
from hope.probe.writing import WritingTask

SENTENCES = [
    "The river flows north.",
    "The river floods every spring.",
    "Farmers plant rice beside the river.",
    "Glaciers feed the river.",
]


def test_content_words_drop_stopwords_and_short_words():
    assert content_words("The river's banks are 3 km wide, and it is deep.") == [
        "river's",
        "banks",
        "wide",
        "deep",
    ]


def test_literal_escapes_are_not_words():
    # A chat log serialised as JSON: "\\n\\nIf" must not give the word "nif".
    words = content_words(r"the setting.\n\nIf trouble persists")
    assert words == ["setting", "trouble", "persists"]


def test_idf_over_sentences():
    salience = Salience(SENTENCES)
    # "river" is in all 4 sentences, "glaciers" in 1, "unseen" in none.
    assert salience.idf("river") == math.log(5 / 5) + 1.0
    assert salience.idf("Glaciers") == math.log(5 / 2) + 1.0
    assert salience.idf("unseen") == math.log(5 / 1) + 1.0
    assert salience.ranked("Glaciers feed the river.") == ["glaciers", "feed", "river"]


def test_cloze_removes_the_most_salient_phrase():
    salience = Salience(SENTENCES)
    # "Farmers plant rice" is a run of three rare content words: removed as one phrase.
    assert cloze("Farmers plant rice beside the river.", salience) == ["beside", "the", "river."]
    # "Glaciers" is rare, "feed" too; the phrase stops at "the" (not a content word).
    assert cloze("Glaciers feed the river.", salience) == ["the", "river."]


def test_salient_window_keeps_the_rarest_stretch():
    salience = Salience(SENTENCES)
    tokens = ["the", "river", "the", "river", "Glaciers", "feed", "the"]
    assert salient_window(tokens, 2, salience) == ["Glaciers", "feed"]
    assert salient_window(tokens, 10, salience) == tokens


def test_keywords_take_every_excerpt_in_turn_rarest_first():
    salience = Salience(SENTENCES)
    words = keywords(["Glaciers feed the river.", "Farmers plant rice."], salience)
    # 6 distinct content words, at least MIN_KEYWORDS (6): all of them, rarest first.
    assert sorted(words) == sorted(["glaciers", "feed", "river", "farmers", "plant", "rice"])
    assert words[-1] == "river"


def test_code_writers_keep_the_drawn_spans():
    corpus = " ".join(SENTENCES)
    gold = ((0, 22), (23, 53))
    task = WritingTask(gold=gold, region=(0, 53), seed=0)
    salience = Salience(SENTENCES)
    for writer in (ClozeWriter(), KeywordWriter()):
        (draft,) = writer.write(corpus, salience, [task])
        assert draft.spans == gold
        assert draft.excerpts == ("The river flows north.", "The river floods every spring.")
        assert draft.question
        assert set(content_words(draft.question)) <= set(content_words(" ".join(draft.excerpts)))


# "spacer" recurs around the gold (3 sentences of 4), so it is the topic although it is the
# commonest word; "sequence" is the rarest. Salience over the 4 sentences (n = 4):
#   idf = ln(5 / (df + 1)) + 1: spacer (df 3) 1.223, shapes and recombination (df 2) 1.511,
#   sequence, length, varies, needs (df 1) 1.916.
TOPIC_SENTENCES = [
    "Spacer length varies.",
    "The spacer sequence shapes recombination.",
    "Recombination needs a spacer.",
    "Rainfall shapes plants.",
]
TOPIC_CORPUS = " ".join(TOPIC_SENTENCES)


def _span(sentence: str) -> tuple[int, int]:
    start = TOPIC_CORPUS.index(sentence)
    return start, start + len(sentence)


def test_topic_words_rank_by_count_around_the_gold_times_idf():
    salience = Salience(TOPIC_SENTENCES)
    gold = (_span(TOPIC_SENTENCES[1]),)
    # The whole corpus around: counts spacer 3, shapes 2, recombination 2, sequence 1, so the
    # scores are 3.67, 3.02, 3.02, 1.92: spacer and shapes (first of the tie), in gold order.
    assert topic_words(TOPIC_CORPUS, gold, salience, context=200, wanted=2) == ["spacer", "shapes"]
    # Nothing around (the gold only): every count is 1 and IDF alone ranks, sequence first.
    assert topic_words(TOPIC_CORPUS, gold, salience, context=0, wanted=2) == ["sequence", "shapes"]


def test_topic_words_take_every_excerpt_in_turn_in_the_gold_order():
    salience = Salience(TOPIC_SENTENCES)
    gold = (_span(TOPIC_SENTENCES[0]), _span(TOPIC_SENTENCES[2]))
    # First excerpt: spacer 3.67, length 1.92, varies 1.92; second: spacer 3.67,
    # recombination 3.02, needs 1.92. In turn: spacer, (spacer taken), length, recombination.
    words = topic_words(TOPIC_CORPUS, gold, salience, context=200, wanted=3)
    assert words == ["spacer", "length", "recombination"]


def test_the_topic_writer_keeps_the_drawn_spans():
    salience = Salience(TOPIC_SENTENCES)
    gold = (_span(TOPIC_SENTENCES[1]),)
    task = WritingTask(gold=gold, region=gold[0], seed=0)
    [draft] = TopicWriter().write(TOPIC_CORPUS, salience, [task])
    assert draft.question == "spacer sequence shapes recombination"
    assert draft.spans == gold and draft.excerpts == (TOPIC_SENTENCES[1],)
