"""Validated settings of the built-in chunker families.

Each chunker validates its settings when it is constructed, which for a YAML config is the moment
the config is instantiated, so a bad setting stops a run before any document is chunked. Unknown
keys are rejected to catch typos such as ``chunk_overlapp``.
"""

from __future__ import annotations

import os
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hope.core.hope_settings import describe
from hope.models.model_files import EmbeddingModelError, check_embedding_model


class ChunkerConfigError(ValueError):
    """Invalid chunker settings, reported at config time."""


# The OpenAI embedding models a semantic chunker may name when it talks to api.openai.com.
OPENAI_EMBEDDING_MODELS = frozenset(
    {"text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large"}
)


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


S = TypeVar("S", bound=_Settings)


# Checks shared by the families' size and count fields.
def _positive(value: int) -> int:
    if value <= 0:
        raise ValueError(f"must be > 0, got {value}")
    return value


def _non_negative(value: int) -> int:
    if value < 0:
        raise ValueError(f"must be >= 0, got {value}")
    return value


class CharacterSplitSettings(_Settings):
    """Shared by the fixed-size and recursive splitters; sizes count characters."""

    chunk_size: int = Field(description="maximum passage length in characters")
    chunk_overlap: int = Field(0, description="characters shared by neighbouring passages")
    strip_whitespace: bool

    _positive_size = field_validator("chunk_size")(_positive)
    _non_negative_overlap = field_validator("chunk_overlap")(_non_negative)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> CharacterSplitSettings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size "
                f"({self.chunk_size}); otherwise a passage never advances past its neighbour"
            )
        return self


class FixedSizeSettings(CharacterSplitSettings):
    # Fixed-size passages are exact character windows; stripping would shorten some of them and
    # break the window arithmetic (step = chunk_size - chunk_overlap).
    strip_whitespace: bool = False


class RecursiveSettings(CharacterSplitSettings):
    separators: list[str] = Field(default_factory=lambda: ["\n\n", "\n", " ", ""])
    strip_whitespace: bool = True

    @field_validator("separators")
    @classmethod
    def _ends_with_characters(cls, value: list[str]) -> list[str]:
        # Without the empty separator a piece longer than chunk_size survives unsplit and breaks
        # the size limit every downstream consumer relies on.
        if not value or value[-1] != "":
            raise ValueError('must end with "" so that any over-long piece can still be split')
        return value


class SemanticSettings(_Settings):
    """chonkie's SemanticChunker: sentences grouped where embedding similarity dips.

    ``chunk_size`` counts tokens of the embedding model's tokenizer (tiktoken for OpenAI); a
    single sentence longer than that still becomes one passage. ``threshold`` is chonkie's
    percentile (0-1) for keeping a similarity minimum as a split point.
    """

    provider: Literal["sentence-transformers", "openai"] = "sentence-transformers"
    model: str
    threshold: float = 0.8
    chunk_size: int = 512
    similarity_window: int = 3
    min_sentences_per_chunk: int = 1
    min_characters_per_sentence: int = 24
    delim: list[str] = Field(default_factory=lambda: [". ", "! ", "? ", "\n"])
    device: str = "cpu"
    batch_size: int = 32
    trust_remote_code: bool = False
    api_key_env: str = "OPENAI_API_KEY"
    base_url: str | None = None

    @field_validator("threshold")
    @classmethod
    def _open_unit_interval(cls, value: float) -> float:
        if not 0 < value < 1:
            raise ValueError(f"must be strictly between 0 and 1, got {value}")
        return value

    _positive_counts = field_validator(
        "chunk_size", "similarity_window", "min_sentences_per_chunk", "batch_size"
    )(_positive)
    _non_negative_count = field_validator("min_characters_per_sentence")(_non_negative)

    @field_validator("delim")
    @classmethod
    def _non_empty_delimiters(cls, value: list[str]) -> list[str]:
        if not value or any(d == "" for d in value):
            raise ValueError("must be a non-empty list of non-empty strings")
        return value

    @model_validator(mode="after")
    def _model_is_available(self) -> SemanticSettings:
        if self.provider == "sentence-transformers":
            try:
                check_embedding_model(self.model)
            except EmbeddingModelError as exc:
                raise ValueError(str(exc)) from exc
        else:
            if self.base_url is None and self.model not in OPENAI_EMBEDDING_MODELS:
                raise ValueError(
                    f"unknown OpenAI embedding model {self.model!r}; known: "
                    f"{sorted(OPENAI_EMBEDDING_MODELS)} (set base_url for other endpoints)"
                )
            if not os.environ.get(self.api_key_env):
                raise ValueError(
                    f"provider 'openai' needs an API key in the environment variable "
                    f"{self.api_key_env!r}, which is unset"
                )
        return self


def validate_settings(model: type[S], what: str, params: dict[str, Any]) -> S:
    """``model(**params)`` with a one-line error that names the chunker and every bad setting."""
    try:
        return model(**params)
    except ValidationError as exc:
        raise ChunkerConfigError(f"invalid settings for {what}: {describe(exc)}") from None
