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
questions as the code writers get theirs (the section llm_writer_tau[<writer>@<model>] of the
record; answers cached, so a stopped run resumes).
With --perfect-probe, only the real questions: how often a probe that ranked the chunkers exactly
as the real questions' population would meet each tau target (perfect_probe.py).
With --question-seeds, only the code writers run, once per question seed (every other setting as
in the main run): the probe's questions are one seeded draw, so the section question_seeds keeps,
per writer and measure, the median and range over seeds of the pooled tau and pair agreement and
of each corpus's tau, and the targets judged on the medians; the default writer is chosen from
them (probe_choice.py), and each corpus is left out in turn to see what that choice keeps on a
corpus it was not made on.
Pooled: the mean of the per-corpus tau (and of each replicate's); pair agreement summed over
corpora. Timing, each repeated --repeats times (median, min, max): the probe's own work per
corpus for the --timed-writers (writing and filtering, embedding its queries with the model and
no cache, ranking and measures, with the passages' vectors in memory), plus, on
--cold-timing-corpora, embedding every chunking's passages without any cache (the retrieval's
other half, the same for every writer); chunking excluded; each also scaled to 500 kB.
The comparison with the real questions is in probe_vs_real.py, the LLM writers' runs in
probe_llm_runs.py.

    python bench/bench_probe.py                                  # four corpora, every code writer
    python bench/bench_probe.py --corpora chatlogs --writers keyword
    python bench/bench_probe.py --question-seeds 0,1,2,3,4           # tau over question draws
    python bench/bench_probe.py --llm-tau-corpora chatlogs --llm-writer llm_sentences \
        --llm-gguf qwen0.5b.gguf --llm-model Qwen2.5-Coder-0.5B-Instruct --llm-tau-questions 100
"""

from __future__ import annotations

import argparse
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
from hope.labelled.benchmark import load_offline_chunkers  # noqa: E402
from hope.probe import (  # noqa: E402
    CODE_WRITERS,
    DEFAULT_WRITER,
    ProbeSettings,
    measure_chunkings,
    probe_ranking,
)
from perfect_probe import PERFECT_PROBE_RULE, SCALES, perfect_probe_odds, scaled_noise_taus  # noqa: E402
from probe_choice import held_out_choice, over_seeds, seed_cells, writer_choice  # noqa: E402
from probe_llm_runs import llm_runs_of, llm_timing, llm_writer_only, llm_writer_tau  # noqa: E402
from probe_vs_real import (  # noqa: E402
    TARGETS,
    RealSide,
    baseline,
    compare,
    compared_measures,
    corpus_inputs,
    hope_taus,
    log,
    pooled,
    pooled_ceiling,
    strip,
    targets_met,
    writer_entry,
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Chroma eval folder")
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--chunkers", default=",".join(CHUNKERS))
    parser.add_argument(
        "--writers",
        default=",".join([DEFAULT_WRITER, *(w for w in CODE_WRITERS if w != DEFAULT_WRITER)]),
        help="code writers (the default writer first)",
    )
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
        "and add them to the record at --output, a section llm_writer[<writer>@<model>] per model "
        "with its own provenance; the record's other figures stay as they are",
    )
    parser.add_argument(
        "--llm-tau-corpora",
        default="",
        help="run only the LLM writer (--llm-writer; the embedded model, or --llm-gguf) on these "
        "corpora, for its tau against the real questions, and add it to the record at --output "
        "as the section llm_writer_tau[<writer>@<model>]; answers cached, so a stopped run resumes",
    )
    parser.add_argument("--llm-tau-questions", type=int, default=200, help="strata per corpus")
    parser.add_argument(
        "--llm-tau-attempts", type=int, default=2, help="drafts per stratum at most (requests)"
    )
    parser.add_argument(
        "--timed-writers",
        default=DEFAULT_WRITER,
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
    parser.add_argument(
        "--perfect-probe",
        action="store_true",
        help="only the real questions: the section perfect_probe of the record at --output, how "
        "often a probe ranking exactly as the real questions' population would meet each tau "
        "target (perfect_probe.py)",
    )
    parser.add_argument("--output", type=Path, default=REPO / "bench/results/probe.json")
    return parser.parse_args(argv)


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
    if args.perfect_probe:
        return perfect_probe_run(args, settings, bench_run)
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
    section["default_choice"] = writer_choice(section["writers"])
    section["per_seed"] = {w: seed_cells(found[w]) for w in writers}
    section["held_out"] = held_out_choice(section["per_seed"], measures, corpora)
    bench_run.merge_section(args.output, "question_seeds", strip(section))
    log(f"wrote {args.output} with the section question_seeds")
    return 0


def perfect_probe_run(args: argparse.Namespace, settings: ProbeSettings, bench_run: Any) -> int:
    """The real questions alone, as in the main run: per corpus and measure the noise ceiling's
    replicates (and those of labelled sets 2, 4 and 8 times as large), and what they say of a
    perfect probe's chance to meet the targets (the section ``perfect_probe`` of the record at
    --output, with its own provenance)."""
    measures, _writers, cache, embedder, chunkers, not_run = code_writer_setup(args, settings)
    names = [c.name for c in chunkers]
    taus: dict[int, dict[str, dict[str, Any]]] = {scale: {} for scale in SCALES}
    sizes: dict[str, int] = {}
    corpora = [c for c in args.corpora.split(",") if c]
    for corpus in corpora:
        _path, text, real_questions, chunkings, _seconds = corpus_inputs(
            args, corpus, chunkers, cache
        )
        real = measure_chunkings(text, real_questions, chunkings, embedder, settings)
        sizes[corpus] = len(real_questions)
        for scale in SCALES:
            # The seed of RealSide's draws, so that scale 1 is the noise ceiling's replicates.
            taus[scale][corpus] = {
                m: scaled_noise_taus(
                    [real["chunkings"][n]["per_question"][m] for n in names],
                    args.resamples,
                    args.seed + 1,
                    scale,
                )
                for m in measures
            }
        log(f"{corpus}: real questions ({len(real_questions)}), noise at scales {SCALES}")
    section = {
        "corpora": corpora,
        "real_questions": sizes,
        "chunkers": names,
        "chunkers_not_run": not_run,
        "settings": settings.to_dict() | {"embedder": embedder.identity},
        "rule": PERFECT_PROBE_RULE,
        "scales": {str(s): perfect_probe_odds(taus[s], measures) for s in SCALES},
    }
    bench_run.merge_section(args.output, "perfect_probe", section)
    log(f"wrote {args.output} with the section perfect_probe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
