"""Code-written probe queries on hand-made text: salience, the cloze, the keywords."""

from __future__ import annotations

import math

from hope.probe.code_writers import ClozeWriter, KeywordWriter, cloze, keywords, salient_window
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
