"""The two offline semantic setups (MiniLM, mpnet) on short real documents."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hope.chunking import Chunker, SemanticChunker, load_chunker

pytestmark = pytest.mark.slow

SETUPS = {"semantic_minilm": 384, "semantic_mpnet": 768}


@pytest.fixture(scope="module", params=sorted(SETUPS))
def semantic_chunker(request, conf_dir: Path) -> Chunker:
    return load_chunker(request.param, conf_dir)


def sentences_of(chunker: SemanticChunker, text: str) -> list[str]:
    from chonkie.chunker.base import split_text_by_delimiters

    settings = chunker.settings
    return split_text_by_delimiters(
        text, list(settings.delim), "prev", settings.min_characters_per_sentence
    )


def test_semantic_passages_partition_the_document(semantic_chunker: Chunker, semantic_documents):
    fn = semantic_chunker.fn
    assert isinstance(fn, SemanticChunker)
    counts = {}
    for doc_id, document in semantic_documents.items():
        passages = semantic_chunker.chunk(document, doc_id)
        counts[doc_id] = len(passages)
        for i, p in enumerate(passages):
            assert p.passage_id == f"{doc_id}::{semantic_chunker.name}::{i:04d}"
            assert p.start is not None and document[p.start : p.end] == p.text
        # Whole sentences, nothing lost or repeated: the passages tile the document.
        assert passages[0].start == 0 and passages[-1].end == len(document)
        for left, right in itertools.pairwise(passages):
            assert left.end == right.start
        for p in passages:
            if len(sentences_of(fn, p.text)) > 1:
                assert fn.count_tokens(p.text) <= fn.settings.chunk_size + 2
    # The CORD-19 body's sections must not collapse into one passage.
    assert counts["cord19:0a3d78fb"] > 1


def test_the_two_setups_use_different_models(semantic_chunker: Chunker):
    embeddings = semantic_chunker.fn._load().embedding_model
    assert embeddings.dimension == SETUPS[semantic_chunker.name]


def test_token_limit_binds_on_a_real_document(semantic_documents):
    # 64 tokens is far below a paragraph, so the limit, not the similarity, forms most passages.
    fn = SemanticChunker(model="minilm", chunk_size=64)
    document = semantic_documents["cord19:0a3d78fb"]
    passages = fn(document, "cord19", "semantic_small")
    assert len(passages) >= len(document) // (64 * 8)
    multi_sentence = [p for p in passages if len(sentences_of(fn, p.text)) > 1]
    assert multi_sentence, "expected some passages to hold several short sentences"
    # chonkie sums per-sentence counts; joint tokenisation may differ by a token at a seam.
    assert all(fn.count_tokens(p.text) <= 64 + 2 for p in multi_sentence)
    assert "".join(p.text for p in passages) == document
