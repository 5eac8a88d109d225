"""pydantic models of the two configs Hydra composes from ``conf/``, each validated in one step
right after composition, so that a bad value stops before any stage or job runs and the error
names its key (``rag.retrieval.top_k: Input should be greater than or equal to 1``):

* ``conf/dvc_params.yaml`` -> params.yaml (:class:`Params`, in ``hope.pipeline.params``);
* ``conf/config.yaml`` -> a ``hope-run`` job (:class:`RunConfig`, in ``hope.pipeline.run``).

Sections with their own models reuse them: ``hope`` (:class:`hope.core.hope_settings.HopeSettings`)
and
``rag`` (:class:`hope.rag.rag_config.RagConfig`). Model configs (``llm``, ``embedder``, ``chunker``)
are checked where Hydra instantiates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from hope.chunking.bleu_baseline import OFFLINE_TOKENIZERS
from hope.core.hope_settings import HopeSettings, validated
from hope.core.result import METRICS
from hope.labelled.benchmark import BenchmarkSettings
from hope.probe import DEFAULT_WRITER, ProbeSettings
from hope.probe.probe_retrieval import DEFAULT_BUDGETS
from hope.rag.rag_config import RagConfig


def _one_of(*choices: str) -> AfterValidator:
    def check(value: str) -> str:
        if value not in choices:
            raise ValueError(f"{value!r} is not one of {list(choices)}")
        return value

    return AfterValidator(check)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BleuParams(_Strict):
    tokenize: Annotated[str, _one_of(*OFFLINE_TOKENIZERS)] = "13a"
    joiner: str = " "


class HopeStageParams(_Strict):
    """params.yaml ``hope:``: what the DVC ``hope`` stage composes its score config from
    (:meth:`score_overrides`). The defaults are the packaged ``score`` config's."""

    profile: str = "paper"
    seed: int | None = None
    llm: str = "embedded"
    embedder: str = "minilm"
    cache: str | None = None
    parallel_pairs: int = Field(default=4, ge=1)
    overrides: list[str] = []

    def score_overrides(self) -> list[str]:
        """Hydra overrides of the packaged ``score`` config (hope.core.packaged_configs)."""
        overrides = [
            f"hope={self.profile}",
            f"llm={self.llm}",
            f"embedder={self.embedder}",
            "hope.progress=false",
        ]
        if self.cache:
            overrides.append(f"cache.path={self.cache}")
        if self.seed is not None:
            overrides.append(f"hope.seed={self.seed}")
        return [*overrides, *self.overrides]


class AnalysisParams(_Strict):
    seed: int
    bootstrap: int = Field(ge=1)
    min_n: int = Field(ge=1)
    bins: int = Field(ge=1)
    min_bin_size: int = Field(ge=1)
    binning: Literal["quantile", "width"]


class LabelledParams(BenchmarkSettings):
    """params.yaml ``labelled:``: the benchmark's settings and where its files come from."""

    source: str
    checksums: dict[str, str]

    def benchmark(self) -> BenchmarkSettings:
        """The benchmark's settings without the data keys (``source``, ``checksums``)."""
        return BenchmarkSettings.model_validate(
            self.model_dump(include=set(BenchmarkSettings.model_fields))
        )


class ProbeParams(_Strict):
    """``probe:`` (conf/probe/): the probe's writer, size and retrieval setting (hope.probe)."""

    # a code writer (cloze, keyword, mixed, topic) or an LLM writer ("llm": excerpts copied
    # verbatim, "llm_sentences": sentences chosen by number): the model of the packaged llm group
    # `llm`
    writer: str = DEFAULT_WRITER
    llm: str = "embedded"
    questions: int = Field(default=200, ge=1)
    k: int = Field(default=5, ge=1)
    budgets: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=lambda: list(DEFAULT_BUDGETS), min_length=1
    )
    embedder: str = "minilm"
    resamples: int = Field(default=1000, ge=1)
    seed: int = 0

    def settings(self) -> ProbeSettings:
        return ProbeSettings(
            k=self.k,
            budgets=tuple(self.budgets),
            n_questions=self.questions,
            seed=self.seed,
            n_resamples=self.resamples,
        )


class Params(_Strict):
    """params.yaml. ``corpora`` and ``tracking`` are read by their own code
    (hope.corpora.corpus_config,
    hope.tracking.tracking_settings) and only need to be mappings here."""

    corpora: dict[str, Any]
    chunkers: list[str] = Field(min_length=1)
    hope: HopeStageParams
    bleu: BleuParams
    rag: RagConfig
    labelled: LabelledParams
    probe: ProbeParams = Field(default_factory=ProbeParams)
    analysis: AnalysisParams
    tracking: dict[str, Any]


class RunBleu(BleuParams):
    enabled: bool = True


class _Open(BaseModel):
    """A section whose further keys belong to code that checks them itself."""

    model_config = ConfigDict(extra="allow")


class RunCorpus(_Open):
    """``corpus:`` (conf/corpus/): which corpus group; its keys are read by hope.corpora."""

    profile: str
    seed: int
    counts: dict[str, int] = Field(default_factory=dict)


class RunData(_Strict):
    documents: Path | None = None
    doc_ids: list[Any] | None = None


class RunScoring(_Open):
    parallel_pairs: int = Field(ge=1)


class RunEstimate(_Strict):
    mean_chars: dict[str, float]
    sentence_chars: float = Field(gt=0)
    chars_per_token: float = Field(gt=0)


class RunCache(_Strict):
    path: str | None = None
    reuse_results: bool = True


class ScoreConfig(_Open):
    """What builds a HOPE evaluator (``hope.models.factory.build_evaluator``): the packaged
    ``score`` config that ``hope score`` and the DVC ``hope`` stage compose, validated. ``llm`` and
    ``embedder`` stay the mappings Hydra instantiates (checked there)."""

    hope: HopeSettings
    llm: dict[str, Any]
    embedder: dict[str, Any]
    cache: RunCache = Field(default_factory=RunCache)


class RunConfig(ScoreConfig):
    """A ``hope-run`` job (conf/config.yaml), validated once by ``hope.pipeline.run.run`` and
    handed to every step; a :class:`ScoreConfig` with the job's corpus, chunkers and outputs.
    ``chunker`` stays the mapping Hydra instantiates; ``tracking`` and ``shard`` are checked by
    their own models."""

    chunkers: list[str] = Field(min_length=1)
    chunker: dict[str, Any] | None = None
    corpus: RunCorpus
    data: RunData = Field(default_factory=RunData)
    scoring: RunScoring
    estimate: RunEstimate
    bleu: RunBleu
    rag: RagConfig
    probe: ProbeParams = Field(default_factory=ProbeParams)
    tracking: dict[str, Any] = Field(default_factory=dict)
    shard: dict[str, Any] = Field(default_factory=dict)
    # "probe": the probe's pooled recall at its middle budget (no LLM call), see hope.pipeline.run
    objective: Annotated[str, _one_of("hope", *METRICS, "bleu", "probe")]
    dry_run: bool


def validate_params(params: Mapping[str, Any], what: str = "conf/dvc_params.yaml") -> Params:
    return validated(Params, params, what)


def validate_score_config(config: Mapping[str, Any], what: str = "score config") -> ScoreConfig:
    return validated(ScoreConfig, config, what)


def validate_run_config(config: Mapping[str, Any], what: str = "hope-run config") -> RunConfig:
    return validated(RunConfig, {k: v for k, v in config.items() if k != "hydra"}, what)
