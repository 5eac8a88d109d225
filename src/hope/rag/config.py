"""Configuration of the RAG evaluation (conf/rag/*.yaml, overridable from params.yaml ``rag:``)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hope.models.factory import ModelEndpoint, llm_endpoint

METRIC_NAMES = (
    "answer_correctness",
    "factual_correctness",
    "context_recall",
    "response_relevancy",
)
DEFAULT_CONF_DIR = Path("conf/rag")


class RagConfigError(ValueError):
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


def _read_yaml(path: Path, what: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RagConfigError(f"{what} {path}: no such file") from exc
    except yaml.YAMLError as exc:
        raise RagConfigError(f"{what} {path}: not valid YAML ({exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RagConfigError(f"{what} {path}: expected a mapping at the top level")
    return data


def load_rag_config(
    params: str | Path | None = None,
    *,
    conf_dir: str | Path = DEFAULT_CONF_DIR,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[RagConfig, str]:
    """``(config, corpora profile)`` from conf/rag/<rag.config>.yaml merged with params' ``rag:``.

    Without a params file: conf/rag/default.yaml and profile ``sample``.
    """
    section: dict[str, Any] = {}
    profile = "sample"
    if params is not None:
        loaded = _read_yaml(Path(params), "params file")
        section = loaded.get("rag") or {}
        if not isinstance(section, dict):
            raise RagConfigError(f"params file {params}: 'rag' must be a mapping")
        profile = (loaded.get("corpora") or {}).get("profile", profile)
    section = dict(section)
    name = section.pop("config", "default")
    base = _read_yaml(Path(conf_dir) / f"{name}.yaml", "rag config")
    try:
        # OmegaConf's merge, as Hydra composes: mappings merge key by key, anything else replaces.
        merged = OmegaConf.to_container(OmegaConf.merge(base, section, overrides or {}))
        return RagConfig.model_validate(merged), str(profile)
    except (ValidationError, OmegaConfBaseException) as exc:
        raise RagConfigError(f"rag config {Path(conf_dir) / f'{name}.yaml'}: {exc}") from exc


def resolve_llm_config(role: RoleConfig, what: str = "llm") -> dict[str, Any]:
    """Flat ``build_llm`` keyword arguments: the packaged preset with the overrides applied."""
    preset = OmegaConf.create()
    if role.preset is not None:
        resource = resources.files("hope.conf").joinpath("llm", f"{role.preset}.yaml")
        if not resource.is_file():
            raise RagConfigError(f"{what}.preset: no packaged LLM config named {role.preset!r}")
        preset = OmegaConf.create(resource.read_text(encoding="utf-8"))
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
