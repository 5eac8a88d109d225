"""Does HOPE pick the chunker that retrieves best? Labelled retrieval beside the label-free scores.

For every offline chunker config under conf/chunker/ on each corpus of Chroma's general evaluation
set (../shared/benchmarks/chroma-general-eval):
  1. labelled retrieval (hope.labelled): recall, precision, IoU, precision-Omega at top-k and
     recall at a character budget, per question, with bootstrap intervals;
  2. the cheap label-free baselines (hope.baselines) and BLEU (hope.chunking.bleu_baseline);
  3. HOPE and its three sub-metrics for each profile in --profiles, sized by the HOPE knobs below;
  4. per corpus and pooled (the mean of the per-corpus values): Kendall tau between each
     label-free score and budget recall, recall@k and IoU@k across chunkers, with a bootstrap
     interval; and pairwise agreement over the chunker pairs whose labelled difference is
     significant (paired bootstrap over questions);
  5. from the same replicates, the tau of every score with the mean passage length and its
     partial tau with each target given that length (hope.labelled.passage_length).

What the tau interval resamples, in each replicate: the corpus' questions (with replacement,
the same draw for every chunker) for the labelled side; for HOPE, with replacement within each
chunking, its focus passages' concept-unity and semantic-independence scores and its
information-preservation segments, recombined with the profile's aggregation; for the
per-passage baselines (size compliance, cohesion, coherence) the passages. BLEU and the passage
count are fixed (no items to resample).

The measuring and the analysis are hope.labelled.benchmark and hope.labelled.convergent, which
the DVC stage `labelled` runs too; this script adds the record (bench/harness.py's provenance
block, wall times) and the figure. Steps 1-2 need embeddings only and are written to the output
first; HOPE is written after each corpus, so a run cut short keeps what it finished. Chunkings,
embeddings and LLM answers are kept in the project's cache, so a rerun recomputes only the
analysis.

    python bench/bench_labelled.py                       # every offline chunker, four corpora
    python bench/bench_labelled.py --skip-hope           # labelled measures + baselines only
    python bench/bench_labelled.py --profiles paper,robust --focus-passages 2 --segments 4
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hope.chunking.registry import available_chunkers  # noqa: E402
from hope.labelled.benchmark import BenchmarkSettings, run_benchmark  # noqa: E402
from hope.labelled.convergent import strip_private  # noqa: E402


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


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


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    bench_run = harness.start(None if argv is None else [sys.argv[0], *argv])
    started = time.perf_counter()
    from hope.core.packaged_configs import compose_config
    from hope.models.factory import embedder_preset as build_embedder
    from hope.models.factory import open_cache

    settings = BenchmarkSettings(
        corpora=args.corpora.split(","),
        max_chars=args.max_chars,
        chunkers=(
            args.chunkers.split(",") if args.chunkers else available_chunkers(REPO / "conf/chunker")
        ),
        k=args.k,
        budget=args.budget,
        resamples=args.resamples,
        seed=args.seed,
        size_min=args.size_min,
        size_max=args.size_max,
        embedder=args.embedder,
        profiles=[p for p in args.profiles.split(",") if p],
        focus_passages=args.focus_passages,
        statements=args.statements,
        questions=args.questions,
        segments=args.segments,
    )
    embedder = build_embedder(args.embedder)
    excluded = {name: args.exclude_reason for name in args.exclude.split(",") if name}
    timings: dict[str, float] = {}
    header = {"benchmark": "labelled retrieval beside label-free chunking scores (issue 18)"}

    def checkpoint(report: dict[str, Any]) -> None:
        report = {**header, **report, "timings_s": timings}
        report["settings"]["data"]["folder"] = str(args.data)
        report["wall_time_s"] = round(time.perf_counter() - started, 1)
        # Written after each step: the block's finished_utc is this write's time.
        report = bench_run.write_record(args.output, strip_private(report))
        figure(report, args.figure)
        log(f"wrote {args.output}")

    report = run_benchmark(
        settings,
        args.data,
        REPO / "conf" / "chunker",
        embedder,
        cache=open_cache(compose_config([]).cache.path),
        excluded=excluded,
        hope_corpora=args.hope_corpora.split(",") if args.hope_corpora else None,
        skip_hope=args.skip_hope,
        timings=timings,
        checkpoint=checkpoint,
        log=log,
    )
    checkpoint(report)
    log(f"wrote {args.output} and {args.figure} in {round(time.perf_counter() - started, 1)} s")
    return 0


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
        # A percentile interval need not contain its point estimate: no negative bar.
        err = np.clip(np.array([np.subtract(taus, lows), np.subtract(highs, taus)]), 0, None)
        ax.bar(xs, taus, width, label=corpus)
        ax.errorbar(xs, taus, yerr=np.nan_to_num(err), fmt="none", ecolor="black", lw=0.7)
    ax.axhline(0.5, color="grey", ls="--", lw=0.8, label="target tau = 0.5")
    ax.axhline(0.0, color="black", lw=0.5)
    ax.set_xticks(np.arange(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel("Kendall tau vs budget recall")
    ax.set_ylim(-1.05, 1.05)
    commit = (report["provenance"]["commit"] or "?")[:7]
    ax.set_title(
        f"Label-free scores against labelled retrieval\n({len(report['chunkers'])} chunkers, "
        f"budget {report['settings']['budget_chars']} characters, commit {commit})",
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
