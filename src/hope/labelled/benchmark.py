"""The labelled benchmark's scoring: every chunker on every labelled corpus, measured both ways.

For one corpus of a labelled set (Chroma's general evaluation set) and a list of chunkers:

1. ``measure_corpus``: chunk (cached in the project's cache, ``hope.core.chunk_cache``), labelled
   retrieval (``hope.labelled``: recall, precision, IoU, precision-Ω at top-k, recall at a
   character budget, per question), the cheap label-free baselines (``hope.baselines``) and BLEU;
2. ``score_corpus_hope``: HOPE and its sub-metrics for every chunking of the corpus at once (one
   profile), with the per-item values that ``hope.labelled.convergent`` resamples.

Shared by the DVC stage ``labelled`` (``hope.stages.labelled_stage``, with the settings of
params.yaml
``labelled:``, which ``dvc exp run -S experiment=labelled`` sets to the whole benchmark) and
``bench/bench_labelled.py``, so both measure with one implementation.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hope.baselines import CARDS, compute_baselines
from hope.chunking import document_bleu, load_chunker
from hope.core.chunk_cache import cached_chunks
from hope.core.response_cache import ResponseCache
from hope.labelled.chunking_evaluation import LabelledSettings, evaluate_chunking
from hope.labelled.convergent import HOPE_METRICS, finite_or_none
from hope.labelled.labelled_files import read_questions
from hope.labelled.labelled_inputs import ChunkPassage

PER_QUESTION = ("recall", "precision", "iou", "precision_omega", "budget_recall")


class BenchmarkSettings(BaseModel):
    """What the labelled benchmark measures and how big it is (params.yaml ``labelled:``)."""

    model_config = ConfigDict(extra="forbid")

    corpora: list[str] = Field(min_length=1)
    # Score only the first N characters of a longer corpus, and the questions whose spans all fall
    # there (a size knob; recorded per corpus). None: whole corpora.
    max_chars: int | None = Field(default=None, ge=1)
    chunkers: list[str] = Field(min_length=1)
    k: int = Field(default=5, ge=1)
    budget: int = Field(default=2500, ge=1)
    resamples: int = Field(default=1000, ge=1)
    seed: int = 0
    size_min: int = Field(default=100, ge=0)
    size_max: int = Field(default=1100, ge=1)
    embedder: str = "minilm"
    llm: str = "embedded"
    # Extra Hydra overrides of HOPE's score config, e.g. llm.base_url=http://gpu:8000/v1.
    overrides: list[str] = []
    profiles: list[str] = ["paper"]
    # HOPE's size knobs: the paper's counts (every passage, 5, 5, 20) do not fit 2 cores.
    focus_passages: int = Field(default=1, ge=1)
    statements: int = Field(default=3, ge=1)
    questions: int = Field(default=1, ge=1)
    segments: int = Field(default=2, ge=1)

    def labelled_settings(self) -> LabelledSettings:
        return LabelledSettings(
            k=self.k, budget=self.budget, n_resamples=self.resamples, seed=self.seed
        )

    def hope_size(self) -> dict[str, int]:
        return {
            "focus_passages": self.focus_passages,
            "statements": self.statements,
            "questions": self.questions,
            "segments": self.segments,
        }


# --- chunking and the embedding-only measures -----------------------------------------------------


def load_offline_chunkers(names: Sequence[str], conf_dir: Path) -> tuple[list[Any], dict[str, str]]:
    """The chunkers that load offline, and the reason for each that does not."""
    from hope.chunking import ChunkerConfigError

    chunkers, not_run = [], {}
    for name in names:
        try:
            chunkers.append(load_chunker(name, conf_dir))
        except ChunkerConfigError as exc:
            not_run[name] = f"needs online or unavailable models: {exc}"
    return chunkers, not_run


def chunk_corpus(
    chunker: Any, corpus_name: str, text: str, cache: ResponseCache | None
) -> list[dict[str, Any]]:
    """Passages (text, start, end) of ``text``, kept in the project's cache by chunker config."""
    document = {"doc_id": corpus_name, "domain": "labelled", "text": text}

    def chunk() -> list[dict[str, Any]]:
        return [
            {"text": p.text, "start": p.start, "end": p.end}
            for p in chunker.chunk(text, corpus_name)
        ]

    return cached_chunks(cache, chunker.config, document, chunk)


def measure_corpus(
    corpus_name: str,
    full_text: str,
    questions_path: Path,
    chunkers: Sequence[Any],
    embedder: Any,
    settings: BenchmarkSettings,
    *,
    cache: ResponseCache | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> tuple[dict[str, Any], str]:
    """One corpus' entry (per chunker: labelled measures, baselines, BLEU; private per-question
    and per-passage arrays for the analysis) and the text scored (``max_chars`` applied)."""
    text = full_text[: settings.max_chars] if settings.max_chars else full_text
    sliced = len(text) < len(full_text)
    questions, skipped = read_questions(questions_path, text, corpus_name, outside_slice_ok=sliced)
    entry: dict[str, Any] = {
        "n_chars": len(text),
        "n_chars_full": len(full_text),
        "sliced": sliced,
        "questions_outside_slice_or_other_corpus": skipped,
        "n_questions": len(questions),
        "chunkers": {},
        "_per_question": {},
        "_baseline_items": {},
        "_passages": {},
    }
    for chunker in chunkers:
        log(f"{corpus_name}: {chunker.name}: chunking")
        passages = chunk_corpus(chunker, corpus_name, text, cache)
        texts = [p["text"] for p in passages]
        labelled = evaluate_chunking(
            text,
            questions,
            [ChunkPassage(p["text"], p["start"], p["end"]) for p in passages],
            embedder,
            settings.labelled_settings(),
        )
        baselines = compute_baselines(
            texts, embedder, min_chars=settings.size_min, max_chars=settings.size_max
        )
        row: dict[str, Any] = {
            "n_passages": len(passages),
            "mean_chars": float(np.mean([len(t) for t in texts])),
            "labelled_status": labelled["status"],
            "bleu": document_bleu(text, texts).score,
            "baselines": {name: baselines[name]["score"] for name in CARDS},
            "hope": {},
        }
        if labelled["status"] == "ok":
            row["labelled"] = labelled["summary"]
            entry["_per_question"][chunker.name] = {
                m: [r[m] for r in labelled["per_question"]] for m in PER_QUESTION
            }
            row["per_question"] = {
                m: [None if not math.isfinite(v) else round(v, 5) for v in values]
                for m, values in entry["_per_question"][chunker.name].items()
            }
        else:
            row["labelled_reason"] = labelled["reason"]
        entry["_baseline_items"][chunker.name] = {
            name: baselines[name]["per_passage"] for name in CARDS
        }
        entry["_passages"][chunker.name] = texts
        entry["chunkers"][chunker.name] = row
        budget_recall = row.get("labelled", {}).get("budget_recall", {}).get("mean")
        log(f"{corpus_name}: {chunker.name}: {len(texts)} passages, budget recall {budget_recall}")
    return entry, text


# --- HOPE ----------------------------------------------------------------------------------------


def hope_overrides(profile: str, settings: BenchmarkSettings) -> list[str]:
    return [
        f"hope={profile}",
        f"llm={settings.llm}",
        f"hope.focus_passages={settings.focus_passages}",
        f"hope.concept_unity.n_items={settings.statements}",
        f"hope.semantic_independence.n_questions={settings.questions}",
        f"hope.information_preservation.n_segments={settings.segments}",
        f"hope.seed={settings.seed}",
        "hope.progress=false",
        *settings.overrides,
    ]


def build_hope(
    profile: str, settings: BenchmarkSettings, embedder: Any, cache_path: str | None = None
) -> tuple[Any, str | None]:
    """A HopeEvaluator for ``profile`` sharing ``embedder``, or (None, why not). ``cache_path``:
    the LLM answer cache (default: the packaged config's, $HOPE_CACHE or .cache/hope)."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from hope.core.evaluator import HopeEvaluator
    from hope.core.hope_settings import HopeSettings
    from hope.core.packaged_configs import compose_config
    from hope.models.factory import open_cache

    try:
        cfg = compose_config(hope_overrides(profile, settings))
        hope_settings = HopeSettings(**OmegaConf.to_container(cfg.hope, resolve=True))
    except Exception as exc:  # Hydra: unknown group option or key; pydantic: invalid values
        return None, f"profile {profile!r} cannot be composed here: {exc}".splitlines()[0]
    llm = instantiate(cfg.llm, cache=open_cache(cache_path or cfg.cache.path))
    return HopeEvaluator(llm, embedder, hope_settings), None


def hope_record(result: Any) -> dict[str, Any]:
    """Scores, the per-item values the bootstrap resamples, counts and usage of one HOPE run."""

    def item_scores(metric: str) -> list[float | None]:
        values = []
        for passage in result.passages:
            record = passage[metric]
            if record is None or record.get("status") == "not_sampled":
                continue
            values.append(record.get("score") if record.get("status") != "failed" else None)
        return values

    return {
        **{name: finite_or_none(getattr(result, name)) for name in HOPE_METRICS},
        "items": {
            "concept_unity": item_scores("concept_unity"),
            "semantic_independence": item_scores("semantic_independence"),
            "information_preservation": [
                bool(s["correct"]) for s in result.segments if s["status"] == "ok"
            ],
        },
        "counts": result.to_dict()["counts"],
        "failures": len(result.failures),
        "llm": result.usage["llm"],
        "wall_time_s": result.usage["wall_time_s"],
    }


async def score_corpus_hope(
    evaluator: Any, corpus_text: str, chunkings: dict[str, list[str]]
) -> dict[str, Any]:
    """Every chunking of one corpus at once: identical requests (the shared IP segments) are sent
    once, and the single-slot server is never idle. A chunking whose evaluation raises is recorded
    as failed with its reason and excluded, never scored; a backend that cannot answer stops."""
    from hope.models.model_errors import BackendError

    async def one(name: str, texts: list[str]) -> tuple[str, dict[str, Any]]:
        try:
            result = await evaluator.aevaluate(corpus_text, texts, progress_desc=name)
        except BackendError:
            raise
        except Exception as exc:
            return name, {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
        return name, {"status": "ok", **hope_record(result)}

    try:
        pairs = await asyncio.gather(*(one(n, t) for n, t in chunkings.items()))
    finally:
        await evaluator.llm.aclose()
    return dict(pairs)


def run_hope(
    evaluator: Any, corpus_text: str, chunkings: dict[str, list[str]]
) -> dict[str, dict[str, Any]]:
    return asyncio.run(score_corpus_hope(evaluator, corpus_text, chunkings))


# --- the whole benchmark -------------------------------------------------------------------------


def run_benchmark(
    settings: BenchmarkSettings,
    data_dir: Path,
    conf_dir: Path,
    embedder: Any,
    *,
    cache: ResponseCache | None = None,
    cache_path: str | None = None,
    excluded: dict[str, str] | None = None,
    hope_corpora: Sequence[str] | None = None,
    skip_hope: bool = False,
    timings: dict[str, float] | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> dict[str, Any]:
    """The benchmark's report: settings, chunkers (and those not run, with reasons), per corpus the
    measures of every chunker, HOPE per profile, and the validity analysis, per corpus and pooled.

    ``data_dir`` holds ``corpora/<name>.md`` and ``questions.jsonl``. The report holds no path,
    host or time, so the same inputs give the same report; wall times go to ``timings`` (phase ->
    seconds). ``checkpoint(report)``, if given, is called (with the analysis of what is measured
    so far) after the embedding-only measures and after each corpus' HOPE, so a caller can write
    what a run cut short has finished; without it the analysis runs once, at the end. Keys
    starting with an underscore are in-memory arrays (``convergent.strip_private`` drops them).
    """
    import time

    from hope.core.io import file_sha256, read_text
    from hope.labelled.convergent import analyse

    timings = {} if timings is None else timings
    excluded = dict(excluded or {})
    chunkers, not_run = load_offline_chunkers(
        [n for n in settings.chunkers if n not in excluded], conf_dir
    )
    not_run.update(excluded)
    names = [c.name for c in chunkers]
    report: dict[str, Any] = {
        "settings": {
            "k": settings.k,
            "budget_chars": settings.budget,
            "embedder": embedder.identity,
            "bootstrap": {
                "resamples": settings.resamples,
                "seed": settings.seed,
                "confidence": 0.95,
            },
            "size_compliance_range_chars": [settings.size_min, settings.size_max],
            "hope_size": settings.hope_size(),
            "profiles_requested": list(settings.profiles),
            "max_chars": settings.max_chars,
            "data": {"questions_sha256": file_sha256(data_dir / "questions.jsonl")},
            "resampled_for_tau_interval": (
                "questions (labelled side, one draw shared by all chunkers); HOPE's focus "
                "passages and IP segments within each chunking; passages for size compliance, "
                "cohesion and coherence; BLEU and the passage count fixed"
            ),
            "pooled": "mean of the per-corpus tau (and of each bootstrap replicate's)",
            "passage_length": (
                "tau-b of every score and target with each chunking's mean passage length in "
                "characters (not resampled), and the partial tau of each score with each target "
                "given that length, (t_xy - t_xz t_yz) / sqrt((1 - t_xz^2)(1 - t_yz^2)), "
                "undefined where |t_xz| or |t_yz| is 1; intervals from the same replicates"
            ),
        },
        "chunkers": names,
        "chunkers_not_run": not_run,
        "baseline_cards": {name: card.to_dict() for name, card in CARDS.items()},
        "corpora": {},
    }

    phase = time.perf_counter()
    corpus_texts: dict[str, str] = {}
    for corpus_name in settings.corpora:
        path = data_dir / "corpora" / f"{corpus_name}.md"
        entry, corpus_texts[corpus_name] = measure_corpus(
            corpus_name,
            read_text(path, "corpus"),
            data_dir / "questions.jsonl",
            chunkers,
            embedder,
            settings,
            cache=cache,
            log=log,
        )
        report["corpora"][corpus_name] = {"sha256": file_sha256(path), **entry}
    timings["labelled_and_baselines"] = round(time.perf_counter() - phase, 1)
    aggregations: dict[str, dict] = {}

    def analysed(report: dict[str, Any]) -> dict[str, Any]:
        analyse(report, names, aggregations, settings.resamples, settings.seed)
        return report

    if checkpoint is not None:
        checkpoint(analysed(report))
    report["profiles_skipped"] = {}
    report["llm_requests"] = 0
    report["llm_cache_hits"] = 0
    if skip_hope:
        report["hope_not_run"] = "skip_hope"
    for profile in [] if skip_hope else settings.profiles:
        evaluator, why_not = build_hope(profile, settings, embedder, cache_path)
        if evaluator is None:
            log(f"skipping profile {profile}: {why_not}")
            report["profiles_skipped"][profile] = why_not
            continue
        aggregations[profile] = evaluator.settings.aggregation.model_dump()
        report["settings"].setdefault("hope_settings", {})[profile] = evaluator.settings.model_dump(
            mode="json"
        )
        for corpus_name in hope_corpora or list(report["corpora"]):
            entry = report["corpora"][corpus_name]
            phase = time.perf_counter()
            log(f"{corpus_name}: HOPE[{profile}] for {len(names)} chunkings")
            chunkings = {n: entry["_passages"][n] for n in names}
            results = run_hope(evaluator, corpus_texts[corpus_name], chunkings)
            for name, record in results.items():
                entry["chunkers"][name]["hope"][profile] = record
                if record["status"] == "ok":
                    report["llm_requests"] += record["llm"]["requests"]
                    report["llm_cache_hits"] += record["llm"]["cache_hits"]
            elapsed = round(time.perf_counter() - phase, 1)
            timings[f"hope[{profile}]:{corpus_name}"] = elapsed
            log(
                f"{corpus_name}: HOPE[{profile}] done in {elapsed} s; "
                + ", ".join(f"{n}={r.get('hope')}" for n, r in results.items())
            )
            if checkpoint is not None:
                checkpoint(analysed(report))
    # With checkpoints, the last state of the report is analysed already: the analysis is a pure
    # function of the measures (seeded bootstrap), so doing it again would give the same numbers.
    return report if checkpoint is not None else analysed(report)
