"""Sentence splitting finds each sentence's offsets in linear time and gives exactly the spans
pysbd's own search gives (issue #35: that search made splitting quadratic in the document).

The reference is the implementation before the change: pysbd's ``segment`` with ``char_span``,
then the same stripping."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

import hope
from hope.core import text as hope_text
from hope.core.text import Sentence

SAMPLES = sorted((Path(hope.__file__).parent / "corpora" / "sample").glob("*.txt"))
assert SAMPLES, "no sample corpus found: the test would check nothing"


def reference_split(text: str) -> tuple[Sentence, ...]:
    sentences = []
    for span in hope_text._segmenter("en").segment(text):
        stripped = span.sent.strip()
        if not stripped:
            continue
        leading = len(span.sent) - len(span.sent.lstrip())
        start = span.start + leading
        sentences.append(Sentence(stripped, start, start + len(stripped)))
    return tuple(sentences)


def split(text: str) -> tuple[Sentence, ...]:
    return hope_text._split_cached.__wrapped__(text, "en")


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_spans_equal_pysbd_on_the_sample_corpora(path):
    document = path.read_text(encoding="utf-8")
    got = split(document)
    assert got == reference_split(document)
    assert all(document[s.start : s.end] == s.text for s in got)


PIECES = [
    "Yes.",
    "Yes. ",
    "a.",
    "1.1.",
    "No. 5 is here.",
    "Dr. Smith went home.",
    "See Fig. 2 below.",
    "It rained",
    "1. first item",
    "2. second item",
    "(a) a clause",
    '"Stop." he said.',
    "e.g. this one",
    "The end!",
    "Why?",
]
GAPS = [" ", "  ", "\n", "\n\n", " \n \n ", "\t", "\u00a0", "", "\r\n"]


def test_spans_equal_pysbd_on_texts_that_repeat_sentences():
    # Repeated sentences and long whitespace runs are where an earlier occurrence can reach past
    # the point the search starts from: the cases the shortcut must hand back to pysbd's search.
    rng = random.Random(35)
    for _ in range(400):
        text = "".join(rng.choice(PIECES) + rng.choice(GAPS) for _ in range(rng.randint(1, 30)))
        assert split(text) == reference_split(text), repr(text)


def test_a_document_whose_paragraphs_repeat_gets_each_copy_its_own_offsets():
    paragraph = "The pump starts. It stops after 5 s. Check the valve.\n\n"
    document = paragraph * 200
    got = split(document)
    assert got == reference_split(document)
    assert len(got) == 600
    assert [s.start for s in got[3:6]] == [len(paragraph) + s.start for s in got[:3]]


def test_empty_and_blank_texts_have_no_sentences():
    assert split("") == () == reference_split("")
    assert split("   \n ") == reference_split("   \n ")


def pysbd_spans(sentences: list[str], text: str) -> list[tuple[str, int, int]]:
    segmenter = hope_text._segmenter("en")
    segmenter.original_text = text
    return [(s.sent, s.start, s.end) for s in segmenter.sentences_with_char_spans(sentences)]


def test_span_search_equals_pysbd_where_sentences_overlap_themselves(monkeypatch):
    # Over a two-letter alphabet sentences recur within their own length ("aba" in "ababa") and
    # before runs of whitespace, so an earlier occurrence often reaches past the point the
    # search starts from: each such sentence must get the span pysbd's search gives it.
    rng = random.Random(7)
    fallbacks = []
    search = hope_text._pysbd_search

    def counted(sent, text, prior):
        fallbacks.append(prior)
        return search(sent, text, prior)

    monkeypatch.setattr(hope_text, "_pysbd_search", counted)
    for _ in range(3000):
        text = "".join(rng.choice("ab  \n.") for _ in range(rng.randint(0, 40)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(1, 8))))
        sentences = [text[i:j] for i, j in itertools.pairwise(cuts) if text[i:j]]
        sentences += ["".join(rng.choice("ab.") for _ in range(rng.randint(1, 4)))]
        if rng.random() < 0.2:  # out of order, as pysbd's rewritten sentences can be
            rng.shuffle(sentences)
        expected = pysbd_spans(sentences, text)
        assert hope_text._char_spans(sentences, text) == expected, (text, sentences)
    # pysbd's own search ran for the straddled sentences (and the first of each text), and the
    # shortcut for the rest.
    assert sum(1 for prior in fallbacks if prior > 0) > 100
