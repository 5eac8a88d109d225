"""The sequential stopping rule (``hope.sampling.mode: sequential``, issue 34) against the full run:
LLM requests used and agreement of the significant pairwise decisions.

Three workloads:

- **simulated paper workload**: the paper profile at the paper's counts (every passage a focus
  passage, 5 statements, 5 questions, 20 segments) on ``--docs`` documents of the offline mirror x
  the scale benchmark's 8 chunkers, against the simulated server with hashing embeddings. The
  full run and each sequential run (one per ``--epsilons`` value) run cold, each on its own cache,
  through ``score_pair_stream`` as the ``hope`` stage runs them (the chunkings of a document on
  one board). Requests are what each run sent the server.
- **embedded model, replayed** (``--items``): the items a real SmolLM2 run scored
  (``bench/results/precision_items.json``, 16 focus passages and 16 segments per chunking of the
  labelled set's corpora): the full run is all of them, and the sequential rule is replayed on
  their scores (``sampling_stats.replay_sequential``, the evaluator's own ``SequentialState`` and
  ``RoundBoard``); its requests are counted from the items drawn (``requests_for``). Replaying
  is exact because each item's answers are fixed by its seed; it is not every passage of the
  chunking, which at the paper's counts is hours of SmolLM2 on 2 cores.
- **embedded model, sample experiment** (``--parts sample``): the default experiment
  (``experiment=sample``: 7 documents x fixed_500_o0 and semantic_minilm, SmolLM2 and MiniLM) at
  the paper's counts (every passage a focus passage, 5 statements, 5 questions, 20 segments),
  scored as ``hope-run`` scores it (``score_pair_stream`` with the run config's evaluator). The
  full run is sent cold into ``--work-dir``'s cache (a stopped run resumes from it); then the
  full run and each sequential run are scored again from that cache, and their requests are the
  distinct requests each asked of it, what it would send cold (an item's answers are fixed by
  its seed, so a sequential run asks a subset of the full run's requests). The second full run with
  another seed is not made here (it would double the hours).

Draw orders (``--orders``): each sequential run is repeated with ``hope.sampling.order_seed`` 0, 1,
..., every item keeping its answers (the run's seed is 0, so order seed 0 is the default draw).
A stop depends on which items happened to be drawn first, so one draw is one sample of the rule:
each ε keeps the default draw's figures in full and, under ``orders``, every order's summary and
the median and spread of its request share and agreement. The targets are judged on the medians,
and the record says how many orders meet both.

Decisions: for every pair of chunkings of a document, ``sampling_stats.compare`` (a t test of the
HOPE difference at 95 %) on the items each run scored; agreement is the share of pairs where the
sequential run's decision (higher, lower or undecided) is the full run's. Also recorded: the
comparisons the rule itself decided (disjoint intervals) whose order the full run's point scores
contradict, and, as context for the agreement target, the agreement of a second full run with
another seed (``full_seed_1``): the decisions of two full runs differ too.

Targets (issue 34): agreement >= 95 % with <= 25 % of the full run's requests, on every workload.
Output: bench/results/sequential.json (``make bench-sequential``). What the workloads share is in
``sequential_runs.py``, the sample experiment's workload in ``sequential_sample.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from hope.core.hope_settings import SamplingSettings
from hope.core.io import write_json_atomic
from sampling_stats import (
    DEFAULT_ITEMS_RECORD,
    agreement,
    decisions,
    hope_of,
    load_items_records,
    replay_sequential,
    requests_for,
    scored_chunkings,
)
from sequential_runs import (
    TARGETS,
    by_document,
    chunked_pairs,
    disjoint_contradicted,
    first_round,
    over_orders,
    per_document,
    sampling,
    summarise,
)
from sequential_sample import sample
from workloads import chunkers, mirror_documents, select, simulated_llm, simulated_server

PARTS = "simulated,replayed"
ALL_PARTS = {"simulated", "replayed", "sample"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10, help="mirror documents (simulated)")
    # Finer between 0.15 and 0.2, where the simulated workload's request share crosses the target.
    parser.add_argument("--epsilons", default="0.02,0.03,0.05,0.1,0.15,0.16,0.17,0.18,0.2")
    parser.add_argument("--alpha", type=float, default=0.05)
    # Round sizes default to the profiles' (every segment in the first round), except the replay's
    # focus passages: its populations are 16 items, not a whole chunking.
    defaults = SamplingSettings()
    parser.add_argument("--round-focus-passages", type=int, default=defaults.round_focus_passages)
    parser.add_argument("--round-segments", type=int, default=defaults.round_segments)
    parser.add_argument(
        "--replay-round-focus-passages",
        type=int,
        default=2,
        help="rounds of the replay and of the sample experiment: their populations are 5-16 "
        "focus passages, not a whole chunking",
    )
    parser.add_argument("--replay-round-segments", type=int, default=defaults.round_segments)
    parser.add_argument(
        "--orders",
        type=int,
        default=5,
        help="draw orders per epsilon (hope.sampling.order_seed 0..N-1; 0 is the default draw)",
    )
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--parallel-pairs", type=int, default=8)
    parser.add_argument("--work-dir", default=None, help="where the mirror is prepared")
    parser.add_argument(
        "--items",
        action="append",
        help="replayed part: an items record (repeat for several, pooled as bench_precision.py "
        f"pools them; default {DEFAULT_ITEMS_RECORD})",
    )
    parser.add_argument(
        "--parts",
        default=PARTS,
        help="simulated, replayed (the default, both) and/or sample; parts other than the "
        "default pair are added to the record at --output as sections with their own "
        "provenance, keeping the other parts'; a run of the default pair keeps every section "
        "that has a provenance of its own (a part run on its own)",
    )
    parser.add_argument("--output", default="bench/results/sequential.json")
    parser.add_argument(
        "--sample-section",
        default="embedded_sample",
        help="sample part: the record's section it writes; another name keeps the default one, "
        "e.g. embedded_sample_small_rounds for a run with other --replay-round-* sizes",
    )
    parser.add_argument(
        "--items-output",
        default=None,
        help="sample part: also write the full run's items, per document and chunker, as a "
        "record bench/bench_precision.py reads (bench/results/precision_items_sample.json)",
    )
    return parser.parse_args(argv)


# --- simulated paper workload --------------------------------------------------------------------


def score_all(
    base_url: str, documents, chunker_list, cache_path: Path, args, sampling_cfg, seed: int = 0
):
    from hope.core.evaluator import HopeEvaluator
    from hope.core.hope_settings import load_profile
    from hope.core.response_cache import ResponseCache
    from hope.models.embeddings import CachingEmbedder, HashingEmbedder
    from hope.pipeline.score_step import score_pair_stream

    cache = ResponseCache(cache_path)
    llm = simulated_llm(base_url, args.concurrency, cache)
    embedder = CachingEmbedder(HashingEmbedder(), cache)
    overrides = {"sampling": sampling_cfg} if sampling_cfg else {}
    settings = load_profile("paper", progress=False, seed=seed, **overrides)
    evaluator = HopeEvaluator(llm, embedder, settings)

    started = time.perf_counter()
    scored = asyncio.run(
        score_pair_stream(
            evaluator,
            chunked_pairs(cache, documents, chunker_list),
            parallel_pairs=args.parallel_pairs,
            progress=False,
        )
    )
    wall = time.perf_counter() - started
    by_doc = by_document(scored)
    usage = llm.usage.to_dict()
    cache.close()
    return by_doc, {"requests": usage["requests"], "failures": usage["failures"], "wall_s": wall}


def simulated(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="hope-bench-sequential-"))
    work.mkdir(parents=True, exist_ok=True)
    documents = select(mirror_documents(work), args.docs)
    chunker_list = chunkers()
    out: dict[str, Any] = {
        "documents": [d["doc_id"] for d in documents],
        "document_chars": sum(len(d["text"]) for d in documents),
        "chunkers": [c.name for c in chunker_list],
        "profile": "paper (every passage, 5 statements, 5 questions, 20 segments)",
        "runs": {},
    }
    with simulated_server(0.0) as (base_url, _stats):
        print("simulated: full run", file=sys.stderr)
        full, full_usage = score_all(
            base_url, documents, chunker_list, work / "full.sqlite", args, None
        )
        out["full"] = full_usage
        full_decisions = {
            doc: decisions({c: v["items"] for c, v in chunks.items()})
            for doc, chunks in full.items()
        }
        # Context for the agreement target: how often a second full run, with another seed (other
        # statements, questions and segments), decides as the first.
        print("simulated: full run, seed 1", file=sys.stderr)
        rerun, rerun_usage = score_all(
            base_url, documents, chunker_list, work / "full-seed1.sqlite", args, None, seed=1
        )
        out["full_seed_1"] = {
            **rerun_usage,
            "decisions": agreement(
                {(d, *p): v for d, found in full_decisions.items() for p, v in found.items()},
                {
                    (d, *p): v
                    for d, chunks in rerun.items()
                    for p, v in decisions({c: x["items"] for c, x in chunks.items()}).items()
                },
            ),
        }
        for epsilon in [float(e) for e in args.epsilons.split(",")]:

            def measure(order_seed: int, epsilon: float = epsilon) -> dict[str, Any]:
                print(
                    f"simulated: sequential, epsilon {epsilon}, order {order_seed}",
                    file=sys.stderr,
                )
                cfg = sampling(args, epsilon, order_seed=order_seed)
                cache = work / f"seq-{epsilon}-order{order_seed}.sqlite"
                seq, seq_usage = score_all(base_url, documents, chunker_list, cache, args, cfg)
                per_doc = per_document(seq, full, full_decisions)
                return {
                    "wall_s": seq_usage["wall_s"],
                    "failures": seq_usage["failures"],
                    **summarise(per_doc, seq_usage["requests"], full_usage["requests"]),
                    "documents": per_doc,
                }

            out["runs"][str(epsilon)] = {
                "sampling": sampling(args, epsilon),
                **over_orders(args.orders, measure),
            }
    from hope.core.hope_settings import load_profile

    paper = load_profile("paper", progress=False)
    out["first_round"] = first_round(out["runs"], paper.semantic_independence.n_questions)
    return out


# --- embedded model, replayed ---------------------------------------------------------------------


def items_paths(args: argparse.Namespace) -> list[str]:
    return args.items or [DEFAULT_ITEMS_RECORD]


def missing_items(args: argparse.Namespace) -> list[str]:
    """The items records the replay is given that do not exist (it runs only without any)."""
    return [path for path in items_paths(args) if not Path(path).is_file()]


def replayed(args: argparse.Namespace) -> dict[str, Any] | None:
    from hope.core.hope_settings import load_profile

    if missing_items(args):
        return None
    source, about = load_items_records(items_paths(args))
    n_questions = source["settings"]["hope_size"]["questions"]
    out: dict[str, Any] = {
        "source": {"records": about, "hope_size": source["settings"]["hope_size"]},
        "runs": {},
    }
    corpora = {}
    for name, corpus in source["corpora"].items():
        chunkings = {c: h["items"] for c, h in scored_chunkings(corpus, "paper").items()}
        if len(chunkings) >= 2:
            corpora[name] = chunkings
    out["corpora"] = sorted(corpora)
    full_requests = 0
    full_decisions = {}
    for name, chunkings in corpora.items():
        counts = {
            c: {
                "focus_passages": max(len(i["concept_unity"]), len(i["semantic_independence"])),
                "segments": len(i["information_preservation"]),
            }
            for c, i in chunkings.items()
        }
        shared = max(d["segments"] for d in counts.values())
        full_requests += requests_for(counts, n_questions, shared)
        full_decisions[name] = decisions(chunkings)
    out["full"] = {"requests": full_requests}
    for epsilon in [float(e) for e in args.epsilons.split(",")]:
        settings = load_profile("paper", progress=False, sampling=sampling(args, epsilon, True))

        def measure(order_seed: int, settings=settings) -> dict[str, Any]:
            return replay_run(
                corpora, settings, order_seed, full_decisions, full_requests, n_questions
            )

        out["runs"][str(epsilon)] = {
            "sampling": sampling(args, epsilon, True),
            **over_orders(args.orders, measure),
        }
    out["first_round"] = first_round(out["runs"], n_questions)
    return out


def replay_run(
    corpora, settings, order_seed: int, full_decisions, full_requests: int, n_questions: int
) -> dict[str, Any]:
    """The rule replayed on every corpus's items with draw order ``order_seed``: its summary
    (requests counted from the items drawn, ``n_questions`` per focus passage)."""
    requests, per_doc = 0, []
    for name, chunkings in corpora.items():
        replay = replay_sequential(chunkings, settings, seed=order_seed)
        drawn = {c: r["record"]["drawn"] for c, r in replay.items()}
        shared = len(set().union(*(r["drawn_segment_positions"] for r in replay.values())))
        requests += requests_for(drawn, n_questions, shared)
        found = decisions({c: r["items"] for c, r in replay.items()})
        made, wrong = disjoint_contradicted(
            {c: r["record"] for c, r in replay.items()},
            {c: hope_of(i) for c, i in chunkings.items()},
        )
        per_doc.append(
            {
                "doc_id": name,
                "agreement": agreement(full_decisions[name], found),
                "stopped": {c: r["record"]["stopped"] for c, r in replay.items()},
                "drawn": {
                    c: [r["record"]["drawn"], r["record"]["population"]] for c, r in replay.items()
                },
                "rule_decided": made,
                "rule_contradicted": wrong,
            }
        )
    return {**summarise(per_doc, requests, full_requests), "documents": per_doc}


HEADER = {
    "benchmark": "the sequential stopping rule against the full run (issue 34)",
    "targets": TARGETS,
    "decision_test": "sampling_stats.compare: t test of the HOPE difference at 95 % on each "
    "run's scored items (segments paired, df = smallest item count - 1)",
}


def kept_sections(output: Path | str, sections: dict[str, Any]) -> dict[str, Any]:
    """The sections of the record at ``output`` that this run does not write and that carry
    their own provenance (a part run on its own, such as the sample experiment's hours): a run of
    the default parts keeps them rather than dropping them with the old record."""
    path = Path(output)
    if not path.is_file():
        return {}
    old = json.loads(path.read_text(encoding="utf-8"))
    return {
        key: value
        for key, value in old.items()
        if key != "provenance"
        and key not in sections
        and isinstance(value, dict)
        and "provenance" in value
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = harness.start(argv)
    parts = {p for p in args.parts.split(",") if p}
    if unknown := parts - ALL_PARTS:
        raise SystemExit(f"--parts: unknown part(s) {sorted(unknown)}")
    sections: dict[str, Any] = {}
    if "simulated" in parts:
        sections["simulated"] = simulated(args)
    if "replayed" in parts:
        embedded = replayed(args)
        sections["embedded_replayed"] = (
            embedded
            if embedded is not None
            else {
                "status": "not run",
                "reason": f"{', '.join(missing_items(args))} not found (make "
                "bench-precision-items writes it)",
            }
        )
    if "sample" in parts:
        sections[args.sample_section] = sample(args, run)
    if args.parts == PARTS:
        run.write_record(
            args.output, {**HEADER, **sections, **kept_sections(args.output, sections)}
        )
    else:
        # One part into the record: the other part's section keeps its own provenance block.
        for key, section in sections.items():
            run.merge_section(args.output, key, section)
        record = json.loads(Path(args.output).read_text(encoding="utf-8"))
        write_json_atomic(args.output, {**record, **HEADER})
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
