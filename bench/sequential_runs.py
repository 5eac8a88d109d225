"""What the sequential benchmark's workloads share (``bench_sequential.py`` and
``sequential_sample.py``): the sampling settings of a sequential run, the pairs of a document
scored together, a run's decisions against the full run's per document and summed, the repeat
over draw orders and what the first round alone asks for.

A library module of the benchmarks (no ``main``): bench scripts import it, never each other.
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections import defaultdict
from typing import Any

import harness
from sampling_stats import agreement, decisions, items_of, requests_for

TARGETS = {"agreement": 0.95, "request_share": 0.25}


def sampling(
    args: argparse.Namespace, epsilon: float, replay: bool = False, order_seed: int | None = None
) -> dict[str, Any]:
    return {
        **({} if order_seed is None else {"order_seed": order_seed}),
        "mode": "sequential",
        "alpha": args.alpha,
        "epsilon": epsilon,
        "round_focus_passages": (
            args.replay_round_focus_passages if replay else args.round_focus_passages
        ),
        "round_segments": args.replay_round_segments if replay else args.round_segments,
    }


def disjoint_contradicted(
    records: dict[str, dict[str, Any]], full_scores: dict[str, float]
) -> tuple[int, int]:
    """(comparisons the rule decided, of which the full run's scores order the other way)."""
    made = wrong = 0
    for a, b in itertools.combinations(sorted(records), 2):
        if not (math.isfinite(full_scores[a]) and math.isfinite(full_scores[b])):
            continue  # a chunking whose full-run HOPE is undefined orders nothing
        ia, ib = records[a]["intervals"]["hope"], records[b]["intervals"]["hope"]
        if ia[0] > ib[1] or ib[0] > ia[1]:
            made += 1
            wrong += (ia[0] > ib[1]) != (full_scores[a] > full_scores[b])
    return made, wrong


def summarise(per_doc: list[dict[str, Any]], requests: int, full_requests: int) -> dict[str, Any]:
    totals: dict[str, int] = defaultdict(int)
    for doc in per_doc:
        for key, value in doc["agreement"].items():
            if key != "agreement" and isinstance(value, int):
                totals[key] += value
    stopped: dict[str, int] = defaultdict(int)
    for doc in per_doc:
        for reason in doc["stopped"].values():
            stopped[reason] += 1
    share = requests / full_requests if full_requests else None
    agree = totals["agreeing"] / totals["pairs"] if totals["pairs"] else None
    return {
        "requests": requests,
        "request_share": share,
        "decisions": {**totals, "agreement": agree},
        "rule_decided": sum(d["rule_decided"] for d in per_doc),
        "rule_decided_contradicted": sum(d["rule_contradicted"] for d in per_doc),
        "stopped": dict(stopped),
        "targets_met": {
            "agreement": agree is not None and agree >= TARGETS["agreement"],
            "request_share": share is not None and share <= TARGETS["request_share"],
        },
    }


# What each draw order keeps of its run (the default order keeps everything).
ORDER_SUMMARY = (
    "requests",
    "request_share",
    "decisions",
    "rule_decided",
    "rule_decided_contradicted",
    "stopped",
    "targets_met",
)


def over_orders(orders: int, measure) -> dict[str, Any]:
    """One ε's runs for draw orders 0..``orders``-1 (``measure(order_seed)``, a run's summary):
    the default order's (0's) run in full, and under ``orders`` each order's summary, the median
    and spread of request share and agreement, the targets judged on those medians and how many
    orders meet both."""
    if orders < 1:
        raise SystemExit(f"--orders must be at least 1, got {orders}")
    found = [(seed, measure(seed)) for seed in range(orders)]
    shares = [run["request_share"] for _, run in found]
    agreements = [run["decisions"]["agreement"] for _, run in found]
    block: dict[str, Any] = {
        "order_seeds": [seed for seed, _ in found],
        "request_share": harness.spread(shares),
        "agreement": harness.spread([a for a in agreements if a is not None])
        if any(a is not None for a in agreements)
        else None,
        "both_met": sum(all(run["targets_met"].values()) for _, run in found),
        "runs": [
            {"order_seed": seed, **{key: run.get(key) for key in ORDER_SUMMARY}}
            for seed, run in found
        ],
    }
    block["targets_met"] = {
        "request_share": block["request_share"]["median"] <= TARGETS["request_share"],
        "agreement": block["agreement"] is not None
        and block["agreement"]["median"] >= TARGETS["agreement"],
    }
    return {**found[0][1], "orders": block}


def first_round(runs: dict[str, Any], n_questions: int) -> dict[str, Any] | None:
    """What the first round alone asks for, as a share of the full run, both counted from the
    populations the runs record (``requests_for``): no ε can send less with these round sizes."""
    run = next(iter(runs.values()), None)
    if not run or not run.get("documents"):
        return None
    rounds = run["sampling"]
    first = full = 0
    for document in run["documents"]:
        populations = {c: drawn[1] for c, drawn in document["drawn"].items()}
        firsts = {
            c: {
                "focus_passages": min(rounds["round_focus_passages"], p["focus_passages"]),
                "segments": min(rounds["round_segments"], p["segments"]),
            }
            for c, p in populations.items()
        }
        first += requests_for(firsts, n_questions, max(f["segments"] for f in firsts.values()))
        full += requests_for(
            populations, n_questions, max(p["segments"] for p in populations.values())
        )
    return {
        "round_focus_passages": rounds["round_focus_passages"],
        "round_segments": rounds["round_segments"],
        "requests": first,
        "full_requests": full,
        "request_share": first / full if full else None,
        "counted": f"from the populations: 2 + 2 x {n_questions} questions per focus passage, "
        "1 per segment and chunking, each segment's quadruple once per document",
    }


def chunked_pairs(cache, documents, chunker_list):
    """(document, chunker name, passages) for every pair, a document's chunkings together (as the
    ``hope`` stage scores them), the passages from the cache where it has them."""
    from hope.core.chunk_cache import cached_chunks
    from hope.pipeline.chunk_step import chunk_pair

    for document in documents:
        for chunker in chunker_list:
            records = cached_chunks(
                cache,
                chunker.config,
                document,
                lambda chunker=chunker, document=document: chunk_pair(chunker, document),
            )
            yield document, chunker.name, records


def by_document(scored) -> dict[str, dict[str, Any]]:
    """Scored pairs by document and chunker: items, HOPE and the sampling record."""
    found: dict[str, dict[str, Any]] = defaultdict(dict)
    for document, chunker, result in scored:
        found[document["doc_id"]][chunker] = {
            "items": items_of(result),
            "hope": result.hope,
            "sampling": result.sampling,
        }
    return found


def per_document(
    seq: dict[str, dict[str, Any]],
    full: dict[str, dict[str, Any]],
    full_decisions: dict[str, dict[Any, int]],
) -> list[dict[str, Any]]:
    """Per document of a scored sequential run: its decisions against the full run's, why each
    chunking stopped, what it drew, and the rule's own decided comparisons (and contradictions)."""
    per_doc = []
    for doc, chunks in seq.items():
        found = decisions({c: v["items"] for c, v in chunks.items()})
        records = {c: v["sampling"] for c, v in chunks.items()}
        made, wrong = disjoint_contradicted(records, {c: v["hope"] for c, v in full[doc].items()})
        per_doc.append(
            {
                "doc_id": doc,
                "agreement": agreement(full_decisions[doc], found),
                "stopped": {c: r["stopped"] for c, r in records.items()},
                "drawn": {c: [r["drawn"], r["population"]] for c, r in records.items()},
                "rule_decided": made,
                "rule_contradicted": wrong,
            }
        )
    return per_doc
