from __future__ import annotations

import numpy as np
import pytest

from hope.rag.rag_retrieval import PassageIndex, build_indexes, retrieve

from .helpers import FixedEmbedder


def passage(pid, text, chunker="c1", domain="news", doc="d1"):
    return {"passage_id": pid, "doc_id": doc, "chunker": chunker, "text": text, "domain": domain}


EMBEDDER = FixedEmbedder(
    {
        "alpha": [1.0, 0.0, 0.0],
        "beta": [0.8, 0.6, 0.0],
        "gamma": [0.0, 1.0, 0.0],
        "delta": [0.0, 0.0, 1.0],
    },
    default=[0.0, 0.0, 1.0],
)


def test_top_k_by_cosine_in_descending_order():
    passages = [
        passage("p-gamma", "gamma text"),
        passage("p-alpha", "alpha text"),
        passage("p-delta", "delta text"),
        passage("p-beta", "beta text"),
    ]
    indexes = build_indexes(passages, EMBEDDER)
    question = {"question_id": "q1", "domain": "news", "question": "about alpha?"}
    hits = retrieve([question], indexes, EMBEDDER, chunkers=["c1"], top_k=3)[("q1", "c1")]
    # gamma and delta are both orthogonal to the question: the tie goes to the smaller id.
    assert [h.passage_id for h in hits] == ["p-alpha", "p-beta", "p-delta"]
    assert [round(h.score, 4) for h in hits] == [1.0, 0.8, 0.0]
    assert hits[0].text == "alpha text"


def test_ties_are_broken_by_passage_id():
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    index = PassageIndex(["p3", "p1", "p2", "p0"], ["d"] * 4, ["a", "b", "c", "d"], vectors)
    hits = index.search(np.array([2.0, 0.0]), 2)
    assert [h.passage_id for h in hits] == ["p1", "p2"]


def test_each_chunker_and_domain_has_its_own_index():
    passages = [
        passage("n1", "alpha news", chunker="c1", domain="news"),
        passage("w1", "alpha wiki", chunker="c1", domain="wiki"),
        passage("n2", "gamma news", chunker="c2", domain="news"),
        passage("n3", "delta news", chunker="c2", domain="news"),
    ]
    indexes = build_indexes(passages, EMBEDDER)
    assert sorted(indexes) == [("c1", "news"), ("c1", "wiki"), ("c2", "news")]
    question = {"question_id": "q", "domain": "news", "question": "alpha?"}
    hits = retrieve([question], indexes, EMBEDDER, chunkers=["c1", "c2"], top_k=5)
    assert [h.passage_id for h in hits[("q", "c1")]] == ["n1"]  # never the wiki passage
    assert [h.passage_id for h in hits[("q", "c2")]] == ["n2", "n3"]


def test_missing_domain_index_is_named():
    indexes = build_indexes([passage("n1", "alpha")], EMBEDDER)
    question = {"question_id": "q9", "domain": "law", "question": "alpha?"}
    with pytest.raises(ValueError, match=r"'c1' has no passages in domain 'law'.*q9"):
        retrieve([question], indexes, EMBEDDER, chunkers=["c1"], top_k=1)


def test_invalid_inputs_are_rejected():
    with pytest.raises(ValueError, match="lacks field"):
        build_indexes([{"passage_id": "x", "text": "alpha"}], EMBEDDER)
    with pytest.raises(ValueError, match="not unique"):
        PassageIndex(["a", "a"], ["d", "d"], ["x", "y"], np.eye(2))
    with pytest.raises(ValueError, match="top_k"):
        PassageIndex(["a"], ["d"], ["x"], np.eye(1)).search(np.ones(1), 0)
