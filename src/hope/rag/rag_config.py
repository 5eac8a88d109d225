"""Configuration of the RAG evaluation: params.yaml ``rag:``, composed by Hydra from the ``rag`` and
``rag_llm`` groups (conf/rag/, conf/rag_llm/), validated by :class:`RagConfig`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from omegaconf import OmegaConf
from pydantic import BaseModel, ConfigDict, Field, field_validator

from hope.core.hope_settings import ConfigError, validated
from hope.core.io import read_params
from hope.core.packaged_configs import packaged_config
from hope.models.factory import ModelEndpoint, llm_endpoint

METRIC_NAMES = (
    "answer_correctness",
    "factual_correctness",
    "context_recall",
    "response_relevancy",
)


class RagConfigError(ConfigError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QuestionsConfig(_Strict):
    per_domain: dict[str, int] = Field(default_factory=lambda: {"sample": 2, "paper": 100})
    generator: Literal["auto", "ragas", "fallback", "extractive"] = "auto"
    # What writes the questions ragas could not deliver (or the gates rejected) in mode auto.
    backup: Literal["fallback", "extractive"] = "extractive"
    # Extractive questions: cloze (code leaves the answer phrase out of its sentence) or llm
    # (the questions LLM writes a question for the answer sentence).
    extractive_writer: Literal["llm", "cloze"] = "cloze"
    # Candidates tried per requested question before the stage reports a shortfall (issue 12).
    candidates_per_question: int = Field(default=4, ge=1)
    duplicate_jaccard: float = Field(default=0.8, gt=0, le=1)
    ragas_timeout_s: float = Field(default=1800.0, gt=0)
    context_chars: int = Field(default=1200, ge=200)
    max_attempts: int = Field(default=3, ge=1)

    def count_for(self, profile: str) -> int:
        if profile not in self.per_domain:
            raise RagConfigError(
                f"rag.questions.per_domain has no entry for profile {profile!r} "
                f"(has {sorted(self.per_domain)})"
            )
        count = self.per_domain[profile]
        if count < 1:
            raise RagConfigError(f"rag.questions.per_domain.{profile} must be >= 1, got {count}")
        return count


class RetrievalConfig(_Strict):
    top_k: int = Field(default=4, ge=1)


class RoleConfig(_Strict):
    preset: str | None = "embedded"
    overrides: dict[str, Any] = Field(default_factory=dict)


class LLMRoles(_Strict):
    questions: RoleConfig = Field(default_factory=RoleConfig)
    answer: RoleConfig = Field(default_factory=RoleConfig)
    judge: RoleConfig = Field(default_factory=RoleConfig)


class AnswerConfig(_Strict):
    temperature: float = Field(default=0.0, ge=0)


class SchemaBounds(_Strict):
    max_string_chars: int = Field(default=500, ge=1)
    max_items: int = Field(default=32, ge=1)


class RagasConfig(_Strict):
    metrics: list[str] = Field(default_factory=lambda: list(METRIC_NAMES))
    temperature: float = Field(default=0.0, ge=0)
    parse_retries: int = Field(default=1, ge=0)
    timeout_s: float = Field(default=900.0, gt=0)
    concurrency: int = Field(default=2, ge=1)
    answer_correctness_weights: list[float] = Field(default_factory=lambda: [0.75, 0.25])
    factual_correctness_mode: Literal["precision", "recall", "f1"] = "f1"
    response_relevancy_strictness: int = Field(default=3, ge=1)
    # false: ragas' prompts without their few-shot examples (instruction, schema and input only).
    few_shot_examples: bool = True
    # Bounds added to ragas' open output schemas (hope.rag.clients.bound_schema); null sends them
    # as ragas writes them.
    schema_bounds: SchemaBounds | None = Field(default_factory=lambda: SchemaBounds())

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(METRIC_NAMES))
        if unknown or not value:
            raise ValueError(f"unknown metric(s) {unknown}; choose from {list(METRIC_NAMES)}")
        return value


class RagConfig(_Strict):
    seed: int = 2025
    questions: QuestionsConfig = Field(default_factory=QuestionsConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    embedder: dict[str, Any] = Field(
        default_factory=lambda: {"backend": "sentence_transformers", "model": "minilm"}
    )
    llm: LLMRoles = Field(default_factory=LLMRoles)
    answer: AnswerConfig = Field(default_factory=AnswerConfig)
    ragas: RagasConfig = Field(default_factory=RagasConfig)


def load_rag_config(params: str | Path = "params.yaml") -> tuple[RagConfig, str]:
    """``(config, corpora profile)`` from a params file: its ``rag:`` section, which Hydra composed
    in full (the ``rag`` and ``rag_llm`` groups, conf/dvc_params.yaml), validated here."""
    loaded = read_params(Path(params))
    if not isinstance(loaded.get("rag"), dict):
        raise RagConfigError(f"params file {params}: no 'rag' mapping")
    profile = str((loaded.get("corpora") or {}).get("profile", "sample"))
    try:
        return validated(RagConfig, loaded["rag"], f"params file {params}", "rag"), profile
    except ConfigError as exc:
        raise RagConfigError(str(exc)) from None


def resolve_llm_config(role: RoleConfig, what: str = "llm") -> dict[str, Any]:
    """Flat ``build_llm`` keyword arguments: the packaged preset with the overrides applied."""
    preset = OmegaConf.create()
    if role.preset is not None:
        try:
            preset = packaged_config("llm", role.preset)
        except ValueError as exc:
            raise RagConfigError(f"{what}.preset: {exc}") from None
    # Presets may read base URLs from the environment (${oc.env:...}).
    config = OmegaConf.to_container(OmegaConf.merge(preset, role.overrides), resolve=True)
    config.pop("_target_", None)  # type: ignore[union-attr]
    if "model" not in config:
        raise RagConfigError(f"{what}: no model configured (set preset or overrides.model)")
    return config


def model_endpoint(config: Mapping[str, Any], what: str = "llm") -> ModelEndpoint:
    """``hope.models.factory.llm_endpoint`` with the failing role named in the error."""
    try:
        return llm_endpoint(**config)
    except ValueError as exc:  # pydantic's ValidationError included
        raise RagConfigError(f"{what}: {exc}") from exc
