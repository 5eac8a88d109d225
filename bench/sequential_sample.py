"""The sequential benchmark's sample-experiment workload (``bench_sequential.py --parts sample``):
the default experiment (``experiment=sample``) at the paper's counts, scored as ``hope-run``
scores it, its full run cold into a work folder's cache and then every run from that cache,
counting the distinct requests each asks of it (what it would send cold).

A library module of the benchmarks (no ``main``): bench scripts import it, never each other.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from sampling_stats import decisions
from sequential_runs import (
    by_document,
    chunked_pairs,
    first_round,
    over_orders,
    per_document,
    sampling,
    summarise,
)

SAMPLE_PAPER_COUNTS = [
    "experiment=sample",
    "hope.focus_passages=null",
    "hope.concept_unity.n_items=5",
    "hope.semantic_independence.n_questions=5",
    "hope.information_preservation.n_segments=20",
    "tracking=none",
    # every run makes its calls: a pair's finished result is not read back from the cache
    "cache.reuse_results=false",
]


def sample_config(cache_path: Path, sampling_cfg: dict[str, Any] | None):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hope.pipeline import CONF_DIR
    from hope.pipeline.config_schema import validate_run_config

    overrides = [*SAMPLE_PAPER_COUNTS, f"cache.path={cache_path}"]
    for key, value in (sampling_cfg or {}).items():
        overrides.append(f"hope.sampling.{key}={value}")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    return validate_run_config(OmegaConf.to_container(cfg, resolve=True))


def score_sample(config, work: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Every (document, chunker) pair of the sample experiment under ``config``: items, HOPE and
    sampling record per pair, and the LLM usage (calls = requests sent + cache hits)."""
    from hope.models.factory import build_evaluator
    from hope.pipeline.run import load_documents, locate_documents, select_chunkers
    from hope.pipeline.score_step import score_pair_stream

    path, _origin = locate_documents(config, work)
    documents = load_documents(path, config.data.doc_ids)
    chunker_list = select_chunkers(config)
    evaluator = build_evaluator(config)
    # The distinct requests the run asks for: what it would send cold (first attempts; the pairs
    # of a document share their segments' questions, so calls repeat requests).
    asked: set[str] = set()
    lookup = evaluator.llm.lookup

    def counting_lookup(key, *rest, **options):
        asked.add(key)
        return lookup(key, *rest, **options)

    evaluator.llm.lookup = counting_lookup

    started = time.perf_counter()
    scored = asyncio.run(
        score_pair_stream(
            evaluator,
            chunked_pairs(evaluator.llm.cache, documents, chunker_list),
            total=len(documents) * len(chunker_list),
            parallel_pairs=config.scoring.parallel_pairs,
            progress=True,
        )
    )
    wall = time.perf_counter() - started
    by_doc = by_document(scored)
    usage = evaluator.llm.usage.to_dict()
    asyncio.run(evaluator.llm.aclose())
    return by_doc, {
        "requests": len(asked),
        "calls": usage["requests"] + usage["cache_hits"],
        "requests_sent": usage["requests"],
        "cache_hits": usage["cache_hits"],
        "failures": usage["failures"],
        "wall_s": round(wall, 1),
        "documents": [d["doc_id"] for d in documents],
        "chunkers": [c.name for c in chunker_list],
    }


def sample_items(
    full: dict[str, dict[str, Any]], config: Any, section: dict[str, Any]
) -> dict[str, Any]:
    """The full run's items in the shape of ``bench_labelled``'s records, each document a
    "corpus" of its chunkings (no labelled targets), for ``bench_precision.py``."""
    hope = config.hope
    return {
        "benchmark": "HOPE's items on the sample experiment at the paper's counts (issue 34)",
        "settings": {
            "experiment": section["experiment"],
            "overrides": section["overrides"],
            "embedder": f"{config.embedder.get('backend')}:{config.embedder.get('model')}",
            "hope_size": {
                "focus_passages": "every passage",
                "statements": hope.concept_unity.n_items,
                "questions": hope.semantic_independence.n_questions,
                "segments": hope.information_preservation.n_segments,
            },
            "profile": hope.profile,
        },
        "llm": section["full_cold"],
        "corpora": {
            doc: {
                "chunkers": {
                    name: {
                        "hope": {
                            hope.profile: {
                                "status": "ok"
                                if scored["hope"] is not None and math.isfinite(scored["hope"])
                                else "undefined",
                                "hope": scored["hope"],
                                "items": scored["items"],
                            }
                        }
                    }
                    for name, scored in sorted(chunks.items())
                }
            }
            for doc, chunks in full.items()
        },
    }


def sample(args: argparse.Namespace, run: harness.Run) -> dict[str, Any]:
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="hope-bench-sequential-sample-"))
    work.mkdir(parents=True, exist_ok=True)
    cache_path = work / "sample.sqlite"
    print("sample: full run (cold where the cache lacks answers)", file=sys.stderr)
    full_config = sample_config(cache_path, None)
    _cold, cold_usage = score_sample(full_config, work)
    # The same run again, now every answer from the cache: its calls are counted as the
    # sequential runs' are, so the request share compares like with like.
    full, full_usage = score_sample(full_config, work)
    out: dict[str, Any] = {
        "experiment": "sample",
        "overrides": SAMPLE_PAPER_COUNTS,
        "profile": "paper (every passage, 5 statements, 5 questions, 20 segments)",
        "documents": full_usage.pop("documents"),
        "chunkers": full_usage.pop("chunkers"),
        "full_cold": {k: v for k, v in cold_usage.items() if k not in ("documents", "chunkers")},
        "full": full_usage,
        "runs": {},
    }
    if args.items_output:
        run.write_record(args.items_output, sample_items(full, full_config, out))
        print(f"wrote {args.items_output}", file=sys.stderr)
    full_decisions = {
        doc: decisions({c: v["items"] for c, v in chunks.items()}) for doc, chunks in full.items()
    }
    for epsilon in [float(e) for e in args.epsilons.split(",")]:

        def measure(order_seed: int, epsilon: float = epsilon) -> dict[str, Any]:
            print(f"sample: sequential, epsilon {epsilon}, order {order_seed}", file=sys.stderr)
            cfg = sampling(args, epsilon, replay=True, order_seed=order_seed)
            seq, seq_usage = score_sample(sample_config(cache_path, cfg), work)
            per_doc = per_document(seq, full, full_decisions)
            return {
                "wall_s": seq_usage["wall_s"],
                "failures": seq_usage["failures"],
                "requests_sent": seq_usage["requests_sent"],
                "calls": seq_usage["calls"],
                **summarise(per_doc, seq_usage["requests"], full_usage["requests"]),
                "documents": per_doc,
            }

        out["runs"][str(epsilon)] = {
            "sampling": sampling(args, epsilon, replay=True),
            **over_orders(args.orders, measure),
        }
    out["first_round"] = first_round(
        out["runs"], full_config.hope.semantic_independence.n_questions
    )
    return out
