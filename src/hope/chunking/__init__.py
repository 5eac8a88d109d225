"""Chunking: the paper's chunker families, their YAML configs, and the BLEU baseline.

Heavy libraries (langchain, chonkie, torch) are imported only when a chunker is built or run.
"""

from hope.chunking.bleu_baseline import BleuResult, document_bleu
from hope.chunking.chunker_settings import ChunkerConfigError
from hope.chunking.passages import ChunkingError, Passage, build_passages, passage_id
from hope.chunking.registry import Chunker, available_chunkers, load_chunker, load_chunkers
from hope.chunking.semantic import SemanticChunker
from hope.chunking.splitters import FixedSizeChunker, RecursiveChunker
from hope.models.model_files import EmbeddingModelError, resolve_embedding_model

__all__ = [
    "BleuResult",
    "Chunker",
    "ChunkerConfigError",
    "ChunkingError",
    "EmbeddingModelError",
    "FixedSizeChunker",
    "Passage",
    "RecursiveChunker",
    "SemanticChunker",
    "available_chunkers",
    "build_passages",
    "document_bleu",
    "load_chunker",
    "load_chunkers",
    "passage_id",
    "resolve_embedding_model",
]
