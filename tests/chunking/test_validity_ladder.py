"""The validity ladder (hope.validity.ladder) on real documents from the shared corpora mirror."""

from collections import Counter

import pytest

from hope.chunking.registry import load_chunker
from hope.core.text import split_sentences
from hope.validity.ladder import RUNGS, build_ladder, paragraphs, truncate_to_paragraphs

PAIRS = [("news:short", "tos:Mozilla"), ("arxiv", "news:short"), ("tos:Mozilla", "cord19:0a3d78fb")]


def _doc(real_documents, key):
    if key == "arxiv":
        key = next(k for k in real_documents if k.startswith("arxiv:"))
    return truncate_to_paragraphs(real_documents[key], 2000)


@pytest.fixture(scope="module")
def recursive(conf_dir):
    chunker = load_chunker("recursive_500", conf_dir)
    return lambda text: [p.text for p in chunker.chunk(text, "doc")]


@pytest.mark.parametrize(("key", "foreign_key"), PAIRS)
def test_every_rung_is_built_from_the_document_as_it_claims(
    real_documents, recursive, key, foreign_key
):
    text, foreign = _doc(real_documents, key), _doc(real_documents, foreign_key)
    ladder = build_ladder(text, foreign, recursive=recursive, seed=3)
    assert tuple(ladder) == RUNGS
    assert all(ladder[r] and all(p.strip() for p in ladder[r]) for r in RUNGS)

    # aligned: the paragraphs, in order, nothing lost
    assert "\n\n".join(ladder["aligned"]) == "\n\n".join(paragraphs(text))
    # fixed_120: windows of at most 120 characters; at least one starts inside a word
    assert all(len(p) <= 120 for p in ladder["fixed_120"])
    fragments = ladder["fixed_120"][1:]
    assert any(p[0].isalnum() and text[text.index(p) - 1].isalnum() for p in fragments)
    # foreign_mixed: every passage is an aligned passage plus text from the other document
    for own, mixed in zip(ladder["aligned"], ladder["foreign_mixed"], strict=True):
        assert mixed.startswith(own) and mixed[len(own) :].strip() in foreign
    # sentence_shuffled: the same sentences, another order, as many passages as aligned
    sentences = Counter(s.text for s in split_sentences(text))
    shuffled_words = Counter(" ".join(ladder["sentence_shuffled"]).split())
    assert shuffled_words == Counter(" ".join(sentences.elements()).split())
    assert len(ladder["sentence_shuffled"]) == min(len(ladder["aligned"]), sum(sentences.values()))
    assert ladder["sentence_shuffled"] != ladder["aligned"]
