"""BLEU baseline on cases whose scores are worked out by hand in the comments."""

from __future__ import annotations

import math

import pytest

from hope.chunking import document_bleu


def test_passages_that_rebuild_the_document_score_100():
    document = "The Amazon rainforest covers much of the Amazon basin. It spans nine nations."
    passages = ["The Amazon rainforest covers much of the Amazon basin.", "It spans nine nations."]
    result = document_bleu(document, passages)
    assert result.score == pytest.approx(100.0)
    assert "tok:13a" in result.signature and "nrefs:1" in result.signature


def test_dropped_text_costs_the_brevity_penalty():
    # Hypothesis "a b c d" against reference "a b c d e": every n-gram precision is 1 (4/4, 3/3,
    # 2/2, 1/1); the hypothesis has 4 of 5 tokens, so BLEU = exp(1 - 5/4) = 0.7788.
    result = document_bleu("a b c d e", ["a b", "c d"])
    assert result.score == pytest.approx(100 * math.exp(-0.25), abs=1e-6)


def test_overlap_lowers_precision():
    # Passages "a b c" and "b c d" joined: "a b c b c d" against "a b c d".
    # Clipped matches / totals: unigrams 4/6, bigrams (ab, bc, cd) 3/5, trigrams (abc, bcd) 2/4,
    # 4-grams 0/3 -> exp smoothing takes 1/(2*3). No brevity penalty (6 >= 4 tokens).
    # BLEU = (4/6 * 3/5 * 2/4 * 1/6) ** (1/4) = 0.4273.
    result = document_bleu("a b c d", ["a b c", "b c d"])
    expected = 100 * (4 / 6 * 3 / 5 * 2 / 4 * 1 / 6) ** 0.25
    assert result.score == pytest.approx(expected, abs=1e-6)
    assert result.score == pytest.approx(42.7287, abs=1e-4)


def test_joiner_and_tokenisation_are_parameters():
    # A word cut in two by a fixed-size boundary becomes two tokens with the default joiner.
    cut = document_bleu("alpha beta gamma delta", ["alpha be", "ta gamma delta"])
    assert cut.score < 100
    glued = document_bleu("alpha beta gamma delta", ["alpha be", "ta gamma delta"], joiner="")
    assert glued.score == pytest.approx(100.0)
    # Character tokenisation sees the same two texts as nearly identical.
    by_char = document_bleu(
        "alpha beta gamma delta", ["alpha be", "ta gamma delta"], tokenize="char"
    )
    assert by_char.score > cut.score and "tok:char" in by_char.signature


def test_case_is_kept_unless_lowercase_is_asked_for():
    assert document_bleu("Hello World again today", ["hello world again today"]).score < 100
    result = document_bleu("Hello World again today", ["hello world again today"], lowercase=True)
    assert result.score == pytest.approx(100.0) and "case:lc" in result.signature


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="unsupported BLEU tokenize 'spm'"):
        document_bleu("a b", ["a b"], tokenize="spm")
    with pytest.raises(ValueError, match="non-empty document"):
        document_bleu("  ", ["a"])
