"""Do probe questions rank chunkers like real labelled questions? (issue 32)

On each corpus of Chroma's general evaluation set (../shared/benchmarks/chroma-general-eval),
for the offline chunkers of the labelled benchmark and MiniLM retrieval:
  1. the labelled measures on the real questions (hope.probe.measure_chunkings, which is
     hope.labelled.evaluate_chunking at k and every budget);
  2. for each code writer, probe questions written from the corpus alone
     (hope.probe.probe_ranking: seeded, one per character stratum, gold shaped like Chroma's) and
     the same measures on them;
  3. per measure (recall@k, IoU@k, budget recall at each budget): Kendall tau between the probe's
     and the real means across chunkers, with a bootstrap interval (each replicate resamples the
     real questions and the probe questions, one draw shared by every chunker), and agreement on
     the chunker pairs whose real difference is significant (paired bootstrap over questions);
     beside them the passage-count baseline (more passages ranks higher) and HOPE's tau from
     bench/results/labelled.json where that record has it (budget 2,500 and k 5 only).
Beside tau, the noise ceiling of each real ranking: tau between the real means on each bootstrap
resample of the real questions and on all of them (median and interval), since a probe cannot be
expected to follow the real ranking more closely than the real questions follow themselves.
The LLM writer (hope.probe.LLMWriter, or with --llm-writer llm_sentences hope.probe.SentenceWriter,
in the embedded server: its own model, and with --llm-gguf another GGUF such as
Qwen2.5-Coder-0.5B) is run on a few strata of one corpus: seconds per request, what passed the
filters, examples and the model's first drafts.
With --llm-tau-corpora, only the LLM writer runs, on those corpora, for its tau against the real
questions as the code writers get theirs (the section llm_writer_tau[<writer>] of the record;
answers cached, so a stopped run resumes).
With --question-seeds, only the code writers run, once per question seed (every other setting as
in the main run): the probe's questions are one seeded draw, so the section question_seeds keeps,
per writer and measure, the median and range over seeds of the pooled tau and pair agreement and
of each corpus's tau, and the targets judged on the medians.
Pooled: the mean of the per-corpus tau (and of each replicate's); pair agreement summed over
corpora. Timing, each repeated --repeats times (median, min, max): the probe's own work per
corpus for the --timed-writers (writing and filtering, embedding its queries with the model and
no cache, ranking and measures, with the passages' vectors in memory), plus, on
--cold-timing-corpora, embedding every chunking's passages without any cache (the retrieval's
other half, the same for every writer); chunking excluded; each also scaled to 500 kB.

    python bench/bench_probe.py                                  # four corpora, every code writer
    python bench/bench_probe.py --corpora chatlogs --writers keyword
    python bench/bench_probe.py --question-seeds 0,1,2,3,4           # tau over question draws
    python bench/bench_probe.py --llm-tau-corpora chatlogs --llm-writer llm_sentences \
        --llm-gguf qwen0.5b.gguf --llm-model Qwen2.5-Coder-0.5B-Instruct --llm-tau-questions 100
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import harness
from harness import REPO

DEFAULT_DATA = REPO.parent / "shared" / "benchmarks" / "chroma-general-eval"
CORPORA = ("chatlogs", "state_of_the_union", "wikitexts", "pubmed")
# The labelled benchmark's offline chunkers (bench/results/labelled.json).
CHUNKERS = (
    "fixed_2000_o0",
    "fixed_2000_o500",
    "fixed_500_o0",
    "fixed_500_o125",
    "recursive_2000",
    "recursive_500",
    "semantic_minilm",
)
TARGETS = {"budget_recall": 0.8, "iou": 0.8, "recall": 0.6, "agreement": 0.9, "seconds": 120}
PER_500KB = 500_000
NOISE_CEILING = (
    "how well the real questions agree with themselves, per measure: the median and 95 % "
    "interval over bootstrap replicates (the same draws of the real questions as the tau "
    "interval) of Kendall tau between the real means on the resample and the real means on all "
    "the real questions; pooled: each replicate's mean over corpora. Context for tau, not a "
    "target: a probe cannot be expected to follow the real ranking more closely than a resample "
    "of the real questions does"
)
TIMING = (
    "each timing repeated --repeats times: median, min, max (harness.spread). probe_own: writing "
    "and filtering, embedding the queries with the model (no cache), retrieval and measures, "
    "with the passages' vectors in memory; passage_embedding_cold: every chunking's passages "
    "embedded by the model without any cache (on --cold-timing-corpora); total_cold: the sum "
    "of the two medians; chunking excluded. Only the --timed-writers are timed so; the others "
    "run once with the persistent embedding cache (probe_own_queries_cached)"
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hope.core.model_interface import Embedder  # noqa: E402
from hope.labelled import ChunkPassage  # noqa: E402
from hope.labelled.agreement import (  # noqa: E402
    kendall_tau,
    pairwise_agreement,
    percentile_interval,
)
from hope.labelled.benchmark import chunk_corpus, load_offline_chunkers  # noqa: E402
from hope.labelled.bootstrap import paired_difference, resample_indices  # noqa: E402
from hope.labelled.labelled_files import read_questions  # noqa: E402
from hope.probe import ProbeSettings, measure_chunkings, probe_ranking  # noqa: E402


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Chroma eval folder")
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--chunkers", default=",".join(CHUNKERS))
    parser.add_argument("--writers", default="cloze,keyword,mixed", help="code writers")
    parser.add_argument(
        "--questions", type=int, default=200, help="probe strata (at most one question each)"
    )
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--budgets", default="1000,2500,5000")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cold-timing-corpora",
        default="wikitexts",
        help="corpora on which every chunking's passages are embedded once more without any cache "
        "(the cold half of retrieval, the same for every writer; comma-separated, '' for none); "
        "each of the --repeats embeds all seven chunkings again, so pubmed (four times "
        "wikitexts' size) is left out by default",
    )
    parser.add_argument(
        "--llm-questions",
        type=int,
        default=6,
        help="time the LLM writer (the embedded model, no cache) on this many questions of "
        "--llm-corpus; 0 skips it (too few questions for a tau)",
    )
    parser.add_argument("--llm-corpus", default="chatlogs")
    parser.add_argument(
        "--llm-gguf",
        type=Path,
        help="also run the LLM writer with this GGUF file in the embedded server, once",
    )
    parser.add_argument("--llm-model", default=None, help="the --llm-gguf model's name")
    parser.add_argument(
        "--llm-writer",
        choices=["llm", "llm_sentences"],
        default="llm",
        help="the LLM writer timed: llm (excerpts copied verbatim, hope.probe.LLMWriter) or "
        "llm_sentences (sentences chosen by number, hope.probe.SentenceWriter)",
    )
    parser.add_argument(
        "--llm-gguf-questions", type=int, default=12, help="strata for the --llm-gguf model"
    )
    parser.add_argument(
        "--llm-writer-only",
        action="store_true",
        help="run only the LLM writer timings (--llm-writer, the embedded model and --llm-gguf) "
        "and add them to the record at --output as the section llm_writer[<writer>], with their "
        "own provenance; the record's other figures stay as they are",
    )
    parser.add_argument(
        "--llm-tau-corpora",
        default="",
        help="run only the LLM writer (--llm-writer; the embedded model, or --llm-gguf) on these "
        "corpora, for its tau against the real questions, and add it to the record at --output "
        "as the section llm_writer_tau[<writer>]; answers cached, so a stopped run resumes",
    )
    parser.add_argument("--llm-tau-questions", type=int, default=200, help="strata per corpus")
    parser.add_argument(
        "--llm-tau-attempts", type=int, default=2, help="drafts per stratum at most (requests)"
    )
    parser.add_argument(
        "--timed-writers",
        default="cloze",
        help="writers whose own work is timed (--repeats times, queries embedded by the model); "
        "the others run once with the persistent embedding cache, for their tau",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="repeats of every timing (the probe's own work, the cold passage embedding, the "
        "default LLM writer): median, min and max are recorded",
    )
    parser.add_argument(
        "--labelled-record", type=Path, default=REPO / "bench/results/labelled.json"
    )
    parser.add_argument(
        "--question-seeds",
        default="",
        help="only the code writers, once per seed (e.g. 0,1,2,3,4): the section question_seeds "
        "of the record at --output, the spread of tau and agreement over question draws",
    )
    parser.add_argument("--output", type=Path, default=REPO / "bench/results/probe.json")
    return parser.parse_args(argv)


def compared_measures(settings: ProbeSettings) -> dict[str, str]:
    """Measure name -> its family in the targets (budget_recall, iou, recall)."""
    k = settings.k
    return {f"recall@{k}": "recall", f"iou@{k}": "iou"} | {
        f"budget_recall@{b}": "budget_recall" for b in settings.budgets
    }


def replicate_means(per_question: list[list[float]], indices: np.ndarray) -> np.ndarray:
    """``(n_resamples, n_chunkers)`` means of each chunker's values over the resampled questions."""
    values = np.asarray(per_question, dtype=float)  # (chunkers, questions)
    return np.nanmean(values[:, indices], axis=2).T


class RealSide:
    """One measure on the real questions: per-question values, means, the resampled means (one
    draw of the real questions shared by every chunker) and the significantly different pairs."""

    def __init__(self, real: dict[str, Any], names: list[str], measure: str, args: Any):
        self.per_question = [real["chunkings"][n]["per_question"][measure] for n in names]
        self.means = [float(np.nanmean(v)) for v in self.per_question]
        indices = resample_indices(len(self.per_question[0]), args.resamples, args.seed + 1)
        self.replicates = replicate_means(self.per_question, indices)
        self.significant = [
            (i, j)
            for i in range(len(names))
            for j in range(i + 1, len(names))
            if paired_difference(
                self.per_question[i],
                self.per_question[j],
                n_resamples=args.resamples,
                seed=args.seed,
            )["significant"]
        ]

    def against(self, scores: list[float], replicates: Any) -> dict[str, Any]:
        """Tau of ``scores`` with the real means, its interval from ``replicates`` (one score
        vector per real replicate, or the same one for all), and significant-pair agreement."""
        taus = np.array(
            [kendall_tau(s, r) for s, r in zip(replicates, self.replicates, strict=True)],
            dtype=float,
        )
        low, high = percentile_interval(taus[np.isfinite(taus)], 0.95)
        return {
            "tau": kendall_tau(scores, self.means),
            "low": low,
            "high": high,
            **pairwise_agreement(scores, self.means, self.significant),
            "_replicates": taus,
        }

    def noise_ceiling(self) -> dict[str, Any]:
        """How well the real questions agree with themselves: tau between the real means on each
        resample of the real questions and the real means on all of them."""
        taus = np.array([kendall_tau(r, self.means) for r in self.replicates], dtype=float)
        return ceiling_summary(taus)


def ceiling_summary(taus: np.ndarray) -> dict[str, Any]:
    finite = taus[np.isfinite(taus)]
    if finite.size == 0:
        return {"median": None, "low": None, "high": None, "_replicates": taus}
    low, high = percentile_interval(finite, 0.95)
    return {"median": float(np.median(finite)), "low": low, "high": high, "_replicates": taus}


def compare(
    probe: dict[str, Any], real: RealSide, names: list[str], measure: str, args: Any
) -> dict[str, Any]:
    """Tau (with interval) and significant-pair agreement of the probe against the real ones."""
    probe_q = [probe["chunkings"][n]["per_question"][measure] for n in names]
    probe_means = [float(np.nanmean(v)) for v in probe_q]
    probe_idx = resample_indices(len(probe_q[0]), args.resamples, args.seed)
    return real.against(probe_means, replicate_means(probe_q, probe_idx)) | {
        "probe_means": dict(zip(names, probe_means, strict=True)),
        "real_means": dict(zip(names, real.means, strict=True)),
    }


def baseline(counts: list[float], real: RealSide) -> dict[str, Any]:
    return real.against(counts, [counts] * len(real.replicates))


def hope_taus(path: Path, corpus: str, k: int) -> dict[str, Any]:
    """HOPE's tau from the labelled record (budget 2,500 and k 5 there), keyed like ours."""
    if not path.is_file():
        return {}
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get("settings", {}).get("k") != k:
        return {}
    budget = record.get("settings", {}).get("budget_chars")
    validity = record.get("corpora", {}).get(corpus, {}).get("validity", {})
    keys = {"budget_recall": f"budget_recall@{budget}", "recall": f"recall@{k}", "iou": f"iou@{k}"}
    found = {}
    for key, ours in keys.items():
        cell = validity.get(key, {}).get("scores", {}).get("hope[paper]")
        if cell is not None:
            found[ours] = {name: cell.get(name) for name in ("tau", "low", "high", "agreement")}
    return found


def pooled(cells: list[dict[str, Any]]) -> dict[str, Any]:
    finite = [c for c in cells if c["tau"] is not None and math.isfinite(c["tau"])]
    if not finite:
        return {"tau": None}
    stacked = np.nanmean(np.stack([c["_replicates"] for c in finite]), axis=0)
    low, high = percentile_interval(stacked[np.isfinite(stacked)], 0.95)
    agreeing = sum(c["agreeing"] for c in cells)
    pairs = sum(c["pairs"] for c in cells)
    return {
        "tau": float(np.mean([c["tau"] for c in finite])),
        "low": low,
        "high": high,
        "agreement": agreeing / pairs if pairs else None,
        "agreeing": agreeing,
        "pairs": pairs,
        "corpora": len(finite),
    }


def strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def targets_met(cells: dict[str, dict[str, Any]], measures: dict[str, str]) -> dict[str, Any]:
    """Per measure: whether tau and pair agreement meet the issue's targets."""
    verdict = {}
    for measure, family in measures.items():
        cell = cells[measure]
        tau_ok = cell.get("tau") is not None and cell["tau"] >= TARGETS[family]
        agree = cell.get("agreement")
        verdict[measure] = {
            "tau_target": TARGETS[family],
            "tau_met": bool(tau_ok),
            "agreement_met": agree is None or agree >= TARGETS["agreement"],
        }
    return verdict


def writer_entry(
    result: dict[str, Any], compared: dict[str, Any], measures: dict[str, str]
) -> dict[str, Any]:
    """What a writer's record keeps on one corpus: the probe's counts and filter outcomes, three
    example questions, the comparison with the real questions and the targets met."""
    return {
        "probe": {k: v for k, v in result["probe"].items() if k != "questions"},
        "examples": [
            {"question": q["question"], "references": [r["text"] for r in q["references"]]}
            for q in result["probe"]["questions"][:3]
        ],
        "compared": compared,
        "targets": targets_met(compared, measures),
    }


def corpus_inputs(
    args: argparse.Namespace, corpus: str, chunkers: list[Any], cache: Any
) -> tuple[Path, str, list[Any], dict[str, list[ChunkPassage]], float]:
    """A corpus of the set: its path, text, real questions, every chunking's passages and the
    seconds the chunking took."""
    from hope.core.io import read_text

    path = args.data / "corpora" / f"{corpus}.md"
    text = read_text(path, "corpus")
    real_questions, _ = read_questions(args.data / "questions.jsonl", text, corpus)
    phase = time.perf_counter()
    chunkings = {}
    for chunker in chunkers:
        passages = chunk_corpus(chunker, corpus, text, cache)
        chunkings[chunker.name] = [ChunkPassage(p["text"], p["start"], p["end"]) for p in passages]
    return path, text, real_questions, chunkings, round(time.perf_counter() - phase, 1)


def llm_writer_tau(args: argparse.Namespace, settings: ProbeSettings, bench_run: Any) -> int:
    """The LLM writer's tau against the real questions, as the code writers' (section
    ``llm_writer_tau[<writer>]`` of the record at --output, with its own provenance): the
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
            bench_run.merge_section(
                args.output, f"llm_writer_tau[{args.llm_writer}]", strip(section)
            )
            log(f"wrote {args.output} with the section llm_writer_tau[{args.llm_writer}]")
    finally:
        import asyncio

        asyncio.run(llm.aclose())
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.repeats < 1:
        raise SystemExit("--repeats must be at least 1")
    bench_run = harness.start(None if argv is None else [sys.argv[0], *argv])
    started = time.perf_counter()
    from hope.core.io import file_sha256
    from hope.models.embeddings import CachingEmbedder

    settings = ProbeSettings(
        k=args.k,
        budgets=tuple(int(b) for b in args.budgets.split(",")),
        n_questions=args.questions,
        seed=args.seed,
        n_resamples=args.resamples,
    )
    if args.llm_writer_only:
        return llm_writer_only(args, settings, bench_run)
    if args.llm_tau_corpora:
        return llm_writer_tau(args, settings, bench_run)
    if args.question_seeds:
        return question_seed_spread(args, settings, bench_run)
    measures, writers, cache, embedder, chunkers, not_run = code_writer_setup(args, settings)
    names = [c.name for c in chunkers]
    report: dict[str, Any] = {
        "benchmark": "probe questions against real labelled questions (issue 32)",
        "settings": settings.to_dict()
        | {
            "embedder": embedder.identity,
            "writers": writers,
            "questions_sha256": file_sha256(args.data / "questions.jsonl"),
            "data_folder": str(args.data),
            "tau_interval": "bootstrap: real and probe questions resampled, one draw per side "
            "shared by every chunker",
            "pair_agreement": "share of the chunker pairs whose real difference is significant "
            "(paired bootstrap over real questions) that the probe's means order alike",
            "pooled": "mean of the per-corpus tau (and of each replicate's); pairs summed",
            "passage_count": "baseline: more passages ranks higher",
            "noise_ceiling": NOISE_CEILING,
            "timing": TIMING,
            "repeats": args.repeats,
        },
        "targets": TARGETS,
        "chunkers": names,
        "chunkers_not_run": not_run,
        "corpora": {},
    }
    cells: dict[str, dict[str, list[dict[str, Any]]]] = {
        w: {m: [] for m in measures} for w in [*writers, "passage_count", "noise_ceiling"]
    }
    timings: dict[str, float] = {}
    for corpus in [c for c in args.corpora.split(",") if c]:
        path, text, real_questions, chunkings, seconds = corpus_inputs(
            args, corpus, chunkers, cache
        )
        timings[f"chunking:{corpus}"] = seconds
        entry: dict[str, Any] = {
            "sha256": file_sha256(path),
            "n_chars": len(text),
            "n_real_questions": len(real_questions),
            "n_passages": {n: len(p) for n, p in chunkings.items()},
            "writers": {},
        }
        cold = None
        if corpus in args.cold_timing_corpora.split(","):
            runs = []
            for _ in range(args.repeats):
                fresh = CachingEmbedder(embedder.inner)
                phase = time.perf_counter()
                for passages in chunkings.values():
                    fresh.embed([p.text for p in passages])
                runs.append(time.perf_counter() - phase)
            cold = harness.spread(runs, digits=2)
            log(f"{corpus}: passages embedded without cache in {cold['median']} s (median)")
        entry["passage_embedding_cold_s"] = cold
        log(f"{corpus}: real questions ({len(real_questions)})")
        real = measure_chunkings(text, real_questions, chunkings, embedder, settings)
        real_sides = {m: RealSide(real, names, m, args) for m in measures}
        entry["real"] = {
            m: {n: real["chunkings"][n]["measures"][m]["mean"] for n in names} for m in measures
        }
        entry["noise_ceiling"] = {m: side.noise_ceiling() for m, side in real_sides.items()}
        for m in measures:
            cells["noise_ceiling"][m].append(entry["noise_ceiling"][m])
        # The probe's own work is timed with the passages' vectors in memory and its queries
        # embedded by the model every time (no cache), so each repeat does the same work.
        warm = WarmPassages(embedder, chunkings)
        for writer in writers:
            timed = writer in args.timed_writers.split(",")
            results = []
            for _ in range(args.repeats if timed else 1):
                phase = time.perf_counter()
                result = probe_ranking(
                    text, chunkings, warm if timed else embedder, settings, writer
                )
                results.append((time.perf_counter() - phase, result))
            result = results[0][1]
            compared = {m: compare(result, real_sides[m], names, m, args) for m in measures}
            for m in measures:
                cells[writer][m].append(compared[m])
            entry["writers"][writer] = {
                **writer_entry(result, compared, measures),
                "timing_s": (
                    own_timing(results, cold, len(text))
                    if timed
                    else {"probe_own_queries_cached": round(results[0][0], 2)}
                ),
            }
            summary = ", ".join(f"{m} {compared[m]['tau']:+.2f}" for m in measures)
            log(f"{corpus}: {writer}: {results[0][0]:.1f} s; tau {summary}")
        counts = [float(len(chunkings[n])) for n in names]
        entry["passage_count"] = {m: baseline(counts, real_sides[m]) for m in measures}
        for m in measures:
            cells["passage_count"][m].append(entry["passage_count"][m])
        entry["hope"] = hope_taus(args.labelled_record, corpus, args.k)
        report["corpora"][corpus] = entry
        report["pooled"] = {
            w: {m: pooled(cs) for m, cs in by_measure.items()}
            for w, by_measure in cells.items()
            if w != "noise_ceiling"
        }
        report["pooled_noise_ceiling"] = {
            m: pooled_ceiling(cs) for m, cs in cells["noise_ceiling"].items()
        }
        report["pooled_targets"] = {w: targets_met(report["pooled"][w], measures) for w in writers}
        report["timings_s"] = timings
        report["wall_time_s"] = round(time.perf_counter() - started, 1)
        bench_run.write_record(args.output, strip(report))
        log(f"wrote {args.output}")
    for key, gguf, model, questions, repeats in llm_runs_of(args):
        if questions <= 0:
            continue
        report.setdefault("llm_writer", {})[key] = llm_timing(
            args, settings, questions, repeats, gguf, model
        )
        report["wall_time_s"] = round(time.perf_counter() - started, 1)
        bench_run.write_record(args.output, strip(report))
        log(f"wrote {args.output} with the LLM writer ({key})")
    return 0


class WarmPassages(Embedder):
    """The chunkings' passages from vectors held in memory; every other text (a query) embedded
    by the model on each call, with no cache."""

    def __init__(self, embedder: Any, chunkings: dict[str, list[ChunkPassage]]):
        self.identity = embedder.identity
        self.inner = embedder.inner
        texts = list(dict.fromkeys(p.text for ps in chunkings.values() for p in ps))
        self.known = dict(zip(texts, embedder.embed(texts), strict=True))

    def embed(self, texts):
        missing = list(dict.fromkeys(t for t in texts if t not in self.known))
        computed = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        return np.stack([self.known[t] if t in self.known else computed[t] for t in texts])


def own_timing(
    results: list[tuple[float, dict[str, Any]]], cold: dict[str, Any] | None, n_chars: int
) -> dict[str, Any]:
    """Median and spread of the repeats of the probe's own work, per part, and scaled to 500 kB
    (medians); with the cold passage embedding where it was measured (the sum of the medians)."""
    own = harness.spread([seconds for seconds, _ in results], digits=2)
    parts = {
        part: harness.spread([r["timings_s"][part] for _, r in results], digits=3)
        for part in results[0][1]["timings_s"]
    }
    total = None if cold is None else own["median"] + cold["median"]
    return {
        "probe_own": own,
        "probe_own_per_500kB": round(own["median"] * PER_500KB / n_chars, 2),
        **parts,
        "passage_embedding_cold": cold,
        "total_cold": None if total is None else round(total, 2),
        "total_cold_per_500kB": (None if total is None else round(total * PER_500KB / n_chars, 2)),
    }


def pooled_ceiling(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """The noise ceiling pooled like tau: each replicate's mean over corpora."""
    stacked = np.stack([c["_replicates"] for c in cells])
    with np.errstate(all="ignore"):
        return ceiling_summary(np.nanmean(stacked, axis=0)) | {"corpora": len(cells)}


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


def code_writer_setup(args: argparse.Namespace, settings: ProbeSettings) -> tuple[Any, ...]:
    """What a code-writer run needs: the measures compared, the writers, the persistent cache,
    the embedder, and the offline chunkers (with those not run and why)."""
    from hope.core.packaged_configs import compose_config
    from hope.models.factory import embedder_preset, open_cache

    measures = compared_measures(settings)
    writers = [w for w in args.writers.split(",") if w]
    cache = open_cache(compose_config([]).cache.path)
    embedder = embedder_preset(args.embedder)
    chunkers, not_run = load_offline_chunkers(args.chunkers.split(","), REPO / "conf" / "chunker")
    return measures, writers, cache, embedder, chunkers, not_run


def over_seeds(
    found: dict[int, dict[str, dict[str, Any]]], measures: dict[str, str]
) -> dict[str, Any]:
    """One writer's comparisons per question seed (seed -> corpus -> measure -> ``compare``'s
    cell) as the spread over seeds of the pooled tau and agreement and of each corpus's tau,
    with the targets judged on the medians."""
    out: dict[str, Any] = {}
    for measure, family in measures.items():
        per_seed = {
            seed: pooled(list(cells[measure] for cells in corpora.values()))
            for seed, corpora in found.items()
        }
        taus = [c["tau"] for c in per_seed.values() if c["tau"] is not None]
        agreements = [c["agreement"] for c in per_seed.values() if c.get("agreement") is not None]
        corpora = sorted({corpus for by_corpus in found.values() for corpus in by_corpus})
        cell: dict[str, Any] = {
            "pooled_tau": harness.spread(taus) if taus else None,
            "pooled_agreement": harness.spread(agreements) if agreements else None,
            "corpus_tau": {
                corpus: harness.spread(
                    [
                        found[seed][corpus][measure]["tau"]
                        for seed in found
                        if found[seed][corpus][measure]["tau"] is not None
                    ]
                )
                for corpus in corpora
            },
        }
        cell["tau_met"] = bool(taus) and cell["pooled_tau"]["median"] >= TARGETS[family]
        cell["agreement_met"] = (
            not agreements or cell["pooled_agreement"]["median"] >= TARGETS["agreement"]
        )
        out[measure] = cell
    return out


def question_seed_spread(args: argparse.Namespace, settings: ProbeSettings, bench_run: Any) -> int:
    """The code writers' tau and agreement against the real questions for each question seed
    (the section ``question_seeds`` of the record at --output, with its own provenance)."""
    import dataclasses

    seeds = [int(s) for s in args.question_seeds.split(",") if s.strip()]
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"--question-seeds: a seed given twice in {args.question_seeds!r}")
    measures, writers, cache, embedder, chunkers, not_run = code_writer_setup(args, settings)
    names = [c.name for c in chunkers]
    found: dict[str, dict[int, dict[str, dict[str, Any]]]] = {
        w: {s: {} for s in seeds} for w in writers
    }
    corpora = [c for c in args.corpora.split(",") if c]
    for corpus in corpora:
        _path, text, real_questions, chunkings, _seconds = corpus_inputs(
            args, corpus, chunkers, cache
        )
        real = measure_chunkings(text, real_questions, chunkings, embedder, settings)
        real_sides = {m: RealSide(real, names, m, args) for m in measures}
        for writer in writers:
            for seed in seeds:
                result = probe_ranking(
                    text, chunkings, embedder, dataclasses.replace(settings, seed=seed), writer
                )
                found[writer][seed][corpus] = {
                    m: compare(result, real_sides[m], names, m, args) for m in measures
                }
                summary = ", ".join(
                    f"{m} {found[writer][seed][corpus][m]['tau']:+.2f}" for m in measures
                )
                log(f"{corpus}: {writer}, question seed {seed}: tau {summary}")
    section = {
        "seeds": seeds,
        "corpora": corpora,
        "chunkers": names,
        "chunkers_not_run": not_run,
        "settings": settings.to_dict() | {"embedder": embedder.identity},
        "note": "tau and agreement as in the main run, once per question seed; pooled per seed "
        "as there (mean tau over corpora, pairs summed), then the spread over seeds",
        "writers": {w: over_seeds(found[w], measures) for w in writers},
    }
    bench_run.merge_section(args.output, "question_seeds", strip(section))
    log(f"wrote {args.output} with the section question_seeds")
    return 0


def llm_runs_of(args: argparse.Namespace) -> list[tuple[Any, ...]]:
    """(key, gguf, model, questions, repeats) of each LLM writer timing asked for."""
    runs = [("default", None, None, args.llm_questions, args.repeats)]
    if args.llm_gguf:
        runs.append((args.llm_model, args.llm_gguf, args.llm_model, args.llm_gguf_questions, 1))
    return runs


def llm_writer_only(args: argparse.Namespace, settings: ProbeSettings, bench_run: Any) -> int:
    """The LLM writer timings alone, added to the record at --output as one section."""
    entries = {
        key: llm_timing(args, settings, questions, repeats, gguf, model)
        for key, gguf, model, questions, repeats in llm_runs_of(args)
        if questions > 0
    }
    bench_run.merge_section(args.output, f"llm_writer[{args.llm_writer}]", entries)
    log(f"wrote {args.output} with the section llm_writer[{args.llm_writer}]")
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


if __name__ == "__main__":
    sys.exit(main())
