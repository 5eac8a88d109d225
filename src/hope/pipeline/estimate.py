"""Cost before spending: the LLM calls and tokens an experiment needs, and how many are cached.

Two methods:

* ``exact`` (the documents are at hand): the real evaluator runs over every (document, chunker)
  pair against ``hope.models.dry_run_llm.DryRunLLM``, which answers from the response cache where it
  can and otherwise records the request and returns a synthetic schema-valid answer without
  contacting anything. The requests are therefore exactly the engine's first attempts (retries
  excluded), and every request whose inputs are cached is checked against the cache. Requests
  that depend on an uncached answer (the answers to generated questions, the choice after a new
  quadruple) are counted and sized from the synthetic answer, so their token counts are rough.
* ``analytic`` (no documents, e.g. the paper corpus not downloaded): the requests each sub-metric
  declares (``planned_requests`` at the end of each ``hope.core.metrics`` module); per domain, the
  corpus
  group's document count and ``estimate.mean_chars``; per chunker, passages from its size and
  overlap (fixed-size, exact arithmetic), else its measured mean passage length in
  ``data/chunks/summary.json``, else its nominal size; windows of ``sentences_per_segment``
  sentences from ``estimate.sentence_chars``. Nothing can be looked up in the cache.

Sequential sampling (``hope.sampling.mode: sequential``) stops on the answers, which a dry run
does not have (its synthetic answers would stop it at arbitrary rounds). Both methods therefore
count the full draw, which a sequential run never exceeds, and say so in a note.

Tokens: prompt = characters of the rendered messages / ``chars_per_token``; output = the most the
response schema allows (array lengths and string bounds) / ``chars_per_token``, capped at
``llm.max_tokens``. Both are bounds for budgeting, not predictions of the bill.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hope.chunking.registry import Chunker
from hope.core.hope_settings import HopeSettings
from hope.core.metrics import concept_unity, information_preservation, semantic_independence
from hope.core.metrics.request_plan import PlannedRequest
from hope.core.prompting import load_prompt
from hope.models.dry_run_llm import (
    DryRunLLM,
    RecordedRequest,
    max_output_chars,
    output_token_bound,
)
from hope.models.llm import ChatLLM, json_schema_of
from hope.pipeline.config_schema import RunConfig

# The sub-metrics in scoring order; each declares its requests (``planned_requests``).
METRICS = (concept_unity, semantic_independence, information_preservation)
__all__ = ["DryRunLLM", "max_output_chars"]


def planned_requests(
    settings: HopeSettings, *, focus: int, passages: int, segments: int
) -> list[PlannedRequest]:
    """Every request one (document, chunking) pair makes, as the sub-metrics declare them."""
    return [
        request
        for metric in METRICS
        for request in metric.planned_requests(
            settings, focus=focus, passages=passages, segments=segments
        )
    ]


COLUMNS = ("requests", "unique", "cached", "to_send", "prompt_tokens", "output_tokens")


@dataclass
class KindCount:
    requests: int = 0  # as the evaluator issues them (identical requests counted each time)
    unique: int = 0  # distinct requests (cache keys)
    cached: int = 0  # distinct requests already answered in the response cache
    prompt_tokens: int = 0  # over the distinct requests still to send
    output_tokens: int = 0  # upper bound, over the distinct requests still to send

    @property
    def to_send(self) -> int:
        return self.unique - self.cached


@dataclass
class Estimate:
    method: str
    documents: int
    pairs: int
    kinds: dict[str, KindCount] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(k, name) for k in self.kinds.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "documents": self.documents,
            "pairs": self.pairs,
            "kinds": {n: {**asdict(k), "to_send": k.to_send} for n, k in self.kinds.items()},
            "totals": {n: self.total(n) for n in COLUMNS},
            "notes": self.notes,
        }


def format_estimate(estimate: Estimate, origin: str = "") -> str:
    header = ("request kind", "requests", "unique", "cached", "to send", "prompt tok", "output tok")
    lines = [
        f"Dry run ({estimate.method}): {estimate.documents} documents, {estimate.pairs} "
        f"(document, chunker) pairs{f'; documents: {origin}' if origin else ''}",
        f"{header[0]:<22}" + "".join(f"{h:>12}" for h in header[1:]),
    ]
    for name, k in estimate.kinds.items():
        lines.append(f"{name:<22}" + "".join(f"{getattr(k, c):>12,}" for c in COLUMNS))
    lines.append(f"{'total':<22}" + "".join(f"{estimate.total(c):>12,}" for c in COLUMNS))
    lines += [f"note: {n}" for n in estimate.notes]
    return "\n".join(lines)


SEQUENTIAL_NOTE = (
    "sampling.mode sequential: counted as the full draw, an upper bound (a sequential run stops "
    "earlier on its answers, which a dry run does not have)"
)


def full_draw(settings: HopeSettings) -> tuple[HopeSettings, list[str]]:
    """``settings`` with every item drawn, and the note that says so when sampling was
    sequential."""
    if settings.sampling.mode == "all":
        return settings, []
    every = settings.sampling.model_copy(update={"mode": "all"})
    return settings.model_copy(update={"sampling": every}), [SEQUENTIAL_NOTE]


# --- exact: the evaluator against a recording LLM ----------------------------------------------


def tally(
    requests: Sequence[RecordedRequest], chars_per_token: float, settings: HopeSettings
) -> dict[str, KindCount]:
    kinds: dict[str, KindCount] = {}
    seen: set[str] = set()
    for r in requests:
        k = kinds.setdefault(r.kind, KindCount())
        k.requests += 1
        if r.key in seen:
            continue
        seen.add(r.key)
        k.unique += 1
        if r.cached:
            k.cached += 1
        else:
            k.prompt_tokens += math.ceil(r.prompt_chars / chars_per_token)
            k.output_tokens += r.output_tokens
    # The sub-metrics' order of declaration; a kind no metric declares goes last.
    declared = planned_requests(settings, focus=1, passages=2, segments=1)
    rank = {kind: i for i, kind in enumerate(dict.fromkeys(r.kind for r in declared))}
    return {name: kinds[name] for name in sorted(kinds, key=lambda k: (rank.get(k, len(rank)), k))}


def exact_estimate(
    documents: Sequence[Mapping[str, Any]],
    chunkers: Sequence[Chunker],
    llm: ChatLLM,
    embedder: Any,
    settings: Any,
    *,
    chars_per_token: float = 4.0,
) -> Estimate:
    from hope.core.evaluator import HopeEvaluator
    from hope.pipeline.chunk_step import chunk_documents
    from hope.pipeline.score_step import score_pairs

    passages = chunk_documents(documents, chunkers)
    dry = DryRunLLM(llm, chars_per_token)
    settings, sampling_notes = full_draw(settings)
    quiet = settings.model_copy(update={"progress": False})
    evaluator = HopeEvaluator(dry, embedder, quiet)
    scored = asyncio.run(score_pairs(evaluator, documents, passages, progress=False))
    return Estimate(
        method="exact",
        documents=len(documents),
        pairs=len(scored),
        kinds=tally(dry.requests, chars_per_token, settings),
        notes=[
            "first attempts only; invalid answers and transport faults add retries",
            "requests after an uncached answer are sized from a synthetic answer",
            *sampling_notes,
        ],
    )


# --- analytic: from counts and mean lengths ----------------------------------------------------


def passage_chars(chunker: Chunker, measured: Mapping[str, float], chars_per_token: float) -> float:
    config = chunker.config
    size = float(config.get("chunk_size", 0) or 0)
    if config.get("_target_", "").endswith("SemanticChunker"):
        size *= chars_per_token  # semantic chunkers count tokens of the embedding model
    if chunker.name in measured and "chunk_overlap" not in config:
        return float(measured[chunker.name])
    if size <= 0:
        raise ValueError(f"chunker {chunker.name}: no chunk_size and no measured passage length")
    return size


def passages_per_document(chunker: Chunker, chars: float, measured, chars_per_token) -> int:
    size = passage_chars(chunker, measured, chars_per_token)
    overlap = float(chunker.config.get("chunk_overlap", 0) or 0)
    if chars <= size:
        return 1
    return math.ceil((chars - overlap) / (size - overlap))


def _template_chars(name: str, prompts_dir: str | None) -> int:
    prompt = load_prompt(name, prompts_dir)
    return len(prompt.system.strip()) + len(prompt.user.format_map(defaultdict(str)).strip())


def analytic_estimate(
    domain_docs: Mapping[str, tuple[int, float]],
    chunkers: Sequence[Chunker],
    settings: Any,
    *,
    max_tokens: int,
    measured: Mapping[str, float] | None = None,
    sentence_chars: float = 120.0,
    chars_per_token: float = 4.0,
) -> Estimate:
    """``domain_docs``: domain -> (documents, mean characters); the requests of each pair are
    those the sub-metrics declare (``planned_requests``), sized by mean lengths."""
    from hope.core.prompts.response_schemas import statements_model

    measured = measured or {}
    settings, sampling_notes = full_draw(settings)
    sentences_per_segment = settings.information_preservation.sentences_per_segment
    statement = max_output_chars(json_schema_of(statements_model(1))) - 20  # one bounded statement
    templates: dict[str, int] = {}
    kinds: dict[str, KindCount] = {}
    documents = pairs = 0
    for n_docs, chars in domain_docs.values():
        documents += n_docs
        sentences = max(1, math.floor(chars / sentence_chars))
        segments = information_preservation.segment_count(settings, sentences)
        segment_chars = min(chars, sentences_per_segment * sentence_chars)
        for index, chunker in enumerate(chunkers):
            pairs += n_docs
            n_passages = passages_per_document(chunker, chars, measured, chars_per_token)
            size = min(chars, passage_chars(chunker, measured, chars_per_token))
            focus = min(n_passages, settings.focus_passages or n_passages)
            for request in planned_requests(
                settings, focus=focus, passages=n_passages, segments=segments
            ):
                kind = kinds.setdefault(request.kind, KindCount())
                kind.requests += n_docs * request.count
                if request.per_document and index > 0:
                    continue  # the first chunking of the document sent it already
                if request.kind not in templates:
                    templates[request.kind] = _template_chars(request.kind, settings.prompts_dir)
                prompt_chars = (
                    templates[request.kind]
                    + request.passages * size
                    + request.segments * segment_chars
                    + request.statements * statement
                )
                unique = n_docs * request.unique
                kind.unique += unique
                kind.prompt_tokens += unique * math.ceil(prompt_chars / chars_per_token)
                kind.output_tokens += unique * output_token_bound(
                    request.response_model, max_tokens, chars_per_token
                )
    return Estimate(
        method="analytic",
        documents=documents,
        pairs=pairs,
        kinds=kinds,
        notes=[
            "no documents here: counts from corpus counts and estimate.mean_chars "
            f"(sentence {sentence_chars:g} chars); cache status unknown (counted as not cached)",
            "first attempts only; invalid answers and transport faults add retries",
            *sampling_notes,
        ],
    )


def measured_passage_chars(summary_path: Path) -> dict[str, float]:
    if not summary_path.is_file():
        return {}
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    return {name: s["mean_chars"] for name, s in summary.items() if s.get("mean_chars")}


def estimate_for_config(
    config: RunConfig, documents: Sequence[Mapping[str, Any]] | None, chunkers: Sequence[Chunker]
) -> Estimate:
    from hydra.utils import instantiate

    from hope.core.response_cache import ResponseCache
    from hope.models.factory import open_cache
    from hope.pipeline import REPO_ROOT

    settings = config.hope
    cpt = config.estimate.chars_per_token
    if documents is None:
        counts = config.corpus.counts
        means = config.estimate.mean_chars
        missing = sorted(set(counts) - set(means))
        if missing:
            raise ValueError(f"estimate.mean_chars lacks domains {missing}")
        return analytic_estimate(
            {d: (int(n), float(means[d])) for d, n in counts.items()},
            chunkers,
            settings,
            max_tokens=int(config.llm["max_tokens"]),
            measured=measured_passage_chars(REPO_ROOT / "data" / "chunks" / "summary.json"),
            sentence_chars=config.estimate.sentence_chars,
            chars_per_token=cpt,
        )
    llm = instantiate(config.llm, cache=open_cache(config.cache.path))
    notes = []
    embedder_cfg = dict(config.embedder)
    if embedder_cfg.get("backend") == "openai":
        # A remote embedder would bill the dry run; lexical vectors give the same counts, only the
        # retrieved passages (and so some cache lookups and token sizes) may differ.
        embedder_cfg = {"_target_": embedder_cfg["_target_"], "backend": "hashing"}
        notes.append(
            "remote embedder replaced by hashing: retrieval-dependent cache hits approximate"
        )
    # Embeddings of synthetic answers must not land in the real cache.
    embedder = instantiate(embedder_cfg, cache=ResponseCache(None))
    estimate = exact_estimate(documents, chunkers, llm, embedder, settings, chars_per_token=cpt)
    estimate.notes.extend(notes)
    return estimate
