"""Chunks kept in the response cache (hope.core.chunk_cache): a rerun reads them back, and anything
that could change them (chunker config, document text, id, domain) chunks afresh."""

from __future__ import annotations

from hope.core.chunk_cache import NAMESPACE, cached_chunks
from hope.core.response_cache import ResponseCache

DOCUMENT = {"doc_id": "d1", "domain": "news", "text": "One. Two. Three."}
CONFIG = {"name": "fixed_5", "_target_": "hope.chunking.FixedSizeChunker", "chunk_size": 5}


class Chunker:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, document=DOCUMENT) -> list[dict]:
        self.calls += 1
        text = document["text"]
        return [{"passage_id": f"p{i}", "text": text[i : i + 5]} for i in range(0, len(text), 5)]


def test_a_rerun_reads_the_chunks_back(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    chunk = Chunker()
    first = cached_chunks(cache, CONFIG, DOCUMENT, chunk)
    again = cached_chunks(ResponseCache(tmp_path / "cache.sqlite"), CONFIG, DOCUMENT, chunk)
    assert again == first == chunk()
    assert chunk.calls == 2  # the first call and the comparison above, not the rerun
    assert cache.count(NAMESPACE) == 1


def test_what_changes_the_chunks_changes_the_key(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    chunk = Chunker()
    cached_chunks(cache, CONFIG, DOCUMENT, chunk)
    variants = [
        (dict(CONFIG, chunk_size=6), DOCUMENT),
        (CONFIG, dict(DOCUMENT, text="One. Two. Four.")),
        (CONFIG, dict(DOCUMENT, doc_id="d2")),
        (CONFIG, dict(DOCUMENT, domain="wiki")),
    ]
    for config, document in variants:
        cached_chunks(cache, config, document, lambda document=document: chunk(document))
    assert chunk.calls == 1 + len(variants)
    assert cache.count(NAMESPACE) == 1 + len(variants)


def test_without_a_cache_every_call_chunks():
    chunk = Chunker()
    cached_chunks(None, CONFIG, DOCUMENT, chunk)
    cached_chunks(None, CONFIG, DOCUMENT, chunk)
    assert chunk.calls == 2
