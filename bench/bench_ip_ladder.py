"""ζ_inf alone on the validity ladder, one model, its judgement forms side by side (issue 11).

The validity benchmark (bench_validity.py) scores all of HOPE, which takes two hours with a
1.5B-class model on 2 cores. ζ_inf is the sub-metric that failed there, and the candidate fix
(``information_preservation.judgement: support``, each statement judged alone) changes only it,
so this scores only ζ_inf, with the validity benchmark's documents, ladders, reduced settings and
controls:

- per judgement form (``choice``: eq. 9's pick among four; ``support``: beyond the paper) and
  per document, ζ_inf of each rung of the ladder (aligned > recursive_500 > fixed_120,
  foreign_mixed, sentence_shuffled);
- the share of (document, degraded chunking) comparisons that the aligned chunking wins, pooled
  and per rung, Kendall τ against the ladder, bootstrap 95 % intervals over documents;
- the two controls on the same quadruples: the segment itself as the context (oracle, should be
  near 1) and no context (should be low: a quadruple answerable without context gives its answer
  away); LLM requests and wall time.

The quadruples depend only on the document, so the second form reads them from the response
cache. Any Hydra override of the ``score`` config follows the options, e.g. another GGUF:

    python bench/bench_ip_ladder.py --label qwen2.5-coder-1.5b \\
        llm.gguf_path=/path/qwen15.gguf llm.model=Qwen2.5-Coder-1.5B-Instruct

Each run merges its label's entry into bench/results/ip_ladder.json, rewritten after every
document (``complete`` says whether every document of every form is in).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from hope.core.metrics import equations
from hope.core.metrics.eval_context import EvalContext
from hope.core.metrics.information_preservation import InformationPreservation
from hope.core.packaged_configs import compose_config
from hope.core.result import nan_to_none
from hope.models.factory import build_from_config
from hope.models.llm import Usage, usage_scope
from hope.validity import ladder_stats as stats
from hope.validity.ladder import DEGRADED, RUNGS
from workloads import REDUCED, build_ladders, controls, load_documents, names

RESULT = harness.REPO / "bench/results/ip_ladder.json"


async def score_rung(ip: InformationPreservation, document: str, passages: list[str]) -> dict:
    vectors = await ip.ctx.embed(passages)
    ids = [str(i) for i in range(len(passages))]
    segments = await ip.score(document, passages, vectors, ids)
    correct = [s["correct"] for s in segments if s["status"] == "ok"]
    return {
        "information_preservation": equations.information_preservation(correct)
        if correct
        else math.nan,
        "segments_ok": len(correct),
        "segments_failed": sum(s["status"] != "ok" for s in segments),
        "judged": [
            {"answer_key": s["answer_key"], "choices": s["choices"], "correct": s["correct"]}
            for s in segments
            if s["status"] == "ok"
        ],
    }


async def score_document(ip: InformationPreservation, doc: dict, ladder: dict) -> dict[str, Any]:
    started = time.perf_counter()
    token = usage_scope.set(Usage())
    try:
        rungs = {rung: await score_rung(ip, doc["text"], ladder[rung]) for rung in RUNGS}
        control = await controls(ip, doc["text"])
    finally:
        usage = usage_scope.get()
        usage_scope.reset(token)
    return {
        "doc_id": doc["doc_id"],
        "domain": doc["domain"],
        "wall_time_s": round(time.perf_counter() - started, 1),
        "llm": usage.to_dict(),
        "rungs": rungs,
        "controls": control,
    }


def analyse(docs: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    scores = {
        d["doc_id"]: {rung: d["rungs"][rung]["information_preservation"] for rung in RUNGS}
        for d in docs
    }
    return {
        "documents": len(docs),
        "aligned_vs_degraded": stats.comparisons(scores, "aligned", DEGRADED, seed=seed),
        "kendall_tau": stats.mean_with_ci(
            [stats.kendall_tau(RUNGS, s) for s in scores.values()], seed=seed
        ),
        "mean_by_rung": {
            rung: stats.mean_with_ci([s[rung] for s in scores.values()], seed=seed)
            for rung in RUNGS
        },
        "controls": {
            kind: stats.accuracy(
                [[all(c["correct"] for c in seg) for seg in d["controls"][kind]] for d in docs],
                seed=seed,
            )
            for kind in ("oracle", "no_context")
        },
        "llm_requests": sum(d["llm"]["requests"] for d in docs),
        "llm_cache_hits": sum(d["llm"]["cache_hits"] for d in docs),
        "wall_time_s": round(sum(d["wall_time_s"] for d in docs), 1),
    }


def write_entry(bench_run: harness.Run, label: str, entry: dict[str, Any]) -> None:
    header = {"benchmark": "ip_ladder", "what": __doc__.split("\n\n")[1].replace("\n", " ")}
    bench_run.merge_entry(RESULT, header, label, entry)


async def run(args: argparse.Namespace, overrides: list[str]) -> dict[str, Any]:
    bench_run = harness.start()  # the code measured: before the runs
    with tempfile.TemporaryDirectory(prefix="hope-ip-ladder-") as scratch:
        docs = load_documents(
            args.domains, args.per_domain, args.max_chars, args.seed, Path(scratch)
        )
    ladders = build_ladders(docs, args.seed)
    forms: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    entry = {
        "complete": False,
        "overrides": overrides,
        "reduced_settings": [*REDUCED, f"hope.information_preservation.n_segments={args.segments}"],
        "selection": {
            "domains": args.domains,
            "per_domain": args.per_domain,
            "max_chars": args.max_chars,
            "seed": args.seed,
        },
        "wall_time_s": None,
        "judgements": forms,
    }
    for judgement in args.judgements:
        cfg = compose_config(
            [
                "hope=paper",
                *REDUCED,
                f"hope.information_preservation.n_segments={args.segments}",
                f"hope.information_preservation.judgement={judgement}",
                *overrides,
            ]
        )
        settings, llm, embedder = build_from_config(cfg)
        ip = InformationPreservation(EvalContext(llm, embedder, settings))
        per_doc = []
        try:
            for doc, ladder in zip(docs, ladders, strict=True):
                per_doc.append(await score_document(ip, doc, ladder))
                row = per_doc[-1]["rungs"]
                print(
                    f"[{time.perf_counter() - started:6.0f}s] {judgement} {doc['doc_id']}: "
                    + " ".join(f"{r}={row[r]['information_preservation']:.2f}" for r in RUNGS),
                    flush=True,
                )
                # Written after every document: a run stopped early keeps what it measured.
                forms[judgement] = {
                    "llm": llm.identity,
                    "settings": settings.information_preservation.model_dump(),
                    "complete": len(per_doc) == len(docs),
                    **analyse(per_doc, args.seed),
                    "per_document": per_doc,
                }
                write_entry(bench_run, args.label, entry)
        finally:
            await llm.aclose()
    entry["complete"] = True
    entry["wall_time_s"] = round(time.perf_counter() - started, 1)
    write_entry(bench_run, args.label, entry)
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="smollm2-135m")
    # The candidate first: a run cut short by time keeps it whole.
    parser.add_argument("--judgements", type=names, default=["support", "choice"])
    parser.add_argument("--domains", type=names, default=["news", "wiki", "arxiv", "tos"])
    parser.add_argument("--per-domain", type=int, default=3)
    parser.add_argument("--max-chars", type=int, default=2000)
    parser.add_argument("--segments", type=int, default=4, help="ζ_inf segments per document")
    parser.add_argument("--seed", type=int, default=2025)
    args, overrides = parser.parse_known_args(argv)
    entry = asyncio.run(run(args, overrides))
    summary = {
        form: {
            "pooled_win_share": v["aligned_vs_degraded"]["pooled"],
            "controls": v["controls"],
            "requests": v["llm_requests"],
            "wall_time_s": v["wall_time_s"],
        }
        for form, v in entry["judgements"].items()
    }
    print(json.dumps(nan_to_none(summary), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
