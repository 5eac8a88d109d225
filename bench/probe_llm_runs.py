"""The LLM writers in ``bench_probe.py`` (issue 32): their speed in the embedded server
(``--llm-questions``, ``--llm-gguf``, ``--llm-writer-only``) and their tau against the real
questions (``--llm-tau-corpora``), measured as the code writers' are (``probe_vs_real``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

import harness
from harness import REPO
from hope.labelled.benchmark import load_offline_chunkers
from hope.probe import ProbeSettings, measure_chunkings, probe_ranking
from probe_vs_real import (
    RealSide,
    compare,
    compared_measures,
    corpus_inputs,
    log,
    pooled,
    strip,
    targets_met,
    writer_entry,
)


class TimedModel:
    """A chat model that keeps each request's end time and answer (for per-request times and
    examples of what the filters rejected)."""

    def __init__(self, llm: Any):
        self.llm = llm
        self.identity = llm.identity
        self.calls: list[tuple[float, Any]] = []
        self.cached: list[tuple[float, bool]] = []

    async def structured(self, **request: Any) -> Any:
        try:
            response = await self.llm.structured(**request)
        except Exception:
            self.calls.append((time.perf_counter(), None))
            self.cached.append((time.perf_counter(), False))
            raise
        self.calls.append((time.perf_counter(), response.value))
        self.cached.append((time.perf_counter(), bool(response.cached)))
        return response


def llm_runs_of(args: argparse.Namespace) -> list[tuple[Any, ...]]:
    """(key, gguf, model, questions, repeats) of each LLM writer timing asked for."""
    runs = [("default", None, None, args.llm_questions, args.repeats)]
    if args.llm_gguf:
        runs.append((args.llm_model, args.llm_gguf, args.llm_model, args.llm_gguf_questions, 1))
    return runs


def section_key(kind: str, writer: str, model: str) -> str:
    """``<kind>[<writer>@<model>]``: one section per writer and model (the configured model name,
    not its file's), so that a run with another model adds a section instead of replacing the
    first model's figures."""
    return f"{kind}[{writer}@{model}]"


def llm_writer_only(args: argparse.Namespace, settings: ProbeSettings, bench_run: Any) -> int:
    """The LLM writer timings alone, added to the record at --output: a section per model."""
    from hope.core.packaged_configs import packaged_config

    for key, gguf, model, questions, repeats in llm_runs_of(args):
        if questions <= 0:
            continue
        entry = llm_timing(args, settings, questions, repeats, gguf, model)
        named = model or (gguf.stem if gguf else packaged_config("llm", "embedded").model)
        name = section_key("llm_writer", args.llm_writer, named)
        bench_run.merge_section(args.output, name, {key: entry})
        log(f"wrote {args.output} with the section {name}")
    return 0


def llm_timing(
    args: argparse.Namespace,
    settings: ProbeSettings,
    questions: int,
    repeats: int,
    gguf: Path | None,
    model: str | None,
) -> dict[str, Any]:
    """The LLM writer on ``questions`` strata of --llm-corpus, in the embedded server (its own
    model, or ``gguf``), no answer cache, one attempt per stratum, ``repeats`` times."""
    import asyncio

    from hydra.utils import instantiate

    from hope.core.io import read_text
    from hope.core.packaged_configs import packaged_config
    from hope.probe import LLM_WRITERS, write_probe_questions

    text = read_text(args.data / "corpora" / f"{args.llm_corpus}.md", "corpus")
    config = packaged_config("llm", "embedded")
    if gguf is not None:
        config.gguf_path = str(gguf)
        config.model = model or gguf.stem
    runs = []
    for _ in range(repeats):
        phase = time.perf_counter()
        try:
            llm = instantiate(config, cache=None)
            timed = TimedModel(llm)
            probe = write_probe_questions(
                text,
                LLM_WRITERS[args.llm_writer](timed),
                questions,
                seed=args.seed,
                attempts=1,
                shape=settings.shape,
            )
        except Exception as exc:  # an embedded model that cannot start here is a result too
            return {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"[:500]}
        elapsed = time.perf_counter() - phase
        asyncio.run(llm.aclose())
        ends = sorted(end for end, _ in timed.calls)
        first = ends[0] - phase if ends else elapsed
        runs.append((elapsed, first, [float(g) for g in np.diff(ends)], probe, timed))
    _, _, _, probe, timed = runs[0]
    # One slot serves one request at a time: the gaps between answers are the requests' own
    # times; the first answer also waits for the model to start.
    gaps = [gap for run in runs for gap in run[2]]
    drafts = [value for _, value in timed.calls]
    return {
        "status": "ok",
        "model": llm.identity,
        "writer": args.llm_writer,
        "corpus": args.llm_corpus,
        "requests": questions,
        "repeats": repeats,
        "seconds": harness.spread([run[0] for run in runs], digits=1),
        "first_answer_s": harness.spread([run[1] for run in runs], digits=1),
        "seconds_per_request": harness.spread(gaps, digits=2) if gaps else None,
        "seconds_for_200_strata": (round(200 * float(np.median(gaps)), 0) if gaps else None),
        **probe.summary(),
        "examples": [
            {"question": q.question, "references": [r.text for r in q.references]}
            for q in probe.questions[:3]
        ],
        "drafts": [None if d is None else d.model_dump() for d in drafts[:4]],
        "note": "one attempt per stratum, no answer cache; seconds include the model's start; "
        "seconds_per_request: the gaps between successive answers (one server slot), so without "
        "the start; seconds_for_200_strata: their median times 200; drafts: the model's first "
        "answers before the filters (in order of arrival)",
    }


def llm_writer_tau(args: argparse.Namespace, settings: ProbeSettings, bench_run: Any) -> int:
    """The LLM writer's tau against the real questions, as the code writers' (section
    ``llm_writer_tau[<writer>@<model>]`` of the record at --output, with its own provenance): the
    embedded server with its own model or --llm-gguf, --llm-tau-questions strata of each of
    --llm-tau-corpora, --llm-tau-attempts drafts per stratum at most. Its answers go to the
    project's cache, so a stopped run resumes without asking again."""
    from dataclasses import replace

    from hydra.utils import instantiate

    from hope.core.packaged_configs import compose_config, packaged_config
    from hope.models.factory import embedder_preset, open_cache
    from hope.probe import LLM_WRITERS

    measures = compared_measures(settings)
    cache = open_cache(compose_config([]).cache.path)
    embedder = embedder_preset(args.embedder)
    chunkers, not_run = load_offline_chunkers(args.chunkers.split(","), REPO / "conf" / "chunker")
    names = [c.name for c in chunkers]
    config = packaged_config("llm", "embedded")
    if args.llm_gguf:
        config.gguf_path = str(args.llm_gguf)
        config.model = args.llm_model or args.llm_gguf.stem
    llm = instantiate(config, cache=cache)
    timed = TimedModel(llm)
    writer = LLM_WRITERS[args.llm_writer](timed)
    probe_settings = replace(
        settings, n_questions=args.llm_tau_questions, attempts=args.llm_tau_attempts
    )
    section: dict[str, Any] = {
        "writer": args.llm_writer,
        "model": llm.identity,
        "embedder": embedder.identity,
        "questions": args.llm_tau_questions,
        "attempts": args.llm_tau_attempts,
        "chunkers": names,
        "chunkers_not_run": not_run,
        "note": "tau and pair agreement against the real questions as for the code writers "
        "(same real sides, resamples and seed); seconds: writing, filtering and measuring; "
        "requests: the writer's requests, requests_sent: those the model answered in this run "
        "(the others came from the cache of a stopped run), failed_answers: no valid answer",
        "corpora": {},
    }
    cells: dict[str, list[dict[str, Any]]] = {m: [] for m in measures}
    try:
        for corpus in [c for c in args.llm_tau_corpora.split(",") if c]:
            _, text, real_questions, chunkings, _ = corpus_inputs(args, corpus, chunkers, cache)
            real = measure_chunkings(text, real_questions, chunkings, embedder, settings)
            real_sides = {m: RealSide(real, names, m, args) for m in measures}
            before = len(timed.calls)
            phase = time.perf_counter()
            result = probe_ranking(text, chunkings, embedder, probe_settings, writer)
            seconds = time.perf_counter() - phase
            answers = timed.calls[before:]
            sent = sum(1 for _, cached in timed.cached[before:] if not cached)
            compared = {m: compare(result, real_sides[m], names, m, args) for m in measures}
            for m in measures:
                cells[m].append(compared[m])
            section["corpora"][corpus] = {
                **writer_entry(result, compared, measures),
                "seconds": round(seconds, 1),
                "requests": len(answers),
                "requests_sent": sent,
                "failed_answers": sum(1 for _, value in answers if value is None),
            }
            summary = ", ".join(f"{m} {compared[m]['tau']:+.2f}" for m in measures)
            log(f"{corpus}: {args.llm_writer}: {seconds:.0f} s; tau {summary}")
            section["pooled"] = {m: pooled(cs) for m, cs in cells.items()}
            section["pooled_targets"] = targets_met(section["pooled"], measures)
            name = section_key("llm_writer_tau", args.llm_writer, config.model)
            bench_run.merge_section(args.output, name, strip(section))
            log(f"wrote {args.output} with the section {name}")
    finally:
        import asyncio

        asyncio.run(llm.aclose())
    return 0
