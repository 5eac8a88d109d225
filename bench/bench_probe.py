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
The LLM writer (the embedded model, hope.probe.LLMWriter) is timed on a few questions of one
corpus (--llm-questions): its seconds per question, what passed the filters, examples.
Pooled: the mean of the per-corpus tau (and of each replicate's); pair agreement summed over
corpora. Timing: the probe's own work per corpus (writing and filtering, embedding its queries,
ranking and measures, with the passages' vectors cached), plus, on --cold-timing-corpora,
embedding every chunking's passages once without any cache (the retrieval's other half, the same
for every writer); chunking excluded; each also scaled to 500 kB.

    python bench/bench_probe.py                                  # four corpora, both writers
    python bench/bench_probe.py --corpora chatlogs --writers keyword
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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
        "(the cold half of retrieval, the same for every writer; comma-separated, '' for none): "
        "on 2 shared cores pubmed's seven chunkings take a quarter of an hour",
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
        "--labelled-record", type=Path, default=REPO / "bench/results/labelled.json"
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


def compare(
    probe: dict[str, Any], real: dict[str, Any], names: list[str], measure: str, args: Any
) -> dict[str, Any]:
    """Tau (with interval) and significant-pair agreement of the probe against the real ones."""
    probe_q = [probe["chunkings"][n]["per_question"][measure] for n in names]
    real_q = [real["chunkings"][n]["per_question"][measure] for n in names]
    probe_means = [float(np.nanmean(v)) for v in probe_q]
    real_means = [float(np.nanmean(v)) for v in real_q]
    replicates = taus(probe_q, real_q, args)
    significant = [
        (i, j)
        for i in range(len(names))
        for j in range(i + 1, len(names))
        if paired_difference(real_q[i], real_q[j], n_resamples=args.resamples, seed=args.seed)[
            "significant"
        ]
    ]
    low, high = percentile_interval(replicates[np.isfinite(replicates)], 0.95)
    return {
        "tau": kendall_tau(probe_means, real_means),
        "low": low,
        "high": high,
        **pairwise_agreement(probe_means, real_means, significant),
        "probe_means": dict(zip(names, probe_means, strict=True)),
        "real_means": dict(zip(names, real_means, strict=True)),
        "_replicates": replicates,
    }


def taus(probe_q: list[list[float]], real_q: list[list[float]], args: Any) -> np.ndarray:
    probe_idx = resample_indices(len(probe_q[0]), args.resamples, args.seed)
    real_idx = resample_indices(len(real_q[0]), args.resamples, args.seed + 1)
    probe_rep = replicate_means(probe_q, probe_idx)
    real_rep = replicate_means(real_q, real_idx)
    return np.array([kendall_tau(p, r) for p, r in zip(probe_rep, real_rep, strict=True)])


def baseline(counts: list[float], real: dict[str, Any], names: list[str], measure: str, args):
    real_q = [real["chunkings"][n]["per_question"][measure] for n in names]
    real_means = [float(np.nanmean(v)) for v in real_q]
    real_idx = resample_indices(len(real_q[0]), args.resamples, args.seed + 1)
    replicates = np.array(
        [kendall_tau(counts, r) for r in replicate_means(real_q, real_idx)], dtype=float
    )
    significant = [
        (i, j)
        for i in range(len(names))
        for j in range(i + 1, len(names))
        if paired_difference(real_q[i], real_q[j], n_resamples=args.resamples, seed=args.seed)[
            "significant"
        ]
    ]
    low, high = percentile_interval(replicates[np.isfinite(replicates)], 0.95)
    return {
        "tau": kendall_tau(counts, real_means),
        "low": low,
        "high": high,
        **pairwise_agreement(counts, real_means, significant),
        "_replicates": replicates,
    }


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


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    bench_run = harness.start(None if argv is None else [sys.argv[0], *argv])
    started = time.perf_counter()
    from hope.core.io import file_sha256, read_text
    from hope.core.packaged_configs import compose_config
    from hope.models.embeddings import CachingEmbedder
    from hope.models.factory import embedder_preset, open_cache

    settings = ProbeSettings(
        k=args.k,
        budgets=tuple(int(b) for b in args.budgets.split(",")),
        n_questions=args.questions,
        seed=args.seed,
        n_resamples=args.resamples,
    )
    measures = compared_measures(settings)
    writers = [w for w in args.writers.split(",") if w]
    cache = open_cache(compose_config([]).cache.path)
    embedder = embedder_preset(args.embedder)
    chunkers, not_run = load_offline_chunkers(args.chunkers.split(","), REPO / "conf" / "chunker")
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
        },
        "targets": TARGETS,
        "chunkers": names,
        "chunkers_not_run": not_run,
        "corpora": {},
    }
    cells: dict[str, dict[str, list[dict[str, Any]]]] = {
        w: {m: [] for m in measures} for w in [*writers, "passage_count"]
    }
    timings: dict[str, float] = {}
    for corpus in args.corpora.split(","):
        path = args.data / "corpora" / f"{corpus}.md"
        text = read_text(path, "corpus")
        real_questions, _ = read_questions(args.data / "questions.jsonl", text, corpus)
        phase = time.perf_counter()
        chunkings = {}
        for chunker in chunkers:
            passages = chunk_corpus(chunker, corpus, text, cache)
            chunkings[chunker.name] = [
                ChunkPassage(p["text"], p["start"], p["end"]) for p in passages
            ]
        timings[f"chunking:{corpus}"] = round(time.perf_counter() - phase, 1)
        entry: dict[str, Any] = {
            "sha256": file_sha256(path),
            "n_chars": len(text),
            "n_real_questions": len(real_questions),
            "n_passages": {n: len(p) for n, p in chunkings.items()},
            "writers": {},
        }
        cold = None
        if corpus in args.cold_timing_corpora.split(","):
            fresh = CachingEmbedder(embedder.inner)
            phase = time.perf_counter()
            for passages in chunkings.values():
                fresh.embed([p.text for p in passages])
            cold = round(time.perf_counter() - phase, 1)
            log(f"{corpus}: every chunking's passages embedded without cache in {cold} s")
        entry["passage_embedding_cold_s"] = cold
        log(f"{corpus}: real questions ({len(real_questions)})")
        real = measure_chunkings(text, real_questions, chunkings, embedder, settings)
        entry["real"] = {
            m: {n: real["chunkings"][n]["measures"][m]["mean"] for n in names} for m in measures
        }
        for writer in writers:
            phase = time.perf_counter()
            result = probe_ranking(text, chunkings, embedder, settings, writer)
            own = round(time.perf_counter() - phase, 2)
            compared = {m: compare(result, real, names, m, args) for m in measures}
            for m in measures:
                cells[writer][m].append(compared[m])
            total = None if cold is None else own + cold
            entry["writers"][writer] = {
                "probe": {k: v for k, v in result["probe"].items() if k != "questions"},
                "examples": [
                    {"question": q["question"], "references": [r["text"] for r in q["references"]]}
                    for q in result["probe"]["questions"][:3]
                ],
                "compared": compared,
                "targets": targets_met(compared, measures),
                "timing_s": {
                    "probe_own_passages_cached": own,
                    "probe_own_per_500kB": round(own * PER_500KB / len(text), 2),
                    **result["timings_s"],
                    "passage_embedding_cold": cold,
                    "total_cold": None if total is None else round(total, 2),
                    "total_cold_per_500kB": (
                        None if total is None else round(total * PER_500KB / len(text), 2)
                    ),
                },
            }
            summary = ", ".join(f"{m} {compared[m]['tau']:+.2f}" for m in measures)
            log(f"{corpus}: {writer}: {own} s; tau {summary}")
        counts = [float(len(chunkings[n])) for n in names]
        entry["passage_count"] = {m: baseline(counts, real, names, m, args) for m in measures}
        for m in measures:
            cells["passage_count"][m].append(entry["passage_count"][m])
        entry["hope"] = hope_taus(args.labelled_record, corpus, args.k)
        report["corpora"][corpus] = entry
        report["pooled"] = {
            w: {m: pooled(cs) for m, cs in by_measure.items()} for w, by_measure in cells.items()
        }
        report["pooled_targets"] = {w: targets_met(report["pooled"][w], measures) for w in writers}
        report["timings_s"] = timings
        report["wall_time_s"] = round(time.perf_counter() - started, 1)
        bench_run.write_record(args.output, strip(report))
        log(f"wrote {args.output}")
    if args.llm_questions > 0:
        report["llm_writer"] = llm_timing(args, settings)
        report["wall_time_s"] = round(time.perf_counter() - started, 1)
        bench_run.write_record(args.output, strip(report))
        log(f"wrote {args.output} with the LLM writer's timing")
    return 0


def llm_timing(args: argparse.Namespace, settings: ProbeSettings) -> dict[str, Any]:
    """Seconds per question of the LLM writer with the embedded model and no answer cache."""
    import asyncio

    from hope.core.io import read_text
    from hope.models.factory import default_llm
    from hope.probe import LLMWriter, write_probe_questions

    text = read_text(args.data / "corpora" / f"{args.llm_corpus}.md", "corpus")
    phase = time.perf_counter()
    try:
        llm = default_llm(cache=None)
        writer = LLMWriter(llm)
        probe = write_probe_questions(
            text, writer, args.llm_questions, seed=args.seed, attempts=1, shape=settings.shape
        )
    except Exception as exc:  # an embedded model that cannot start here is a result too
        return {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"[:500]}
    elapsed = time.perf_counter() - phase
    asyncio.run(llm.aclose())
    return {
        "status": "ok",
        "model": llm.identity,
        "corpus": args.llm_corpus,
        "requests": args.llm_questions,
        "seconds": round(elapsed, 1),
        "seconds_per_request": round(elapsed / args.llm_questions, 1),
        **probe.summary(),
        "examples": [
            {"question": q.question, "references": [r.text for r in q.references]}
            for q in probe.questions[:3]
        ],
        "note": "one attempt per stratum; the model's start is included in the time",
    }


if __name__ == "__main__":
    sys.exit(main())
