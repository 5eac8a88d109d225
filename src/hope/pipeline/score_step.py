"""DVC stage ``hope``: HOPE and its sub-metrics for every (document, chunker) pair. This module is
the stage's work; ``hope.stages.score_stage`` is its ``main`` (arguments, the files it reads and
writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from itertools import groupby
from pathlib import Path
from typing import Any

from hope.core.concurrency import gather_bounded
from hope.core.evaluator import HopeEvaluator
from hope.core.io import (
    atomic_path,
    csv_text,
    jsonl_lines,
    without_run_timings,
    write_atomic,
    write_json_atomic,
)
from hope.core.model_interface import labelled_calls
from hope.core.result import METRICS, HopeResult
from hope.core.stage_records import check_documents, group_passages
from hope.pipeline.config_schema import ScoreConfig, validate_score_config

SCORE_COLUMNS = ["hope", *METRICS]

Scored = tuple[Mapping[str, Any], str, HopeResult]


async def score_pairs(
    evaluator: HopeEvaluator,
    documents: Sequence[Mapping[str, Any]],
    passages: Sequence[Mapping[str, Any]],
    *,
    parallel_pairs: int = 4,
    progress: bool = True,
    on_result: Callable[[Mapping[str, Any], str, HopeResult], Any] | None = None,
) -> list[Any]:
    """Score every pair of ``passages`` (records of any number of pairs), sorted by pair; see
    ``score_pair_stream``."""
    check_documents(documents)
    by_id = {d["doc_id"]: d for d in documents}
    pairs = group_passages(passages, set(by_id))
    return await score_pair_stream(
        evaluator,
        ((by_id[doc_id], chunker, pairs[doc_id, chunker]) for doc_id, chunker in sorted(pairs)),
        total=len(pairs),
        parallel_pairs=parallel_pairs,
        progress=progress,
        on_result=on_result,
    )


async def score_pair_stream(
    evaluator: HopeEvaluator,
    pairs: Iterable[tuple[Mapping[str, Any], str, Sequence[Mapping[str, Any]]]],
    *,
    total: int | None = None,
    parallel_pairs: int = 4,
    progress: bool = True,
    on_result: Callable[[Mapping[str, Any], str, HopeResult], Any] | None = None,
) -> list[Any]:
    """Score each ``(document, chunker, passage records)``; several pairs at once so the LLM's
    request queue never runs dry.

    ``pairs`` is read as pairs finish, so a generator that chunks each document when its turn
    comes keeps ``parallel_pairs`` pairs' passages in memory, not the corpus's
    (``bench/bench_scale.py``). ``on_result(document, chunker, result)``, when given, is called
    as each pair finishes and what it returns is kept instead of the pair's result: a caller
    that writes the evidence as it comes keeps a row per pair, not every pair's full result."""

    if evaluator.settings.sampling.mode == "sequential":
        return await _score_documents_in_lockstep(
            evaluator,
            pairs,
            parallel_documents=parallel_pairs,
            progress=progress,
            on_result=on_result,
        )

    async def one(pair: tuple[Mapping[str, Any], str, Sequence[Mapping[str, Any]]]) -> Any:
        document, chunker, records = pair
        result = await labelled_calls(
            evaluator.aevaluate(
                document["text"], [r["text"] for r in records], [r["passage_id"] for r in records]
            ),
            chunker=chunker,
            doc_id=document["doc_id"],
            domain=document.get("domain", ""),
        )
        if on_result is not None:
            return on_result(document, chunker, result)
        return document, chunker, result

    try:
        return await gather_bounded(
            one,
            pairs,
            limit=parallel_pairs,
            progress="hope: document x chunker" if progress else None,
            unit="pair",
            total=total,
        )
    finally:
        await evaluator.llm.aclose()


Pair = tuple[Mapping[str, Any], str, Sequence[Mapping[str, Any]]]


def pairs_by_document(pairs: Iterable[Pair]) -> Iterator[tuple[Mapping[str, Any], list[Pair]]]:
    """Consecutive pairs of one document, together (``score_pairs`` sorts them that way)."""
    for _, group in groupby(pairs, key=lambda pair: pair[0]["doc_id"]):
        members = list(group)
        yield members[0][0], members


async def _score_documents_in_lockstep(
    evaluator: HopeEvaluator,
    pairs: Iterable[Pair],
    *,
    parallel_documents: int,
    progress: bool,
    on_result: Callable[[Mapping[str, Any], str, HopeResult], Any] | None,
) -> list[Any]:
    """``sampling.mode: sequential``: the chunkings of each document are scored together, so that
    a chunking stops sampling once each of its comparisons is decided
    (``HopeEvaluator.aevaluate_chunkings``). Same return as ``score_pair_stream``."""

    async def one(group: tuple[Mapping[str, Any], list[Pair]]) -> list[Any]:
        document, members = group
        chunkings = {
            chunker: ([r["text"] for r in records], [r["passage_id"] for r in records])
            for _, chunker, records in members
        }
        results = await labelled_calls(
            evaluator.aevaluate_chunkings(document["text"], chunkings),
            doc_id=document["doc_id"],
            domain=document.get("domain", ""),
        )
        if on_result is not None:
            return [on_result(document, chunker, results[chunker]) for chunker in chunkings]
        return [(document, chunker, results[chunker]) for chunker in chunkings]

    try:
        nested = await gather_bounded(
            one,
            pairs_by_document(pairs),
            limit=parallel_documents,
            progress="hope: documents, chunkers in lockstep" if progress else None,
            unit="document",
        )
    finally:
        await evaluator.llm.aclose()
    return [kept for group in nested for kept in group]


def score_row(document: Mapping[str, Any], chunker: str, result: HopeResult) -> dict[str, Any]:
    row: dict[str, Any] = {
        "doc_id": document["doc_id"],
        "domain": document["domain"],
        "chunker": chunker,
        "n_passages": len(result.passages),
    }
    for name in SCORE_COLUMNS:
        value = getattr(result, name)
        row[name] = None if math.isnan(value) else value
    for name in METRICS:
        count = result.counts[name]
        row[f"{name}_scored"] = count.scored
        row[f"{name}_failed"] = count.failed
    return row


def summarise(scored: Sequence[Scored], llm_usage: Mapping[str, Any]) -> dict[str, Any]:
    failures: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    prompts: dict[str, Any] = {}
    for _, chunker, result in scored:
        for failure in result.failures:
            failures[failure.metric][chunker] += 1
        prompts.update(result.prompts)
    first = scored[0][2] if scored else None
    return {
        "pairs": len(scored),
        "usage": dict(llm_usage),
        "failures_by_metric_and_chunker": {m: dict(c) for m, c in failures.items()},
        "undefined_scores": {
            name: sum(1 for _, _, r in scored if math.isnan(getattr(r, name)))
            for name in SCORE_COLUMNS
        },
        "prompts": prompts,
        "settings": first.settings if first else None,
        "models": first.models if first else None,
    }


def pair_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """A pair's LLM usage as a DVC output may hold it: the calls its evaluation made (sent,
    answered from the cache, or shared with a concurrent pair's identical request) and its
    failed items. Which of two pairs sends a request both need, and so carries its tokens and
    retries, depends on which got there first; those counts stay in the run's totals
    (``summary.json``, deterministic on a cold cache) and in MLflow, not per pair."""
    llm = usage.get("llm") or {}
    kept: dict[str, Any] = {k: v for k, v in usage.items() if k != "llm"}
    kept["llm"] = {
        "calls": int(llm.get("requests", 0)) + int(llm.get("cache_hits", 0)),
        "failures": int(llm.get("failures", 0)),
    }
    return kept


class EvidenceStream:
    """``score_pairs``'s ``on_result`` that writes each pair's full result to ``evidence.jsonl``
    as the pair finishes, and keeps a slim result: scores, counts, failures, usage, prompts,
    settings and models, passages reduced to their ids, no segments. A run's memory then holds
    one full result per pair in flight, not one per pair scored. The lines go to a spool file in
    the system's temporary folder (``TMPDIR``), not beside the output, so that a killed run leaves
    nothing in the output folder; when the ``with`` block ends without an error the lines are
    copied to ``evidence.jsonl``, replaced atomically, sorted by (doc_id, chunker): pairs finish
    in whatever order the scheduler and the server's latencies give, and a DVC output must have
    the same bytes whatever that order was (issue #35). On an error the spool is removed."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._stack = ExitStack()
        self._handle: Any = None
        self._spool: Path | None = None
        # (doc_id, chunker) -> (offset, length) of its line in the spool: a few numbers a pair.
        self._lines: dict[tuple[str, str], tuple[int, int]] = {}

    def __enter__(self) -> EvidenceStream:
        fd, name = tempfile.mkstemp(prefix="hope-evidence-", suffix=".jsonl")
        self._spool = Path(name)
        self._handle = self._stack.enter_context(os.fdopen(fd, "wb"))
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        assert self._spool is not None
        try:
            self._stack.close()
            if exc_type is None:
                with atomic_path(self.path) as tmp:
                    self._write_sorted(tmp)
        finally:
            self._spool.unlink(missing_ok=True)

    def _write_sorted(self, target: Path) -> None:
        assert self._spool is not None
        with self._spool.open("rb") as spool, target.open("wb") as out:
            for key in sorted(self._lines):
                offset, length = self._lines[key]
                spool.seek(offset)
                out.write(spool.read(length))

    def __call__(self, document: Mapping[str, Any], chunker: str, result: HopeResult) -> Scored:
        key = (str(document["doc_id"]), chunker)
        if key in self._lines:
            raise ValueError(f"evidence: pair {key} scored twice")
        line = {"doc_id": document["doc_id"], "chunker": chunker, **result.to_dict()}
        line["usage"] = pair_usage(line.get("usage") or {})
        data = "".join(jsonl_lines([without_run_timings(line)])).encode("utf-8")
        self._lines[key] = (self._handle.tell(), len(data))
        self._handle.write(data)
        ids = [{"passage_id": p.get("passage_id")} for p in result.passages]
        return document, chunker, replace(result, passages=ids, segments=[])


def write_score_outputs(out_dir: Path, rows: Sequence[Mapping[str, Any]], summary: Any) -> None:
    """``scores.csv`` (``rows``) and ``summary.json``, each replaced atomically; the evidence is
    written pair by pair by an ``EvidenceStream``."""
    write_atomic(out_dir / "scores.csv", csv_text(rows))
    # Latencies and wall times go to the log and MLflow (record_score_stage), not to DVC outputs.
    write_json_atomic(out_dir / "summary.json", without_run_timings(summary))


def score_config(overrides: Sequence[str] = ()) -> ScoreConfig:
    """The packaged ``score`` config with Hydra ``overrides``, resolved and validated once: what
    ``hope score``, ``hope batch`` and the DVC ``hope`` stage (overrides from params.yaml ``hope:``,
    :meth:`HopeStageParams.score_overrides`) build their evaluator from."""
    from omegaconf import OmegaConf

    from hope.core.packaged_configs import compose_config

    composed = OmegaConf.to_container(compose_config(list(overrides)), resolve=True)
    return validate_score_config(composed)
