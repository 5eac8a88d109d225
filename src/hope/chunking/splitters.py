"""Fixed-size and recursive character chunkers, both from ``langchain-text-splitters``."""

from __future__ import annotations

from typing import Any

from hope.chunking.passages import Passage, build_passages
from hope.chunking.settings import FixedSizeSettings, RecursiveSettings, validate_settings


class _LangChainChunker:
    """Shared by the LangChain splitters: their text pieces are located back in the document."""

    _splitter: Any
    settings: Any

    def __call__(self, document_text: str, doc_id: str, chunker_name: str) -> list[Passage]:
        return build_passages(
            self._splitter.split_text(document_text),
            document_text,
            doc_id,
            chunker_name,
            search_floor_back=self.settings.chunk_overlap,
        )


class FixedSizeChunker(_LangChainChunker):
    """Windows of exactly ``chunk_size`` characters, each starting ``chunk_size - chunk_overlap``
    characters after the previous one (the last window may be shorter).

    LangChain's ``CharacterTextSplitter`` with the empty separator splits the text into single
    characters and merges them back up to ``chunk_size``, which is this windowing; whitespace is
    kept by default so every window is a verbatim slice of the document.
    """

    def __init__(self, name: str | None = None, **params: Any) -> None:
        from langchain_text_splitters import CharacterTextSplitter

        # ``name`` is the config's label; accepted so a plain Hydra instantiate of the config works.
        self.name = name
        self.settings = validate_settings(FixedSizeSettings, "fixed-size chunker", params)
        self._splitter = CharacterTextSplitter(
            separator="",
            chunk_size=self.settings.chunk_size,
            chunk_overlap=self.settings.chunk_overlap,
            strip_whitespace=self.settings.strip_whitespace,
        )


class RecursiveChunker(_LangChainChunker):
    """LangChain's ``RecursiveCharacterTextSplitter``: split on paragraphs, then lines, then
    words, then characters, merging neighbours up to ``chunk_size`` characters."""

    def __init__(self, name: str | None = None, **params: Any) -> None:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        # ``name`` is the config's label; accepted so a plain Hydra instantiate of the config works.
        self.name = name
        self.settings = validate_settings(RecursiveSettings, "recursive chunker", params)
        self._splitter = RecursiveCharacterTextSplitter(
            separators=list(self.settings.separators),
            chunk_size=self.settings.chunk_size,
            chunk_overlap=self.settings.chunk_overlap,
            strip_whitespace=self.settings.strip_whitespace,
        )
