"""Question generators against the quality gates (issue 12) on the sample documents.

For each generator (``fallback``: the LLM writes question and answer from an excerpt;
``extractive:llm``: the answer is a sentence of the document, the LLM writes the question;
``extractive:cloze``: the answer is a phrase of a sentence, code leaves it out) and each
seed, the questions stage's own code (hope.pipeline.questions_step.make_questions) generates the
configured number of questions per domain with the configured LLMs (default: the embedded
SmolLM2-135M), and the gates decide. Recorded per run: candidates tried, kept, the share of
generated candidates that passed the gates, rejections by reason, LLM requests and wall time;
per generator the median and range over the seeds. ``--with-auto`` adds one run of the stage's
``auto`` mode (ragas' test-set generator first) at the config's seed.

    python bench/bench_questions.py                       # writes bench/results/questions.json
    python bench/bench_questions.py --seeds 2025,2026 --generators extractive:cloze
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import harness
from harness import REPO
from hope.core.io import read_jsonl
from hope.models.factory import open_cache
from hope.pipeline.questions_step import make_questions
from workloads import rag_config


def one_run(documents, generator: str, seed: int, args) -> dict[str, Any]:
    """``generator``: a ``questions.generator`` choice, ``extractive:<writer>`` for the
    extractive mode with that ``questions.extractive_writer``."""
    mode, _, writer = generator.partition(":")
    overrides: dict[str, Any] = {"generator": mode}
    if writer:
        overrides["extractive_writer"] = writer
    config, profile = rag_config(args.params, {"seed": seed, "questions": overrides})
    started = time.perf_counter()
    questions, summary = make_questions(documents, config, profile, open_cache(args.cache))
    wall = time.perf_counter() - started
    candidates = summary["tried"] - sum(d["failed"] for d in summary["domains"].values())
    usage = summary["usage"]
    return {
        "generator": generator,
        "seed": seed,
        "requested": summary["requested"],
        "kept": summary["questions"],
        "tried": summary["tried"],
        "generation_failures": summary["tried"] - candidates,
        "pass_rate": summary["questions"] / candidates if candidates else None,
        "kept_per_generator": summary["per_generator"],
        "tried_per_generator": {
            g: sum(d["per_generator"][g]["tried"] for d in summary["domains"].values())
            for g in summary["per_generator"]
        },
        "ragas_errors": {
            d: e["ragas_error"] for d, e in summary["domains"].items() if e["ragas_error"]
        },
        "ragas_notes": {
            d: e["ragas_note"] for d, e in summary["domains"].items() if e.get("ragas_note")
        },
        "shortfall": summary["shortfall"],
        "rejected": summary["rejected"],
        "questions": [
            {k: q[k] for k in ("question_id", "generator", "question", "reference")}
            for q in questions
        ],
        "llm_requests": {
            k: (v or {}).get("requests") for k, v in usage.items() if isinstance(v, dict)
        },
        "wall_time_s": round(wall, 1),
    }


def spread(values: list[float]) -> dict[str, Any]:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=Path, default=REPO / "data/prepared/documents.jsonl")
    parser.add_argument("--params", type=Path, default=REPO / "params.yaml")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--seeds", default="2025,2026,2027")
    parser.add_argument("--generators", default="extractive:cloze,extractive:llm,fallback")
    parser.add_argument("--with-auto", action="store_true")
    parser.add_argument(
        "--resume", action="store_true", help="keep the runs already in --out, add the missing"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/questions.json")
    args = parser.parse_args()
    if not args.documents.is_file():
        parser.error(f"{args.documents}: no such file (run `dvc repro prepare` first)")
    bench_run = harness.start()
    documents = read_jsonl(args.documents, "documents file")
    seeds = [int(s) for s in args.seeds.split(",")]
    generators = args.generators.split(",")
    report: dict[str, Any] = {
        "benchmark": "question generators vs quality gates (issue 12)",
        "documents": str(args.documents.relative_to(REPO)),
        "n_documents": len(documents),
        "seeds": seeds,
        "runs": [],
        "complete": False,
    }
    done: list[dict[str, Any]] = []
    if args.resume and args.out.is_file():
        previous = json.loads(args.out.read_text(encoding="utf-8"))
        done = [r for r in previous.get("runs", []) if r["generator"] in generators]
        # Each run kept carries the block of the run that measured it.
        report["resumed_from_commits"] = sorted(
            {r["provenance"]["commit"] for r in done if "provenance" in r} - {None}
        )
    report["runs"] = done
    started = time.perf_counter()
    for seed in seeds:
        for generator in generators:
            if any(r["generator"] == generator and r["seed"] == seed for r in done):
                continue
            measured = one_run(documents, generator, seed, args)
            report["runs"].append({"provenance": bench_run.provenance(), **measured})
            summarise(report, generators)
            bench_run.write_record(args.out, report)
            print(generator, seed, {k: report["runs"][-1][k] for k in ("kept", "tried")})
    if args.with_auto:
        config, _ = rag_config(args.params)
        auto = one_run(documents, "auto", config.seed, args)
        report["runs"].append({"provenance": bench_run.provenance(), **auto})
    summarise(report, generators)
    report["wall_time_s"] = round(time.perf_counter() - started, 1)
    report["complete"] = True
    bench_run.write_record(args.out, report)
    print(f"pass rates (median over seeds): {report['best']} -> {args.out}")
    return 0


def summarise(report: dict[str, Any], generators: list[str]) -> None:
    """Per generator: median and range over the seeds run so far; the best by median pass rate
    (ties: more questions kept)."""
    per: dict[str, Any] = {}
    for g in generators:
        runs = [r for r in report["runs"] if r["generator"] == g]
        if not runs:
            continue
        per[g] = {
            "seeds": [r["seed"] for r in runs],
            "pass_rate": spread([r["pass_rate"] or 0.0 for r in runs]),
            "kept": spread([r["kept"] for r in runs]),
            "tried": spread([r["tried"] for r in runs]),
        }
    report["per_generator"] = per
    report["best"] = {g: v["pass_rate"]["median"] for g, v in per.items()}
    report["best_generator"] = max(
        per, key=lambda g: (per[g]["pass_rate"]["median"], per[g]["kept"]["median"])
    )


if __name__ == "__main__":
    raise SystemExit(main())
