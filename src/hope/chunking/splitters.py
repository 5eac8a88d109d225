"""Fixed-size and recursive character chunkers, both from ``langchain-text-splitters``."""

from __future__ import annotations

from typing import Any

from hope.chunking.chunker_settings import FixedSizeSettings, RecursiveSettings, validate_settings
from hope.chunking.passages import Passage, build_passages


class _LangChainChunker:
    """Shared by the LangChain splitters: their text pieces are located back in the document."""

    def __init__(self, name: str | None, settings: Any, splitter: type, **options: Any) -> None:
        # ``name`` is the config's label; accepted so a plain Hydra instantiate of the config works.
        self.name = name
        self.settings = settings
        self._splitter = splitter(
            chunk_size=settings.chunk_size,
            chunk_overlap=settings.chunk_overlap,
            strip_whitespace=settings.strip_whitespace,
            **options,
        )

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

        settings = validate_settings(FixedSizeSettings, "fixed-size chunker", params)
        super().__init__(name, settings, CharacterTextSplitter, separator="")


class RecursiveChunker(_LangChainChunker):
    """LangChain's ``RecursiveCharacterTextSplitter``: split on paragraphs, then lines, then
    words, then characters, merging neighbours up to ``chunk_size`` characters."""

    def __init__(self, name: str | None = None, **params: Any) -> None:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        settings = validate_settings(RecursiveSettings, "recursive chunker", params)
        super().__init__(
            name, settings, RecursiveCharacterTextSplitter, separators=list(settings.separators)
        )
