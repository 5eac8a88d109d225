"""Does HOPE pick the chunker that retrieves best? Labelled retrieval beside the label-free scores.

For every offline chunker config under conf/chunker/ on each corpus of Chroma's general evaluation
set (../shared/benchmarks/chroma-general-eval):
  1. labelled retrieval (hope.labelled): recall, precision, IoU, precision-Omega at top-k and
     recall at a character budget, per question, with bootstrap intervals;
  2. the cheap label-free baselines (hope.baselines) and BLEU (hope.chunking.bleu);
  3. HOPE and its three sub-metrics for each profile in --profiles, sized by the HOPE knobs below;
  4. per corpus and pooled (the mean of the per-corpus values): Kendall tau between each
     label-free score and budget recall, recall@k and IoU@k across chunkers, with a bootstrap
     interval; and pairwise agreement over the chunker pairs whose labelled difference is
     significant (paired bootstrap over questions).

What the tau interval resamples, in each replicate: the corpus' questions (with replacement,
the same draw for every chunker) for the labelled side; for HOPE, with replacement within each
chunking, its focus passages' concept-unity and semantic-independence scores and its
information-preservation segments, recombined with the profile's aggregation; for the
per-passage baselines (size compliance, cohesion, coherence) the passages. BLEU and the passage
count are fixed (no items to resample).

Steps 1-2 need embeddings only and are written to the output first; HOPE is written after each
corpus, so a run cut short keeps what it finished. Chunkings are cached under
.cache/hope/labelled_chunks/ and every embedding and LLM answer in the project's cache, so a
rerun recomputes only the analysis.

    python bench/bench_labelled.py                       # every offline chunker, four corpora
    python bench/bench_labelled.py --skip-hope           # labelled measures + baselines only
    python bench/bench_labelled.py --profiles paper,robust --focus-passages 2 --segments 4
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import records

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "benchmarks" / "chroma-general-eval"
CORPORA = ("chatlogs", "state_of_the_union", "wikitexts", "pubmed")
TARGETS = ("budget_recall", "recall", "iou")
HOPE_METRICS = ("hope", "concept_unity", "semantic_independence", "information_preservation")
CHUNK_CACHE = REPO / ".cache" / "hope" / "labelled_chunks"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hope.baselines import CARDS, compute_baselines  # noqa: E402
from hope.chunking import document_bleu, load_chunker  # noqa: E402
from hope.chunking.registry import available_chunkers  # noqa: E402
from hope.io import read_text, write_json_atomic  # noqa: E402
from hope.labelled import ChunkPassage, LabelledSettings, evaluate_chunking  # noqa: E402
from hope.labelled.agreement import (  # noqa: E402
    all_pairs,
    kendall_tau,
    pairwise_agreement,
    percentile_interval,
)
from hope.labelled.bootstrap import paired_difference, resample_indices  # noqa: E402
from hope.labelled.files import read_questions  # noqa: E402
from hope.metrics import scoring  # noqa: E402


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def machine() -> dict[str, Any]:
    """CPU, cores, RAM, OS and Python: the record every benchmark shares (bench/records.py)."""
    return records.machine()


def git_commit() -> dict[str, Any]:
    """The commit measured and whether the working tree differed from it (bench/records.py)."""
    return records.git_state(REPO)


# --- chunking -------------------------------------------------------------------------------------


def load_offline_chunkers(names: list[str]) -> tuple[list[Any], dict[str, str]]:
    """The chunkers that load offline, and the reason for each that does not."""
    from hope.chunking import ChunkerConfigError

    chunkers, not_run = [], {}
    for name in names:
        try:
            chunkers.append(load_chunker(name, REPO / "conf" / "chunker"))
        except ChunkerConfigError as exc:
            not_run[name] = f"needs online or unavailable models: {exc}"
    return chunkers, not_run


def chunk_cached(chunker: Any, corpus_name: str, text: str) -> tuple[list[dict], float]:
    """Passages (text, start, end) of ``text``; cached by corpus and chunker config."""
    key = hashlib.sha256(
        json.dumps(
            [chunker.config, hashlib.sha256(text.encode()).hexdigest()], sort_keys=True
        ).encode()
    ).hexdigest()[:16]
    path = CHUNK_CACHE / f"{corpus_name}__{chunker.name}__{key}.json"
    if path.is_file():
        cached = json.loads(path.read_text(encoding="utf-8"))
        return cached["passages"], cached["chunk_time_s"]
    started = time.perf_counter()
    passages = [
        {"text": p.text, "start": p.start, "end": p.end} for p in chunker.chunk(text, corpus_name)
    ]
    elapsed = time.perf_counter() - started
    write_json_atomic(path, {"passages": passages, "chunk_time_s": elapsed})
    return passages, elapsed


# --- HOPE -----------------------------------------------------------------------------------------


def hope_overrides(profile: str, args: argparse.Namespace) -> list[str]:
    return [
        f"hope={profile}",
        f"hope.focus_passages={args.focus_passages}",
        f"hope.concept_unity.n_items={args.statements}",
        f"hope.semantic_independence.n_questions={args.questions}",
        f"hope.information_preservation.n_segments={args.segments}",
        f"hope.seed={args.seed}",
        "hope.progress=false",
    ]


def build_hope(profile: str, args: argparse.Namespace, embedder: Any) -> tuple[Any, str | None]:
    """A HopeEvaluator for ``profile`` sharing ``embedder``, or (None, why not)."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from hope.evaluate import HopeEvaluator
    from hope.models.factory import compose_config, open_cache
    from hope.settings import HopeSettings

    try:
        cfg = compose_config(hope_overrides(profile, args))
        settings = HopeSettings(**OmegaConf.to_container(cfg.hope, resolve=True))
    except Exception as exc:  # Hydra: unknown group option or key; pydantic: invalid values
        return None, f"profile {profile!r} cannot be composed here: {exc}".splitlines()[0]
    llm = instantiate(cfg.llm, cache=open_cache(cfg.cache.path))
    return HopeEvaluator(llm, embedder, settings), None


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
        **{name: _finite_or_none(getattr(result, name)) for name in HOPE_METRICS},
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
    once, and the single-slot server is never idle."""

    async def one(name: str, texts: list[str]) -> tuple[str, dict[str, Any]]:
        try:
            result = await evaluator.aevaluate(corpus_text, texts, progress_desc=name)
        except Exception as exc:  # recorded per chunking and excluded, never scored
            return name, {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
        return name, {"status": "ok", **hope_record(result)}

    try:
        pairs = await asyncio.gather(*(one(n, t) for n, t in chunkings.items()))
    finally:
        await evaluator.llm.aclose()
    return dict(pairs)


def resampled_hope(record: dict[str, Any], rng: np.random.Generator, aggregation: dict) -> float:
    """HOPE recomputed from resampled focus passages and segments (the profile's aggregation)."""

    def draw(values: list) -> list:
        if not values:
            return []
        return [values[i] for i in rng.integers(0, len(values), size=len(values))]

    items = record["items"]
    drop_zero = aggregation.get("drop_zero_passage_scores", False)
    con, _ = scoring.corpus_mean(draw(items["concept_unity"]), drop_zero=drop_zero)
    sem, _ = scoring.corpus_mean(draw(items["semantic_independence"]), drop_zero=drop_zero)
    correct = draw(items["information_preservation"])
    inf = scoring.information_preservation(correct) if correct else math.nan
    return scoring.hope_score(
        con,
        sem,
        inf,
        weights=tuple(aggregation.get("hope_weights", (1.0, 1.0, 1.0))),
        zero_as_missing=aggregation.get("hope_zero_as_missing", False),
    )


def resampled_sub_metric(record: dict[str, Any], name: str, rng: np.random.Generator) -> float:
    values = record["items"][name]
    if not values:
        return math.nan
    drawn = [values[i] for i in rng.integers(0, len(values), size=len(values))]
    if name == "information_preservation":
        return float(np.mean(drawn))
    finite = [v for v in drawn if v is not None and math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


# --- analysis -------------------------------------------------------------------------------------


def _finite_or_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def label_free_scores(
    corpus: dict[str, Any], chunkers: list[str], profiles: dict[str, dict]
) -> dict[str, dict[str, Any]]:
    """``{score name: {"point": [per chunker], "replicate": fn(rng, chunker index) -> float}}``."""
    scores: dict[str, dict[str, Any]] = {}
    rows = corpus["chunkers"]
    scores["bleu"] = {"point": [rows[c]["bleu"] for c in chunkers], "replicate": None}
    for name in CARDS:
        per_passage = [corpus["_baseline_items"][c].get(name) for c in chunkers]

        def replicate(rng, i, per_passage=per_passage, name=name):
            values = per_passage[i]
            if values is None:
                return rows[chunkers[i]]["baselines"][name]
            drawn = np.asarray(values, dtype=float)[rng.integers(0, len(values), len(values))]
            finite = drawn[np.isfinite(drawn)]
            return float(finite.mean()) if finite.size else math.nan

        scores[name] = {
            "point": [rows[c]["baselines"][name] for c in chunkers],
            "replicate": replicate if per_passage[0] is not None else None,
        }
    for profile, aggregation in profiles.items():
        records = [rows[c].get("hope", {}).get(profile) for c in chunkers]
        if not any(r and r.get("status") == "ok" for r in records):
            continue
        for metric in HOPE_METRICS:

            def replicate(rng, i, records=records, metric=metric, aggregation=aggregation):
                record = records[i]
                if not record or record.get("status") != "ok":
                    return math.nan
                if metric == "hope":
                    return resampled_hope(record, rng, aggregation)
                return resampled_sub_metric(record, metric, rng)

            point = [(r.get(metric) if r and r.get("status") == "ok" else None) for r in records]
            scores[f"{metric}[{profile}]"] = {
                "point": [math.nan if v is None else v for v in point],
                "replicate": replicate,
            }
    return scores


def validity(
    corpus: dict[str, Any],
    chunkers: list[str],
    profiles: dict[str, dict],
    n_resamples: int,
    seed: int,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """τ and pairwise agreement per (labelled target, label-free score), and the τ replicates
    (for pooling)."""
    per_q = {c: corpus["_per_question"][c] for c in chunkers}
    n_questions = len(next(iter(per_q.values()))["recall"])
    question_draws = resample_indices(n_questions, n_resamples, seed)
    rng = np.random.default_rng(seed + 1)
    scores = label_free_scores(corpus, chunkers, profiles)
    # One replicate of every label-free score per bootstrap draw, shared by all targets.
    score_reps = {
        name: np.array(
            [
                [
                    spec["replicate"](rng, i) if spec["replicate"] else spec["point"][i]
                    for i in range(len(chunkers))
                ]
                for _ in range(n_resamples)
            ]
        )
        for name, spec in scores.items()
    }
    out: dict[str, Any] = {}
    replicates: dict[str, np.ndarray] = {}
    for target in TARGETS:
        values = np.array([per_q[c][target] for c in chunkers], dtype=float)  # chunkers x questions
        point_labelled = np.nanmean(values, axis=1)
        labelled_reps = np.nanmean(values[:, question_draws], axis=2).T  # resamples x chunkers
        significant = []
        for i, j in all_pairs(len(chunkers)):
            diff = paired_difference(values[i], values[j], n_resamples=n_resamples, seed=seed)
            if diff["significant"]:
                significant.append((i, j))
        cells = {}
        for name, spec in scores.items():
            point = spec["point"]
            tau = kendall_tau(point, point_labelled)
            reps = np.array(
                [kendall_tau(score_reps[name][b], labelled_reps[b]) for b in range(n_resamples)]
            )
            replicates[f"{target}|{name}"] = reps
            low, high = percentile_interval(reps)
            cells[name] = {
                "tau": _finite_or_none(tau),
                "low": _finite_or_none(low),
                "high": _finite_or_none(high),
                **{
                    k: _finite_or_none(v)
                    for k, v in pairwise_agreement(point, point_labelled, significant).items()
                },
            }
        out[target] = {
            "labelled_means": dict(zip(chunkers, point_labelled.tolist(), strict=True)),
            "significant_pairs": len(significant),
            "all_pairs": len(all_pairs(len(chunkers))),
            "scores": cells,
        }
    return out, replicates


# --- main -----------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Chroma eval folder")
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--chunkers", help="comma-separated (default: every conf/chunker config)")
    parser.add_argument(
        "--exclude",
        default="",
        help="chunkers not to run, comma-separated; reported as not run with --exclude-reason",
    )
    parser.add_argument("--exclude-reason", default="excluded with --exclude")
    parser.add_argument("--profiles", default="paper", help="HOPE profiles, comma-separated")
    parser.add_argument("--embedder", default="minilm", help="retrieval, baselines and HOPE")
    parser.add_argument(
        "--max-chars",
        type=int,
        help="score only the first N characters of a longer corpus and the questions whose "
        "spans all fall there (a size knob; recorded per corpus)",
    )
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--budget", type=int, default=2500)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size-min", type=int, default=100, help="size compliance, characters")
    parser.add_argument("--size-max", type=int, default=1100, help="size compliance, characters")
    # HOPE's size knobs: the paper's counts (every passage, 5, 5, 20) do not fit 2 cores.
    # Defaults: the sample experiment's counts (conf/experiment/sample.yaml), which is what fits
    # 32 (corpus, chunker) pairs in about an hour with SmolLM2 on 2 shared cores.
    parser.add_argument("--focus-passages", type=int, default=1)
    parser.add_argument("--statements", type=int, default=3)
    parser.add_argument("--questions", type=int, default=1)
    parser.add_argument("--segments", type=int, default=2)
    parser.add_argument(
        "--hope-corpora",
        help="corpora to score with HOPE, in this order (default: every corpus, in --corpora "
        "order); a corpus left out or not reached keeps its labelled measures and baselines",
    )
    parser.add_argument("--skip-hope", action="store_true")
    parser.add_argument("--output", type=Path, default=REPO / "bench/results/labelled.json")
    parser.add_argument("--figure", type=Path, default=REPO / "paper_figures/labelled_vs_hope.png")
    return parser.parse_args(argv)


def strip_private(report: dict[str, Any]) -> dict[str, Any]:
    """The report without the in-memory arrays (keys starting with an underscore)."""
    if isinstance(report, dict):
        return {k: strip_private(v) for k, v in report.items() if not k.startswith("_")}
    if isinstance(report, list):
        return [strip_private(v) for v in report]
    if isinstance(report, float) and not math.isfinite(report):
        return None
    return report


def save(report: dict[str, Any], path: Path) -> None:
    write_json_atomic(path, strip_private(report))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    from hope.labelled.cli import build_embedder

    embedder = build_embedder(args.embedder)
    excluded = [name for name in args.exclude.split(",") if name]
    requested = (
        args.chunkers.split(",") if args.chunkers else available_chunkers(REPO / "conf" / "chunker")
    )
    chunkers, not_run = load_offline_chunkers([n for n in requested if n not in excluded])
    not_run.update({name: args.exclude_reason for name in excluded})
    names = [c.name for c in chunkers]
    profiles = [p for p in args.profiles.split(",") if p]
    questions_path = args.data / "questions.jsonl"
    report: dict[str, Any] = {
        "benchmark": "labelled retrieval beside label-free chunking scores (issue 18)",
        **git_commit(),
        "machine": machine(),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
        "settings": {
            "k": args.k,
            "budget_chars": args.budget,
            "embedder": embedder.identity,
            "bootstrap": {"resamples": args.resamples, "seed": args.seed, "confidence": 0.95},
            "size_compliance_range_chars": [args.size_min, args.size_max],
            "hope_size": {
                "focus_passages": args.focus_passages,
                "statements": args.statements,
                "questions": args.questions,
                "segments": args.segments,
            },
            "profiles_requested": profiles,
            "data": {"folder": str(args.data), "questions_sha256": sha256(questions_path)},
            "resampled_for_tau_interval": (
                "questions (labelled side, one draw shared by all chunkers); HOPE's focus "
                "passages and IP segments within each chunking; passages for size compliance, "
                "cohesion and coherence; BLEU and the passage count fixed"
            ),
            "pooled": "mean of the per-corpus tau (and of each bootstrap replicate's)",
        },
        "chunkers": names,
        "chunkers_not_run": not_run,
        "baseline_cards": {name: card.to_dict() for name, card in CARDS.items()},
        "corpora": {},
        "timings_s": {},
    }
    settings = LabelledSettings(
        k=args.k, budget=args.budget, n_resamples=args.resamples, seed=args.seed
    )

    # Steps 1-2: labelled measures, baselines, BLEU (embeddings only).
    phase = time.perf_counter()
    corpus_texts: dict[str, str] = {}
    for corpus_name in args.corpora.split(","):
        path = args.data / "corpora" / f"{corpus_name}.md"
        full_text = read_text(path, "corpus")
        text = full_text[: args.max_chars] if args.max_chars else full_text
        corpus_texts[corpus_name] = text
        questions, skipped = read_questions(
            questions_path, text, corpus_name, outside_slice_ok=len(text) < len(full_text)
        )
        entry: dict[str, Any] = {
            "n_chars": len(text),
            "n_chars_full": len(full_text),
            "sliced": len(text) < len(full_text),
            "questions_outside_slice_or_other_corpus": skipped,
            "sha256": sha256(path),
            "n_questions": len(questions),
            "chunkers": {},
            "_per_question": {},
            "_baseline_items": {},
            "_passages": {},
        }
        for chunker in chunkers:
            log(f"{corpus_name}: {chunker.name}: chunking")
            passages, chunk_time = chunk_cached(chunker, corpus_name, text)
            texts = [p["text"] for p in passages]
            labelled = evaluate_chunking(
                text,
                questions,
                [ChunkPassage(p["text"], p["start"], p["end"]) for p in passages],
                embedder,
                settings,
            )
            baselines = compute_baselines(
                texts, embedder, min_chars=args.size_min, max_chars=args.size_max
            )
            row = {
                "n_passages": len(passages),
                "mean_chars": float(np.mean([len(t) for t in texts])),
                "chunk_time_s": round(chunk_time, 2),
                "labelled_status": labelled["status"],
                "bleu": document_bleu(text, texts).score,
                "baselines": {name: baselines[name]["score"] for name in CARDS},
                "hope": {},
            }
            if labelled["status"] == "ok":
                row["labelled"] = labelled["summary"]
                entry["_per_question"][chunker.name] = {
                    m: [r[m] for r in labelled["per_question"]]
                    for m in ("recall", "precision", "iou", "precision_omega", "budget_recall")
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
            log(
                f"{corpus_name}: {chunker.name}: {len(texts)} passages, budget recall "
                f"{budget_recall}"
            )
        report["corpora"][corpus_name] = entry
    report["timings_s"]["labelled_and_baselines"] = round(time.perf_counter() - phase, 1)
    analyse(report, names, {}, args)
    save(report, args.output)
    log(f"wrote {args.output} (labelled measures and baselines)")

    # Step 3: HOPE, per profile, written after each corpus.
    aggregations: dict[str, dict] = {}
    report["profiles_skipped"] = {}
    report["llm_requests"] = 0
    report["llm_cache_hits"] = 0
    if args.skip_hope:
        report["hope_not_run"] = "--skip-hope"
    for profile in [] if args.skip_hope else profiles:
        evaluator, why_not = build_hope(profile, args, embedder)
        if evaluator is None:
            log(f"skipping profile {profile}: {why_not}")
            report["profiles_skipped"][profile] = why_not
            continue
        aggregations[profile] = evaluator.settings.aggregation.model_dump()
        report["settings"].setdefault("hope_settings", {})[profile] = evaluator.settings.model_dump(
            mode="json"
        )
        hope_order = args.hope_corpora.split(",") if args.hope_corpora else list(report["corpora"])
        for corpus_name in hope_order:
            entry = report["corpora"][corpus_name]
            phase = time.perf_counter()
            log(f"{corpus_name}: HOPE[{profile}] for {len(names)} chunkings")
            evaluable = {n: entry["_passages"][n] for n in names}
            results = asyncio.run(
                score_corpus_hope(evaluator, corpus_texts[corpus_name], evaluable)
            )
            for name, record in results.items():
                entry["chunkers"][name]["hope"][profile] = record
                if record["status"] == "ok":
                    report["llm_requests"] += record["llm"]["requests"]
                    report["llm_cache_hits"] += record["llm"]["cache_hits"]
            elapsed = round(time.perf_counter() - phase, 1)
            report["timings_s"][f"hope[{profile}]:{corpus_name}"] = elapsed
            log(
                f"{corpus_name}: HOPE[{profile}] done in {elapsed} s; "
                + ", ".join(f"{n}={r.get('hope')}" for n, r in results.items())
            )
            analyse(report, names, aggregations, args)
            report["wall_time_s"] = round(time.perf_counter() - started, 1)
            save(report, args.output)
            figure(report, args.figure)
    report["wall_time_s"] = round(time.perf_counter() - started, 1)
    report["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    analyse(report, names, aggregations, args)
    save(report, args.output)
    figure(report, args.figure)
    log(f"wrote {args.output} and {args.figure} in {report['wall_time_s']} s")
    return 0


def analyse(
    report: dict[str, Any],
    names: list[str],
    aggregations: dict[str, dict],
    args: argparse.Namespace,
) -> None:
    """Per-corpus validity, and the pooled τ: the mean over the corpora where the score exists
    (HOPE may be missing on a corpus a run did not reach), replicate by replicate."""
    pooled: dict[str, dict[str, Any]] = {}
    for corpus_name, entry in report["corpora"].items():
        evaluable = [n for n in names if n in entry["_per_question"]]
        if len(evaluable) < 3:
            entry["validity"] = {"skipped": f"only {len(evaluable)} evaluable chunkers"}
            continue
        entry["validity"], replicates = validity(
            entry, evaluable, aggregations, args.resamples, args.seed
        )
        for target, block in entry["validity"].items():
            for name, cell in block["scores"].items():
                slot = pooled.setdefault(
                    f"{target}|{name}", {"points": [], "replicates": [], "corpora": []}
                )
                slot["points"].append(math.nan if cell["tau"] is None else cell["tau"])
                slot["replicates"].append(replicates[f"{target}|{name}"])
                slot["corpora"].append(corpus_name)
    summary: dict[str, Any] = {}
    for key, slot in pooled.items():
        target, name = key.split("|", 1)
        points = np.asarray(slot["points"], dtype=float)
        stacked = np.vstack(slot["replicates"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN replicate has no mean
            reps = np.nanmean(stacked, axis=0)
        low, high = percentile_interval(reps)
        summary.setdefault(target, {})[name] = {
            "tau": float(np.nanmean(points)) if np.isfinite(points).any() else None,
            "low": _finite_or_none(low),
            "high": _finite_or_none(high),
            "corpora": [c for c, v in zip(slot["corpora"], points, strict=True) if np.isfinite(v)],
        }
    report["pooled"] = summary


def figure(report: dict[str, Any], path: Path) -> None:
    """Kendall τ against budget recall, per label-free score and corpus, with intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = [
        c
        for c, e in report["corpora"].items()
        if "scores" in e.get("validity", {}).get("budget_recall", {})
    ]
    if not corpora:
        return
    # A corpus HOPE has not reached yet lacks its scores: take the union, draw what exists.
    names = list(
        dict.fromkeys(
            n for c in corpora for n in report["corpora"][c]["validity"]["budget_recall"]["scores"]
        )
    )
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(names)), 4.5))
    width = 0.8 / len(corpora)
    for k, corpus in enumerate(corpora):
        cells = report["corpora"][corpus]["validity"]["budget_recall"]["scores"]
        xs = np.arange(len(names)) + (k - (len(corpora) - 1) / 2) * width
        empty = {"tau": None, "low": None, "high": None}

        def column(key: str, cells: dict = cells, empty: dict = empty) -> list[float]:
            values = [cells.get(n, empty)[key] for n in names]
            return [np.nan if v is None else v for v in values]

        taus, lows, highs = column("tau"), column("low"), column("high")
        err = np.array([np.subtract(taus, lows), np.subtract(highs, taus)])
        ax.bar(xs, taus, width, label=corpus)
        ax.errorbar(xs, taus, yerr=np.nan_to_num(err), fmt="none", ecolor="black", lw=0.7)
    ax.axhline(0.5, color="grey", ls="--", lw=0.8, label="target tau = 0.5")
    ax.axhline(0.0, color="black", lw=0.5)
    ax.set_xticks(np.arange(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel("Kendall tau vs budget recall")
    ax.set_ylim(-1.05, 1.05)
    ax.set_title(
        f"Label-free scores against labelled retrieval\n({len(report['chunkers'])} chunkers, "
        f"budget {report['settings']['budget_chars']} characters, commit {report['commit'][:7]})",
        fontsize=10,
    )
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=130)
    plt.close(fig)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
