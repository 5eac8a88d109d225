"""Chroma's filters on hand-made drafts: exact location, relevance, no copy, no duplicates."""

from __future__ import annotations

from hope.probe.probe_filters import (
    jaccard,
    locate,
    near_duplicate,
    not_verbatim,
    overlaps,
    relevant,
)
from hope.probe.writing import Draft

CORPUS = "Alpha beta gamma. Delta epsilon. Alpha beta gamma."


def test_given_spans_are_checked_against_the_corpus():
    assert locate(CORPUS, Draft("q", ("Delta epsilon.",), ((18, 32),)), (0, 50)) == ((18, 32),)
    assert locate(CORPUS, Draft("q", ("Delta epsilon.",), ((17, 31),)), (0, 50)) is None


def test_excerpts_are_searched_in_their_region_first():
    # "Alpha beta gamma." occurs at 0 and at 33; the region points at the second.
    draft = Draft("q", ("Alpha beta gamma.",))
    assert locate(CORPUS, draft, (33, 50)) == ((33, 50),)
    assert locate(CORPUS, draft, (18, 32)) == ((0, 17),)  # not in the region: whole corpus
    assert locate(CORPUS, Draft("q", ("Zeta.",)), (0, 50)) is None
    assert locate(CORPUS, Draft("q", ()), (0, 50)) is None


def test_relevance_for_code_and_llm_writers():
    excerpts = ["Alpha beta gamma.", "Delta epsilon."]
    assert relevant("gamma epsilon", excerpts, "code")
    assert not relevant("gamma epsilon zeta", excerpts, "code")  # zeta is in no excerpt
    assert relevant("gamma epsilon zeta", excerpts, "llm")
    assert not relevant("gamma zeta", excerpts, "llm")  # the second excerpt is not asked about


def test_a_copy_of_the_gold_is_refused():
    assert not not_verbatim("beta gamma", ["Alpha beta gamma."])
    assert not_verbatim("gamma beta", ["Alpha beta gamma."])


def test_overlap_and_near_duplicates():
    assert overlaps([(10, 20)], [(14, 30)])  # 6 of 10 characters taken
    assert not overlaps([(10, 20)], [(15, 30)])  # 5 of 10: at most half may be shared
    assert not overlaps([(10, 20)], [(20, 30)])
    assert jaccard({"a", "b"}, {"b", "c"}) == 1 / 3
    assert near_duplicate("gamma epsilon delta", [{"gamma", "epsilon"}])  # 2/3 >= 0.6
    assert not near_duplicate("gamma epsilon delta alpha", [{"gamma", "epsilon"}])  # 0.5
