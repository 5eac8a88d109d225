"""Validity benchmark (issue 11): does HOPE rank chunkings of known quality as it should?

Real documents from the offline mirror (../shared/corpora, read by the project's corpus adapters),
a quality ladder per document (hope.validity.ladder: aligned > recursive_500 > fixed_120,
foreign_mixed, sentence_shuffled), scored by HOPE under each profile with reduced settings that
fit 2 CPU cores. For each sub-metric and HOPE, per rung and pooled: the share of (document,
degraded chunking) comparisons the aligned chunking wins (ties apart), Kendall τ against the ladder,
bootstrap 95 % intervals over documents, LLM requests and wall time. Two ζ_inf controls on the same
quadruples: the segment itself as the context (oracle, should be near 1) and no context (near
0.25; higher means the quadruple gives its answer away), and the letters the model chose. Beside
them, the cheap label-free baselines of hope.baselines (embedding only, no LLM) on the same
ladders: the bar HOPE has to clear to be worth its LLM calls.

    python bench/bench_validity.py                          # the default models, paper and robust
    python bench/bench_validity.py --profiles paper,robust llm=vllm llm.base_url=http://gpu:8000/v1

Any Hydra override of the `score` config (llm=, embedder=, hope.*) follows the options. The
response cache makes a killed run resume without repeating finished calls, and the JSON is
rewritten after every document (``complete`` says whether every document is in).
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
from harness import REPO
from hope.baselines import BASELINES, compute_baselines
from hope.core.evaluator import HopeEvaluator
from hope.core.metrics.eval_context import EvalContext
from hope.core.metrics.information_preservation import InformationPreservation
from hope.core.packaged_configs import compose_config
from hope.core.result import nan_to_none
from hope.models.factory import build_from_config
from hope.models.llm import Usage, usage_scope
from hope.validity import ladder_stats as stats
from hope.validity.ladder import DEGRADED, RUNGS
from workloads import METRICS, REDUCED, build_ladders, controls, load_documents, names

SCORED = (*METRICS, *BASELINES)


async def score_document(llm, embedder, settings, doc, ladder) -> dict[str, Any]:
    evaluator = HopeEvaluator(llm, embedder, settings)
    started = time.perf_counter()
    results = await asyncio.gather(
        *(evaluator.aevaluate(doc["text"], ladder[rung]) for rung in RUNGS)
    )
    token = usage_scope.set(Usage())
    try:
        ip = InformationPreservation(EvalContext(llm, embedder, settings))
        control = await controls(ip, doc["text"])
    finally:
        control_usage = usage_scope.get()
        usage_scope.reset(token)
    rungs = {}
    for rung, result in zip(RUNGS, results, strict=True):
        baselines = compute_baselines(ladder[rung], embedder, language=settings.language)
        rungs[rung] = {
            "n_passages": len(ladder[rung]),
            "scores": nan_to_none(
                {**result.scores, **{name: baselines[name]["score"] for name in BASELINES}}
            ),
            "counts": {k: vars(v) for k, v in result.counts.items()},
            "failures": [vars(f) for f in result.failures],
            "choices": [
                [(c["answer_key"], c["choice"]) for c in s["choices"]]
                for s in result.segments
                if s["status"] == "ok"
            ],
            "llm": result.usage["llm"],
        }
    return {
        "doc_id": doc["doc_id"],
        "domain": doc["domain"],
        "n_chars": len(doc["text"]),
        "wall_time_s": time.perf_counter() - started,
        "rungs": rungs,
        "controls": control,
        "controls_llm": control_usage.to_dict(),
        "prompt_ids": {name: p["id"] for r in results for name, p in r.prompts.items()},
        # Prompts and settings are the same in every result and stated once in the report.
        "evidence": [
            {k: v for k, v in r.to_dict().items() if k not in ("prompts", "settings")}
            for r in results
        ],
    }


def analyse(records: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Every figure of one profile from its per-document records."""
    by_metric = {}
    # Records written before the baselines were added hold the HOPE metrics only.
    for metric in (m for m in SCORED if all(m in r["rungs"]["aligned"]["scores"] for r in records)):
        scores = {
            r["doc_id"]: {
                rung: (
                    math.nan
                    if r["rungs"][rung]["scores"][metric] is None
                    else r["rungs"][rung]["scores"][metric]
                )
                for rung in RUNGS
            }
            for r in records
        }
        taus = [stats.kendall_tau(RUNGS, s) for s in scores.values()]
        by_metric[metric] = {
            "aligned_vs_degraded": stats.comparisons(scores, "aligned", DEGRADED, seed=seed),
            "kendall_tau": stats.mean_with_ci(taus, seed=seed),
            "mean_by_rung": {
                rung: stats.mean_with_ci([s[rung] for s in scores.values()], seed=seed)
                for rung in RUNGS
            },
        }
    letters = [
        c for r in records for rung in r["rungs"].values() for s in rung["choices"] for c in s
    ]
    control_letters = [
        (c["answer_key"], c["choice"])
        for r in records
        for kind in ("oracle", "no_context")
        for seg in r["controls"][kind]
        for c in seg
    ]
    requests = sum(rung["llm"]["requests"] for r in records for rung in r["rungs"].values()) + sum(
        r["controls_llm"]["requests"] for r in records
    )
    cache_hits = sum(
        rung["llm"]["cache_hits"] for r in records for rung in r["rungs"].values()
    ) + sum(r["controls_llm"]["cache_hits"] for r in records)
    return {
        "documents": len(records),
        "metrics": by_metric,
        "information_preservation_controls": {
            kind: stats.accuracy(
                [[all(c["correct"] for c in seg) for seg in r["controls"][kind]] for r in records],
                seed=seed,
            )
            for kind in ("oracle", "no_context")
        },
        "chosen_letters": {
            "scoring": stats.letter_distribution([choice for _, choice in letters]),
            "controls": stats.letter_distribution([choice for _, choice in control_letters]),
            "answer_keys": stats.letter_distribution([key for key, _ in letters + control_letters]),
        },
        "cost": {
            "llm_requests": requests,
            "llm_cache_hits": cache_hits,
            "wall_time_s": sum(r["wall_time_s"] for r in records),
        },
        "per_document": [
            {
                "doc_id": r["doc_id"],
                "domain": r["domain"],
                "n_chars": r["n_chars"],
                "wall_time_s": r["wall_time_s"],
                "scores": {rung: r["rungs"][rung]["scores"] for rung in RUNGS},
                "n_passages": {rung: r["rungs"][rung]["n_passages"] for rung in RUNGS},
                "failures": {rung: len(r["rungs"][rung]["failures"]) for rung in RUNGS},
            }
            for r in records
        ],
    }


async def run(args: argparse.Namespace, overrides: list[str]) -> None:
    # The code measured, taken now: later commits must not relabel this run.
    bench_run = harness.start()
    with tempfile.TemporaryDirectory(prefix="hope-validity-") as scratch:
        docs = load_documents(
            args.domains, args.per_domain, args.max_chars, args.seed, Path(scratch)
        )
    ladders = build_ladders(docs, args.seed)
    models = {}
    for profile in args.profiles:
        cfg = compose_config([f"hope={profile}", *REDUCED, *overrides])
        models[profile] = (cfg, *build_from_config(cfg))
    records: dict[str, list[dict[str, Any]]] = {p: [] for p in args.profiles}
    evidence_path = args.out.with_name(args.out.stem + "-evidence.jsonl")
    evidence_lines: list[str] = []
    started = time.perf_counter()
    try:
        for doc, ladder in zip(docs, ladders, strict=True):
            # Profiles one after another on a document: the robust profile repeats the paper's
            # requests (cache hits) and adds only its own.
            for profile in args.profiles:
                _, settings, llm, embedder = models[profile]
                record = await score_document(llm, embedder, settings, doc, ladder)
                evidence = record.pop("evidence")
                evidence_lines.append(
                    _json_line({"profile": profile, "doc_id": doc["doc_id"], "results": evidence})
                )
                records[profile].append(record)
                print(
                    f"[{time.perf_counter() - started:7.0f}s] {profile} {doc['doc_id']}: "
                    + " ".join(
                        f"{rung}={record['rungs'][rung]['scores']['hope']}" for rung in RUNGS
                    ),
                    flush=True,
                )
            write_report(
                args, overrides, docs, ladders, models, records, started, bench_run, complete=False
            )
            _write_text_atomic(evidence_path, "".join(evidence_lines))
    finally:
        for _, _, llm, _ in models.values():
            await llm.aclose()
    write_report(args, overrides, docs, ladders, models, records, started, bench_run, complete=True)
    print(f"wrote {args.out} and {evidence_path}", flush=True)


def _json_line(value: Any) -> str:
    return json.dumps(nan_to_none(value), ensure_ascii=False, allow_nan=False) + "\n"


def _write_text_atomic(path: Path, text: str) -> None:
    from hope.core.io import write_atomic

    write_atomic(path, text)


def write_report(
    args, overrides, docs, ladders, models, records, started, bench_run, *, complete: bool
):
    """Write the report of the documents scored so far under ``bench_run``'s provenance block."""
    from omegaconf import OmegaConf

    any_cfg = next(iter(models.values()))[0]
    report = {
        "benchmark": "validity (issue 11)",
        "complete": complete,
        "wall_time_s": time.perf_counter() - started,
        "models": {
            "llm": OmegaConf.to_container(any_cfg.llm, resolve=True),
            "embedder": OmegaConf.to_container(any_cfg.embedder, resolve=True),
        },
        "overrides": overrides,
        "reduced_settings": REDUCED,
        "settings": {p: models[p][1].model_dump(mode="json") for p in models},
        "prompts": {p: records[p][0]["prompt_ids"] for p in records if records[p]},
        "ladder": {
            "rungs_best_first": list(RUNGS),
            "aligned": "paragraphs (blank-line separated); a paragraph under 80 characters "
            "(a heading) joined to the next",
            "recursive_500": "the project's chunker, conf/chunker/recursive_500.yaml",
            "fixed_120": "120-character windows, cutting words and sentences",
            "foreign_mixed": "each aligned passage followed by an aligned passage of the next "
            "document in the list (another domain)",
            "sentence_shuffled": "the document's sentences in a seeded random order, split into "
            "as many passages as the aligned rung",
            "order_note": "the order among the three broken rungs is a convention for Kendall τ; "
            "the comparisons with the aligned rung are the primary figure",
        },
        "documents": [
            {
                "doc_id": d["doc_id"],
                "domain": d["domain"],
                "title": d["title"],
                "n_chars": len(d["text"]),
                "n_chars_full": d["n_chars_full"],
                "passages": {rung: len(ladder[rung]) for rung in RUNGS},
            }
            for d, ladder in zip(docs, ladders, strict=True)
        ],
        "selection": {
            "domains": args.domains,
            "per_domain": args.per_domain,
            "max_chars": args.max_chars,
            "seed": args.seed,
            "source": "../shared/corpora (corpora.profile=mirror adapters), each document cut "
            "to whole paragraphs within max_chars; documents with fewer than 3 aligned passages "
            "skipped",
        },
        "chance_accuracy": {
            "one_order": 0.25,
            "two_orders_both_right": 1 / 16,
            "note": "a model choosing uniformly at random; under position debiasing a segment "
            "needs both of two independent choices right",
        },
        "targets": {
            "hope_aligned_wins": 0.90,
            "information_preservation_aligned_wins": 0.75,
            "oracle_accuracy_min": 0.8,
            "no_context_accuracy_max": 0.4,
        },
        "profiles": {p: analyse(records[p], args.seed) for p in records if records[p]},
    }
    report["targets_met"] = nan_to_none(targets(nan_to_none(report)))
    if args.out.exists():
        # Other benchmarks merge their own sections into this file (bench_rag_control.py:
        # rag_context_recall_control, with its own provenance block); a rerun of this one keeps
        # them. The block at the top is this run's.
        for key, value in json.loads(args.out.read_text(encoding="utf-8")).items():
            if key != "provenance":
                report.setdefault(key, value)
    return bench_run.write_record(args.out, report)


SHORT = {
    "hope": "HOPE",
    "concept_unity": "ζ_con",
    "semantic_independence": "ζ_sem",
    "information_preservation": "ζ_inf",
    "size_compliance": "size compliance (baseline)",
    "intra_chunk_cohesion": "intra-chunk cohesion (baseline)",
    "contextual_coherence": "contextual coherence (baseline)",
    "passage_count": "passage count (baseline)",
}


def _ci(values: list[float] | None) -> str:
    return f"[{values[0]:.2f}, {values[1]:.2f}]" if values else "[–]"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def render_table(report: dict[str, Any]) -> str:
    """The tables (markdown) of a validity.json report."""
    lines = []
    rendered: dict[str, str] = {}  # settings (profile name apart) -> the profile rendered with them
    for profile, result in report["profiles"].items():
        settings = {
            k: v for k, v in report.get("settings", {}).get(profile, {}).items() if k != "profile"
        }
        key = json.dumps(settings, sort_keys=True)
        if settings and key in rendered:
            lines.append(
                f"**{profile}** ({result['documents']} documents): its settings equal "
                f"`{rendered[key]}`'s, so every request was answered from the cache and every "
                f"figure equals `{rendered[key]}`'s (LLM requests {result['cost']['llm_requests']},"
                f" cache hits {result['cost']['llm_cache_hits']}).\n"
            )
            continue
        rendered[key] = profile
        lines.append(f"**{profile}** ({result['documents']} documents)\n")
        header = ["", *(f"vs {rung}" for rung in DEGRADED), "pooled win share", "Kendall τ"]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        for metric in (m for m in SCORED if m in result["metrics"]):
            table = result["metrics"][metric]["aligned_vs_degraded"]
            cells = [SHORT[metric]]
            for rung in DEGRADED:
                row = table[rung]
                defined = row["wins"] + row["ties"] + row["losses"]
                cell = f"{row['wins']}/{defined}"
                if row["ties"]:
                    cell += f" ({row['ties']} ties)"
                cells.append(cell)
            pooled = table["pooled"]
            cells.append(f"{_num(pooled['share_wins'])} {_ci(pooled['share_wins_ci95'])}")
            tau = result["metrics"][metric]["kendall_tau"]
            cells.append(f"{_num(tau['mean'])} {_ci(tau['ci95'])} (n={tau['n']})")
            lines.append("| " + " | ".join(cells) + " |")
        controls = result["information_preservation_controls"]
        letters = result["chosen_letters"]["scoring"]
        shares = " ".join(f"{k} {v:.0%}" for k, v in letters.get("shares", {}).items())
        cost = result["cost"]
        lines.append("")
        lines.append(
            f"ζ_inf controls: oracle {_num(controls['oracle']['accuracy'])} "
            f"{_ci(controls['oracle']['ci95'])}, no context "
            f"{_num(controls['no_context']['accuracy'])} {_ci(controls['no_context']['ci95'])} "
            f"(n={controls['oracle']['n']} segments). Letters chosen while scoring: {shares} "
            f"(χ² vs uniform p={letters.get('chi2_uniform_p', float('nan')):.2g}). "
            f"LLM requests {cost['llm_requests']} (cache hits {cost['llm_cache_hits']}), "
            f"wall time {cost['wall_time_s'] / 60:.1f} min.\n"
        )
    return "\n".join(lines)


def targets(report: dict[str, Any]) -> dict[str, Any]:
    """Each target of issue 11 per profile: the measured value, met or not, and the gap."""
    goals = report["targets"]
    out: dict[str, Any] = {}
    for profile, result in report["profiles"].items():
        measured = {
            "hope_aligned_wins": result["metrics"]["hope"]["aligned_vs_degraded"]["pooled"][
                "share_wins"
            ],
            "information_preservation_aligned_wins": result["metrics"]["information_preservation"][
                "aligned_vs_degraded"
            ]["pooled"]["share_wins"],
            "oracle_accuracy_min": result["information_preservation_controls"]["oracle"][
                "accuracy"
            ],
            "no_context_accuracy_max": result["information_preservation_controls"]["no_context"][
                "accuracy"
            ],
        }
        out[profile] = {}
        for name, value in measured.items():
            goal = goals[name]
            if value is None:
                out[profile][name] = {"value": None, "target": goal, "met": False}
                continue
            gap = value - goal if not name.endswith("_max") else goal - value
            out[profile][name] = {"value": value, "target": goal, "met": gap >= 0, "gap": gap}
    return out


TARGET_LABELS = {
    "hope_aligned_wins": ("HOPE ranks aligned above the degraded chunking", "≥"),
    "information_preservation_aligned_wins": ("ζ_inf ranks aligned above the degraded one", "≥"),
    "oracle_accuracy_min": ("ζ_inf oracle accuracy", "≥"),
    "no_context_accuracy_max": ("ζ_inf no-context accuracy", "≤"),
}


def render_targets(report: dict[str, Any]) -> str:
    lines = []
    for name, (label, sign) in TARGET_LABELS.items():
        parts = []
        for profile, result in targets(report).items():
            row = result[name]
            if row["value"] is None:
                parts.append(f"{profile}: undefined")
                continue
            verdict = "met" if row["met"] else f"missed by {abs(row['gap']):.2f}"
            parts.append(f"{profile} {row['value']:.2f} ({verdict})")
        goal = report["targets"][name]
        lines.append(f"- {label} (target {sign} {goal:.2f}): " + "; ".join(parts) + ".")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", type=names, default=["paper", "robust"])
    parser.add_argument("--domains", type=names, default=["news", "wiki", "arxiv", "tos"])
    parser.add_argument("--per-domain", type=int, default=3)
    parser.add_argument("--max-chars", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "validity.json")
    parser.add_argument("--table", action="store_true", help="print the tables of --out and exit")
    args, overrides = parser.parse_known_args(argv)
    if args.table:
        report = json.loads(args.out.read_text(encoding="utf-8"))
        print(render_table(report))
        print(render_targets(report))
        return 0
    unknown = [o for o in overrides if o.startswith("-")]
    if unknown:
        parser.error(f"unrecognised options: {unknown}")
    asyncio.run(run(args, overrides))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
