"""HOPE's knobs. Two named profiles ship as Hydra configs (hope/conf/hope/{paper,reference}.yaml).

``paper`` follows section 3 of the paper; where the paper is silent (how many statements, questions
or segments) it takes the published code's counts. ``reference`` reproduces the published code's
choices listed in ../shared/notes/reference-implementation.md. ``robust`` goes beyond the paper:
measures against a small model's biases, kept where the validity benchmark shows they help.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """A composed configuration that does not validate; the message names every bad key."""


def describe(error: ValidationError, prefix: str = "") -> str:
    """pydantic's errors on one line, each as ``<dotted key>: <message>``."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in (prefix, *item["loc"]) if part != "") or "settings"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown setting"
        lines.append(f"{where}: {message}")
    return "; ".join(lines)


def validated(model: type[M], data: Mapping[str, Any], what: str, prefix: str = "") -> M:
    """``model`` validated from ``data``, or a :class:`ConfigError` naming ``what`` and each key
    (dotted, under ``prefix``) that is wrong."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{what}: {describe(exc, prefix)}") from None


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConceptUnitySettings(_Settings):
    method: Literal["statements", "qa_centroid"] = "statements"
    n_items: int = Field(default=5, ge=1, description="statements (paper) or Q/A pairs (reference)")
    temperature: float = Field(default=0.7, ge=0)
    critic: bool = False
    min_items: int = Field(default=2, ge=1, description="fewer usable items -> passage failed")


class SemanticIndependenceSettings(_Settings):
    n_questions: int = Field(default=5, ge=1)
    top_k: int = Field(default=3, ge=0)
    exclude_focus: bool = Field(
        default=False,
        description="P_q from the other passages only (published code); false: the top-k of all "
        "passages, p* included when it is among them (paper, section 3.3)",
    )
    question_temperature: float = Field(default=0.7, ge=0)
    answer_temperature: float = Field(default=0.0, ge=0)
    failed_answer: Literal["exclude", "zero"] = "exclude"


class InformationPreservationSettings(_Settings):
    n_segments: int = Field(default=20, ge=1)
    sentences_per_segment: int = Field(default=3, ge=1)
    replace: bool = False
    top_k: int = Field(default=3, ge=1)
    generation_temperature: float = Field(default=0.7, ge=0)
    choice_temperature: float = Field(default=0.0, ge=0)
    choice_retry_temperatures: list[float] = Field(default_factory=list)
    position_debiasing: bool = Field(
        default=False,
        description="beyond the paper: ask the choice again with the options in reverse order and "
        "count a segment right only if both answers are right",
    )
    judgement: Literal["choice", "support"] = Field(
        default="choice",
        description="choice: one pick among the four options (eq. 9); support (beyond the paper): "
        "each statement judged alone against the passages, a segment right when the true one is "
        "supported and no false one is",
    )

    @model_validator(mode="after")
    def _debiasing_needs_a_choice(self) -> InformationPreservationSettings:
        if self.position_debiasing and self.judgement != "choice":
            raise ValueError(
                "position_debiasing reorders the options of a choice; judgement "
                f"{self.judgement!r} judges each statement alone and has no order to debias"
            )
        return self


class AggregationSettings(_Settings):
    clip: Literal["negative_to_zero", "unit_interval", "none"] = "negative_to_zero"
    drop_zero_passage_scores: bool = False
    hope_weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    hope_zero_as_missing: bool = False
    min_passages: int = Field(default=1, ge=1)


class SamplingSettings(_Settings):
    """How many focus passages and segments an evaluation draws (BEYOND THE PAPER when not
    ``all``; ``hope.core.sequential_sampling``)."""

    mode: Literal["all", "sequential"] = Field(
        default="all",
        description="all: every focus passage and segment (the paper); sequential: seeded rounds "
        "that stop when HOPE's anytime-valid interval is narrow enough or, among the chunkings "
        "of one document scored together, every comparison is decided",
    )
    alpha: float = Field(
        default=0.05,
        gt=0,
        lt=1,
        description="error rate of a stopping decision: each chunking's HOPE interval holds at "
        "every round with probability 1 - alpha/2 (so a comparison decided from two of them is "
        "wrong with probability at most alpha)",
    )
    epsilon: float = Field(
        default=0.05, ge=0, description="stop a chunking when HOPE's half-width is at most this"
    )
    round_focus_passages: int = Field(default=8, ge=1, description="focus passages per round")
    round_segments: int = Field(
        default=20,
        ge=1,
        description="segments per round; the default, the paper's 20 segments, draws every "
        "segment in the first round: a segment costs one request per chunking where a focus "
        "passage costs 2 + 2 x questions, and the segments' right/wrong scores carry most of "
        "HOPE's spread, so an exact information preservation lets the focus passages stop sooner",
    )
    order_seed: int | None = Field(
        default=None,
        description="seed of the draw order (None: the run's seed). Another value draws other "
        "items in another order while every item keeps its answers (they come from the run's "
        "seed): repeating a sequential run over several order seeds shows how much where it "
        "stopped, and what it decided, depends on which items happened to be drawn",
    )


class HopeSettings(_Settings):
    profile: str = "paper"
    seed: int = 0
    language: str = "en"
    prompts_dir: str | None = None
    progress: bool = True
    focus_passages: int | None = Field(
        default=None,
        ge=1,
        description="score concept unity and semantic independence on at most this many passages "
        "per chunking, a seeded sample (retrieval still sees every passage); null = all, as in "
        "the paper",
    )
    concept_unity: ConceptUnitySettings = Field(default_factory=ConceptUnitySettings)
    semantic_independence: SemanticIndependenceSettings = Field(
        default_factory=SemanticIndependenceSettings
    )
    information_preservation: InformationPreservationSettings = Field(
        default_factory=InformationPreservationSettings
    )
    aggregation: AggregationSettings = Field(default_factory=AggregationSettings)
    sampling: SamplingSettings = Field(default_factory=SamplingSettings)

    @model_validator(mode="after")
    def _consistent(self) -> HopeSettings:
        cu = self.concept_unity
        if cu.min_items > cu.n_items:
            raise ValueError(
                f"concept_unity.min_items ({cu.min_items}) exceeds n_items ({cu.n_items})"
            )
        if self.sampling.mode == "sequential":
            agg = self.aggregation
            if agg.hope_zero_as_missing or agg.drop_zero_passage_scores:
                # Both make HOPE's value depend on which items happen to score 0, so the
                # bounds of the sub-metrics no longer bound it.
                raise ValueError(
                    "sampling.mode sequential needs aggregation.hope_zero_as_missing and "
                    "aggregation.drop_zero_passage_scores false (the reference profile's "
                    "choices): an interval of HOPE is then not the weighted mean of its parts'"
                )
        return self

    @model_serializer(mode="wrap")
    def _without_default_sampling(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # ``all`` is what every run did before sampling became a setting: leaving it out keeps
        # the settings a result records, and so its cache key and its bytes, as they were.
        data = handler(self)
        if self.sampling.mode == "all":
            data.pop("sampling", None)
        return data


def load_profile(name: str, **overrides) -> HopeSettings:
    """Settings of a named profile (``paper``, ``reference``) from the packaged Hydra configs.

    Nested overrides merge: ``load_profile("reference", concept_unity={"n_items": 2})`` keeps
    the reference profile's other concept-unity settings.
    """
    from omegaconf import OmegaConf

    from hope.core.packaged_configs import packaged_config

    merged = OmegaConf.merge(packaged_config("hope", name), overrides)
    return validated(HopeSettings, OmegaConf.to_container(merged, resolve=True), name, "hope")
