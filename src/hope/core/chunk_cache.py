"""Each document's chunks kept in the response cache, so a rerun does not chunk again.

With its results reused (``hope.core.result_cache``), a warm rerun of ``hope-run`` is mostly
chunking:
17.7 s of CPU for the scale benchmark's 100 documents with LangChain's fixed-size splitter
(``bench/results/chunking.json``), minutes per document with a sentence-transformer chunker on a
CPU. The key holds the chunker's config, the document's id, domain and text (hash), and the
package's code fingerprint, so a change of chunker setting or code chunks afresh. The model files
behind a semantic chunker's model name are not in the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hope.core.io import text_sha256
from hope.core.response_cache import ResponseCache, content_key
from hope.core.result_cache import code_fingerprint

NAMESPACE = "chunks"
Records = list[dict[str, Any]]


def chunks_key(chunker_config: Mapping[str, Any], document: Mapping[str, Any]) -> str:
    return content_key(
        {
            "chunker": dict(chunker_config),
            "doc_id": document["doc_id"],
            "domain": document.get("domain"),
            "text_sha256": text_sha256(document["text"]),
            "code": code_fingerprint(),
        }
    )


def cached_chunks(
    cache: ResponseCache | None,
    chunker_config: Mapping[str, Any],
    document: Mapping[str, Any],
    chunk: Callable[[], Records],
) -> Records:
    """``chunk()``'s passage records, read from ``cache`` when this chunker has chunked this
    document before (``cache`` None: always ``chunk()``)."""
    if cache is None:
        return chunk()
    key = chunks_key(chunker_config, document)
    found = cache.get_json(NAMESPACE, key)
    if found is not None:
        return found
    records = chunk()
    cache.put_json(NAMESPACE, key, records)
    return records
