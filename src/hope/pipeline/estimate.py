"""Cost before spending: the LLM calls and tokens an experiment needs, and how many are cached.

Two methods:

* ``exact`` (the documents are at hand): the real evaluator runs over every (document, chunker)
  pair against ``DryRunLLM``, which answers from the response cache where it can and otherwise
  records the request and returns a synthetic schema-valid answer without contacting anything.
  The requests are therefore exactly the engine's first attempts (retries excluded), and every
  request whose inputs are cached is checked against the cache. Requests that depend on an
  uncached answer (the answers to generated questions, the choice after a new quadruple) are
  counted and sized from the synthetic answer, so their token counts are rough.
* ``analytic`` (no documents, e.g. the paper corpus not downloaded): per domain, the corpus
  group's document count and ``estimate.mean_chars``; per chunker, passages from its size and
  overlap (fixed-size, exact arithmetic), else its measured mean passage length in
  ``data/chunks/summary.json``, else its nominal size; windows of ``sentences_per_segment``
  sentences from ``estimate.sentence_chars``. Nothing can be looked up in the cache.

Tokens: prompt = characters of the rendered messages / ``chars_per_token``; output = the most the
response schema allows (array lengths and string bounds) / ``chars_per_token``, capped at
``llm.max_tokens``. Both are bounds for budgeting, not predictions of the bill.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from pydantic import BaseModel, ValidationError

from hope.chunking.registry import Chunker
from hope.models.llm import (
    CACHE_NAMESPACE,
    ChatLLM,
    LLMCallError,
    StructuredResponse,
    json_schema_of,
)
from hope.prompting import load_prompt

KINDS = (
    "concept_statements",
    "qa_pairs",
    "qa_critic",
    "question_generation",
    "answer_question",
    "quadruple_generation",
    "truth_choice",
)


def max_output_chars(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> int:
    """The longest JSON text an answer valid under ``schema`` can be (unbounded strings: 200)."""
    root = root or schema
    if "$ref" in schema:
        return max_output_chars(root["$defs"][schema["$ref"].split("/")[-1]], root)
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return 2 + sum(len(k) + 4 + max_output_chars(v, root) for k, v in props.items())
    if kind == "array":
        items = int(schema.get("maxItems", schema.get("minItems", 1)))
        return 2 + items * (max_output_chars(schema.get("items", {}), root) + 2)
    if kind == "string":
        return int(schema.get("maxLength", 200)) + 2
    if kind == "boolean":
        return 5
    return 20


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
            "totals": {
                n: self.total(n)
                for n in (
                    "requests",
                    "unique",
                    "cached",
                    "to_send",
                    "prompt_tokens",
                    "output_tokens",
                )
            },
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
        values = (k.requests, k.unique, k.cached, k.to_send, k.prompt_tokens, k.output_tokens)
        lines.append(f"{name:<22}" + "".join(f"{v:>12,}" for v in values))
    totals = ("requests", "unique", "cached", "to_send", "prompt_tokens", "output_tokens")
    lines.append(f"{'total':<22}" + "".join(f"{estimate.total(t):>12,}" for t in totals))
    lines += [f"note: {n}" for n in estimate.notes]
    return "\n".join(lines)


# --- exact: the evaluator against a recording LLM ----------------------------------------------


@dataclass
class _Request:
    kind: str
    key: str
    cached: bool
    prompt_chars: int
    output_tokens: int


class DryRunLLM(ChatLLM):
    """Answers from the cache or with a synthetic answer; never sends a request."""

    def __init__(self, real: ChatLLM, chars_per_token: float = 4.0):
        super().__init__(real.settings, identity=real.identity, cache=real._cache, client=object())
        self.chars_per_token = chars_per_token
        self.requests: list[_Request] = []

    async def structured(
        self,
        *,
        messages: Sequence[dict[str, str]],
        response_model: type[BaseModel],
        schema_name: str,
        prompt_id: str,
        temperature: float,
        seed: int | None,
        max_tokens: int | None = None,
        invalid_retry_temperatures: Sequence[float] | None = None,
        validate: Any | None = None,
    ) -> StructuredResponse:
        key = self.cache_key(
            messages=messages,
            response_model=response_model,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            prompt_id=prompt_id,
        )
        hit = self._cache.get_json(CACHE_NAMESPACE, key) if self._cache is not None else None
        value = None
        if hit is not None and "error" in hit:
            self._record(schema_name, key, True, messages, response_model, max_tokens)
            raise LLMCallError(hit["error"], attempts=0)  # the real run fails it the same way
        if hit is not None:
            try:
                value = response_model.model_validate_json(hit["content"])
                if validate is not None:
                    validate(value)
            except (ValidationError, ValueError):
                value = None  # a stale entry: the real run asks again
        self._record(schema_name, key, value is not None, messages, response_model, max_tokens)
        if value is not None:
            return StructuredResponse(value, hit["content"], True, 0, seed, temperature)
        value, raw = _synthetic(response_model, messages, seed, validate)
        return StructuredResponse(value, raw, False, 1, seed, temperature)

    def _record(self, kind, key, cached, messages, response_model, max_tokens) -> None:
        cap = max_tokens or self.settings.max_tokens
        out = math.ceil(max_output_chars(json_schema_of(response_model)) / self.chars_per_token)
        chars = sum(len(m["content"]) for m in messages)
        self.requests.append(_Request(kind, key, cached, chars, min(cap, out)))


def _synthetic(response_model, messages, seed, validate) -> tuple[BaseModel, str]:
    from hope.testing import schema_instance

    schema = json_schema_of(response_model)
    words = sorted({w for m in messages for w in m["content"].split() if w.isalpha()}) or ["x"]
    for attempt in range(20):
        rng = random.Random(f"{seed}:{attempt}")
        raw = json.dumps(schema_instance(schema, rng, words))
        try:
            value = response_model.model_validate_json(raw)
            if validate is not None:
                validate(value)
            return value, raw
        except (ValidationError, ValueError):
            continue
    raise LLMCallError("dry run: no synthetic answer passes validation", attempts=0)


def tally(requests: Sequence[_Request], chars_per_token: float) -> dict[str, KindCount]:
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
    return {name: kinds[name] for name in sorted(kinds, key=_kind_order)}


def _kind_order(name: str) -> tuple[int, str]:
    return (KINDS.index(name) if name in KINDS else len(KINDS), name)


def exact_estimate(
    documents: Sequence[Mapping[str, Any]],
    chunkers: Sequence[Chunker],
    llm: ChatLLM,
    embedder: Any,
    settings: Any,
    *,
    chars_per_token: float = 4.0,
) -> Estimate:
    from hope.evaluate import HopeEvaluator
    from hope.stages.chunk import chunk_documents
    from hope.stages.score import score_pairs

    passages = chunk_documents(documents, chunkers)
    dry = DryRunLLM(llm, chars_per_token)
    quiet = settings.model_copy(update={"progress": False})
    evaluator = HopeEvaluator(dry, embedder, quiet)
    scored = asyncio.run(score_pairs(evaluator, documents, passages, progress=False))
    return Estimate(
        method="exact",
        documents=len(documents),
        pairs=len(scored),
        kinds=tally(dry.requests, chars_per_token),
        notes=[
            "first attempts only; invalid answers and transport faults add retries",
            "requests after an uncached answer are sized from a synthetic answer",
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


def segments_per_document(chars: float, settings: Any, sentence_chars: float) -> int:
    ip = settings.information_preservation
    sentences = max(1, math.floor(chars / sentence_chars))
    windows = max(1, sentences - min(ip.sentences_per_segment, sentences) + 1)
    return ip.n_segments if ip.replace else min(ip.n_segments, windows)


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
    """``domain_docs``: domain -> (documents, mean characters)."""
    from hope.prompts.schemas import (
        AnswerResponse,
        ChoiceResponse,
        QuadrupleResponse,
        critic_model,
        qa_pairs_model,
        questions_model,
        statements_model,
    )

    measured = measured or {}
    cu, si, ip = (
        settings.concept_unity,
        settings.semantic_independence,
        settings.information_preservation,
    )
    schemas = {
        "concept_statements": statements_model(cu.n_items),
        "qa_pairs": qa_pairs_model(cu.n_items),
        "qa_critic": critic_model(cu.n_items),
        "question_generation": questions_model(si.n_questions),
        "answer_question": AnswerResponse,
        "quadruple_generation": QuadrupleResponse,
        "truth_choice": ChoiceResponse,
    }
    out_tokens = {
        k: min(max_tokens, math.ceil(max_output_chars(json_schema_of(m)) / chars_per_token))
        for k, m in schemas.items()
    }
    template = {k: _template_chars(k, settings.prompts_dir) for k in schemas}
    statement = max_output_chars(json_schema_of(statements_model(1))) - 20  # one bounded statement
    kinds: dict[str, KindCount] = {k: KindCount() for k in KINDS}

    def add(kind: str, n: float, unique: float, prompt_chars: float) -> None:
        k = kinds[kind]
        k.requests += round(n)
        k.unique += round(unique)
        k.prompt_tokens += round(unique * math.ceil(prompt_chars / chars_per_token))
        k.output_tokens += round(unique * out_tokens[kind])

    documents = pairs = 0
    for n_docs, chars in domain_docs.values():
        documents += n_docs
        segments = segments_per_document(chars, settings, sentence_chars)
        segment_chars = min(chars, ip.sentences_per_segment * sentence_chars)
        add(
            "quadruple_generation",
            0,
            n_docs * segments,
            template["quadruple_generation"] + segment_chars,
        )
        for chunker in chunkers:
            pairs += n_docs
            p = passages_per_document(chunker, chars, measured, chars_per_token)
            size = min(chars, passage_chars(chunker, measured, chars_per_token))
            focus = p if settings.focus_passages is None else min(p, settings.focus_passages)
            per = n_docs * focus
            if cu.method == "statements":
                add("concept_statements", per, per, template["concept_statements"] + size)
            else:
                add("qa_pairs", per, per, template["qa_pairs"] + size)
                if cu.critic:
                    pairs_chars = cu.n_items * 2 * statement
                    add("qa_critic", per, per, template["qa_critic"] + size + pairs_chars)
            add("question_generation", per, per, template["question_generation"] + size)
            answers = per * si.n_questions
            neighbours = min(si.top_k, p - 1)
            add("answer_question", answers, answers, template["answer_question"] + size + statement)
            # With one passage the with-context request is the alone request: sent once, not twice.
            with_context = answers if neighbours > 0 else 0
            add(
                "answer_question",
                answers,
                with_context,
                template["answer_question"] + (1 + neighbours) * size + statement,
            )
            kinds["quadruple_generation"].requests += n_docs * segments
            retrieved = min(ip.top_k, p)
            add(
                "truth_choice",
                n_docs * segments,
                n_docs * segments,
                template["truth_choice"] + retrieved * size + 4 * statement,
            )
    return Estimate(
        method="analytic",
        documents=documents,
        pairs=pairs,
        kinds={k: v for k, v in kinds.items() if v.requests or v.unique},
        notes=[
            "no documents here: counts from corpus counts and estimate.mean_chars "
            f"(sentence {sentence_chars:g} chars); cache status unknown (counted as not cached)",
            "first attempts only; invalid answers and transport faults add retries",
        ],
    )


def measured_passage_chars(summary_path: Path) -> dict[str, float]:
    if not summary_path.is_file():
        return {}
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    return {name: s["mean_chars"] for name, s in summary.items() if s.get("mean_chars")}


def estimate_for_config(
    cfg: DictConfig, documents: Sequence[Mapping[str, Any]] | None, chunkers: Sequence[Chunker]
) -> Estimate:
    from hydra.utils import instantiate

    from hope.cache import ResponseCache
    from hope.models.factory import open_cache
    from hope.pipeline import REPO_ROOT
    from hope.settings import HopeSettings

    settings = HopeSettings(**OmegaConf.to_container(cfg.hope, resolve=True))
    cpt = float(cfg.estimate.chars_per_token)
    if documents is None:
        counts = OmegaConf.to_container(cfg.corpus.counts, resolve=True)
        means = OmegaConf.to_container(cfg.estimate.mean_chars, resolve=True)
        missing = sorted(set(counts) - set(means))
        if missing:
            raise ValueError(f"estimate.mean_chars lacks domains {missing}")
        return analytic_estimate(
            {d: (int(n), float(means[d])) for d, n in counts.items()},
            chunkers,
            settings,
            max_tokens=int(cfg.llm.max_tokens),
            measured=measured_passage_chars(REPO_ROOT / "data" / "chunks" / "summary.json"),
            sentence_chars=float(cfg.estimate.sentence_chars),
            chars_per_token=cpt,
        )
    llm = instantiate(cfg.llm, cache=open_cache(cfg.cache.path))
    notes = []
    embedder_cfg = OmegaConf.to_container(cfg.embedder, resolve=True)
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
