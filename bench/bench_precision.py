"""HOPE's precision by sample size (issue 34): how precise a chunking's HOPE is, and how well it
ranks chunkers, for 1, 2, 4, ... focus passages and segments, against the LLM requests that costs.

Input: a record of ``bench/bench_labelled.py`` run with the largest size (``--focus-passages 16
--segments 16``; see ``make bench-precision``), which keeps every item's score; or the sample
experiment's full run at the paper's counts (``bench_sequential.py --parts sample
--items-output``, ``make bench-precision-sample``), each document a corpus of its 2 chunkings,
with no labels, so no tau. ``--source`` repeated pools the corpora of several such records (a
corpus scored in a run of its own), where their HOPE sizes and embedders match. Each smaller size
is drawn from those items: ``--subsamples`` seeded draws of m focus passages per chunking and m
segments per corpus (the same segments for every chunking, as the evaluator asks every chunking
about the same segments). A random m-subset of a random 16-sample is a random m-sample of the
chunking, so each draw is what a run at size m would have scored, without asking the model again.

Per corpus and size m, over the draws (median and 95 % range):
- ``se``: each chunking's standard error of HOPE (``sampling_stats.standard_error``: the
  sub-metrics' standard errors with n - 1, combined as eq. 10 combines them), the median over
  the chunkings where it is defined. Not a bootstrap one: with one focus passage a bootstrap
  standard error is 0, which would call the noisiest size exact; this one is undefined there;
- ``tau``: Kendall tau between the chunkings' HOPE and each labelled target of the record
  (budget recall, recall@k, IoU@k);
- ``significant_pairs``: chunker pairs whose HOPE difference a t test at 95 % calls significant
  (``sampling_stats.compare``; segments paired, degrees of freedom the smallest count less one);
- ``requests``: the LLM requests of a run at size m (``sampling_stats.requests_for``; the
  record's own request count at the largest size is printed beside it as a check).

With two or more corpora, ``pooled`` takes every corpus together draw by draw: tau the mean of the
corpora's tau (as the labelled and probe records pool), the standard error the median over every
chunking of every corpus, significant pairs, pairs and requests summed.

Output: bench/results/precision.json (``make bench-precision``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import harness
from sampling_stats import (
    DEFAULT_ITEMS_RECORD,
    METRICS,
    decisions,
    hope_of,
    load_items_records,
    requests_for,
    scored_chunkings,
    standard_error,
)

TARGETS = ("budget_recall", "recall", "iou")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        action="append",
        help="an items record (repeat for several: their corpora pool; default "
        f"{DEFAULT_ITEMS_RECORD})",
    )
    parser.add_argument("--profile", default="paper")
    parser.add_argument(
        "--sizes", default="1,2,4,8,16", help='comma-separated sizes; "all" is every item'
    )
    parser.add_argument("--subsamples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default="bench/results/precision.json")
    return parser.parse_args(argv)


ALL = "all"


def parse_sizes(text: str) -> list[int | str]:
    """``"1,2,all"`` -> [1, 2, "all"]: ``all`` draws every item (the source run itself)."""
    sizes: list[int | str] = []
    for part in (p.strip() for p in text.split(",")):
        if part == ALL:
            sizes.append(ALL)
        elif part.isdigit() and int(part) >= 1:
            sizes.append(int(part))
        else:
            raise SystemExit(f"--sizes: {part!r} is neither a positive count nor {ALL!r}")
    return sizes


def _count(m: int | str) -> int:
    return 10**9 if m == ALL else int(m)


def labelled_targets(source: dict[str, Any], profile: str) -> tuple[str, ...]:
    """The labelled targets the source has for any chunking (none for the sample experiment,
    which has no labels: then no tau is computed)."""
    return tuple(
        t
        for t in TARGETS
        if any(
            c["targets"][t] is not None
            for corpus in source["corpora"].values()
            for c in corpus_chunkings(corpus, profile).values()
        )
    )


def corpus_chunkings(corpus: dict[str, Any], profile: str) -> dict[str, dict[str, Any]]:
    """name -> {"items", "targets"} for the chunkings HOPE scored in this corpus."""
    found = {}
    for name, hope in scored_chunkings(corpus, profile).items():
        labelled = corpus["chunkers"][name].get("labelled") or {}
        targets = {t: labelled.get(t, {}).get("mean") for t in TARGETS}
        found[name] = {"items": hope["items"], "targets": targets, "llm": hope.get("llm", {})}
    return found


def _tau(x: list[float], y: list[float]) -> float:
    from scipy.stats import kendalltau

    if len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")
    return float(kendalltau(x, y).statistic)


def _summary(values: list[float]) -> dict[str, Any]:
    kept = np.array([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if kept.size == 0:
        return {"median": None, "low": None, "high": None, "n": 0}
    low, median, high = np.percentile(kept, [2.5, 50, 97.5])
    return {"median": float(median), "low": float(low), "high": float(high), "n": int(kept.size)}


def subsample(
    chunkings: dict[str, dict[str, Any]], m: int | str, rng: np.random.Generator
) -> dict[str, dict[str, list[Any]]]:
    """m focus passages of each chunking and m segments of the corpus, drawn without replacement
    (all of them when fewer, or when m is "all")."""
    m = _count(m)
    n_segments = max(len(c["items"]["information_preservation"]) for c in chunkings.values())
    segments = set(rng.permutation(n_segments)[:m].tolist())
    drawn = {}
    for name, chunking in chunkings.items():
        items = chunking["items"]
        n_focus = max(len(items[metric]) for metric in METRICS[:2])
        focus = set(rng.permutation(n_focus)[:m].tolist())
        drawn[name] = {
            metric: [v for i, v in enumerate(items[metric]) if i in focus] for metric in METRICS[:2]
        }
        drawn[name][METRICS[2]] = [
            v if i in segments else None for i, v in enumerate(items[METRICS[2]])
        ]
    return drawn


def draws_at_size(
    chunkings: dict[str, dict[str, Any]],
    m: int | str,
    subsamples: int,
    rng: np.random.Generator,
    targets: tuple[str, ...] = TARGETS,
) -> dict[str, Any]:
    """Per draw of size m: tau with each target, every chunking's standard error and the number
    of significant pairs (the raw values that the corpus and the pooled summaries share). At
    "all" every draw is the source run itself, so one draw is made."""
    names = sorted(chunkings)
    taus: dict[str, list[float]] = {t: [] for t in targets}
    subsamples = 1 if m == ALL else subsamples
    ses: list[list[float]] = []
    significant: list[int] = []
    for _ in range(subsamples):
        drawn = subsample(chunkings, m, rng)
        scores = [hope_of(drawn[n]) for n in names]
        for target in targets:
            values = [chunkings[n]["targets"][target] for n in names]
            taus[target].append(_tau(scores, values))
        ses.append([standard_error(drawn[n]) for n in names])
        found = decisions(drawn)
        significant.append(sum(1 for v in found.values() if v != 0))
    return {"tau": taus, "se": ses, "significant": significant}


def _median_or_none(values: list[float]) -> float | None:
    kept = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.median(kept)) if kept else None


def measure_size(
    chunkings: dict[str, dict[str, Any]],
    m: int | str,
    n_questions: int,
    subsamples: int,
    rng: np.random.Generator,
    targets: tuple[str, ...] = TARGETS,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The corpus' summary at size m, and its raw draws for the pooled summary."""
    names = sorted(chunkings)
    raw = draws_at_size(chunkings, m, subsamples, rng, targets)
    n_segments = min(_count(m), max(len(c["items"][METRICS[2]]) for c in chunkings.values()))
    drawn_counts = {
        n: {
            "focus_passages": min(
                _count(m), max(len(chunkings[n]["items"][k]) for k in METRICS[:2])
            ),
            "segments": n_segments,
        }
        for n in names
    }
    point = {
        "size": m,
        "requests": requests_for(drawn_counts, n_questions, n_segments),
        "se": _summary([_median_or_none(draw) for draw in raw["se"]]),
        "tau": {t: _summary(v) for t, v in raw["tau"].items()},
        "significant_pairs": _summary(raw["significant"]),
        "pairs": len(names) * (len(names) - 1) // 2,
    }
    return point, raw


def pooled_curve(
    points: dict[str, list[dict[str, Any]]], raws: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Every corpus together, draw by draw: tau the mean of the corpora's tau (as the labelled
    and probe records pool), the standard error the median over every chunking of every corpus,
    significant pairs, pairs and requests summed."""
    corpora = sorted(points)
    curve = []
    for index, first in enumerate(points[corpora[0]]):
        per_corpus = [raws[c][index] for c in corpora]
        n_draws = len(per_corpus[0]["significant"])
        taus = {
            t: [
                float(np.nanmean(values))
                if not all(np.isnan(values := [raw["tau"][t][d] for raw in per_corpus]))
                else float("nan")
                for d in range(n_draws)
            ]
            for t in per_corpus[0]["tau"]  # the targets the source has (none without labels)
        }
        ses = [
            _median_or_none([se for raw in per_corpus for se in raw["se"][d]])
            for d in range(n_draws)
        ]
        curve.append(
            {
                "size": first["size"],
                "requests": sum(points[c][index]["requests"] for c in corpora),
                "se": _summary(ses),
                "tau": {t: _summary(v) for t, v in taus.items()},
                "significant_pairs": _summary(
                    [sum(raw["significant"][d] for raw in per_corpus) for d in range(n_draws)]
                ),
                "pairs": sum(points[c][index]["pairs"] for c in corpora),
            }
        )
    return curve


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = harness.start(argv)
    paths = args.source or [DEFAULT_ITEMS_RECORD]
    source, about = load_items_records(paths)
    hope_size = source["settings"]["hope_size"]
    sizes = parse_sizes(args.sizes)
    targets = labelled_targets(source, args.profile)
    # tau needs 3 chunkings; without labelled targets, 2 are enough for a pair and an error
    fewest = 3 if targets else 2
    rng = np.random.default_rng(args.seed)
    corpora: dict[str, Any] = {}
    raws: dict[str, list[dict[str, Any]]] = {}
    for name, corpus in source["corpora"].items():
        chunkings = corpus_chunkings(corpus, args.profile)
        if len(chunkings) < fewest:
            continue
        recorded = sum(
            int(c["llm"].get("requests", 0)) + int(c["llm"].get("cache_hits", 0))
            for c in chunkings.values()
        )
        measured = [
            measure_size(chunkings, m, hope_size["questions"], args.subsamples, rng, targets)
            for m in sizes
        ]
        curve = [point for point, _ in measured]
        raws[name] = [raw for _, raw in measured]
        corpora[name] = {
            "chunkings": sorted(chunkings),
            # each chunking's HOPE on every item of the source (eq. 10 from the items)
            "hope": {c: hope_of(chunkings[c]["items"]) for c in sorted(chunkings)},
            # the source's own count, a check of the "requests" at its own size (None when the
            # source keeps one count for the whole run: its "llm" block, in "source")
            "recorded_calls_at_largest_size": recorded
            if any(c["llm"] for c in chunkings.values())
            else None,
            "curve": curve,
        }
        print(f"{name}: sizes {sizes}", file=sys.stderr)
    if not corpora:
        raise SystemExit(
            f"{', '.join(paths)}: no corpus with HOPE items for {fewest} or more chunkings"
        )
    record = {
        "benchmark": "HOPE's precision by sample size (issue 34)",
        "source": {
            "records": about,
            "hope_size": hope_size,
            "embedder": source["settings"]["embedder"],
        },
        "settings": {
            "profile": args.profile,
            "sizes": sizes,
            "subsamples": args.subsamples,
            "seed": args.seed,
            "confidence": 0.95,
            "targets": list(targets),
            "what": "size m = m focus passages per chunking and m segments per corpus (a "
            "document of the sample experiment), drawn from the source record's items; "
            '"all" = every item, the source run itself (one draw); each figure the median '
            "and 95 % range over the draws",
        },
        "corpora": corpora,
        "pooled": (
            {
                "corpora": sorted(corpora),
                "what": "tau: each draw's mean over the corpora of their tau; standard error: "
                "the median over every chunking of every corpus; pairs and requests: summed",
                "curve": pooled_curve({c: b["curve"] for c, b in corpora.items()}, raws),
            }
            if len(corpora) > 1
            else None
        ),
    }
    run.write_record(args.output, record)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
