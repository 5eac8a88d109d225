"""DVC stage ``hope``: HOPE and its sub-metrics for every (document, chunker) pair.

Reads ``data/prepared/documents.jsonl`` and ``data/chunks/passages.jsonl`` and the ``hope:``
section of ``params.yaml`` (profile, models, Hydra overrides of the ``score`` config), then writes

* ``data/hope/scores.csv``: one row per (doc_id, chunker): scores and item counts;
* ``data/hope/evidence.jsonl``: the full result of each pair (statements, questions, answers,
  quadruples, choices, failures, prompts);
* ``data/hope/summary.json``: usage (calls, tokens, cache hits, failures), failures per metric and
  chunker, prompts with versions, settings and model identities;
* ``data/hope/metrics.json`` and, with params.yaml's ``tracking:`` on, one MLflow run
  (``hope.tracking.stage``).

Outputs replace the old ones atomically, only when every pair is done. LLM answers go to the
response cache as they arrive, so a killed run picks up where it stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from hope.core.io import read_jsonl
from hope.core.result import NothingScoredError, check_something_scored
from hope.pipeline.score_step import (
    EvidenceStream,
    score_config,
    score_pairs,
    score_row,
    summarise,
    write_score_outputs,
)


def main(argv: list[str] | None = None) -> int:
    from hope.models.model_errors import BackendError
    from hope.models.preflight import BACKEND_EXIT_CODE

    try:
        return _main(argv)
    except (BackendError, NothingScoredError) as exc:
        # preflight, mid-run, or every item failed: nothing written, answers stay cached
        print(f"hope: error: {exc}", file=sys.stderr)
        return BACKEND_EXIT_CODE


def _main(argv: list[str] | None = None) -> int:
    from hope.models.factory import build_evaluator
    from hope.pipeline.stage_params import stage_params

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", default="data/prepared/documents.jsonl")
    parser.add_argument("--passages", default="data/chunks/passages.jsonl")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out-dir", default="data/hope")
    parser.add_argument("overrides", nargs="*", help="extra Hydra overrides, e.g. hope.seed=3")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    params = stage_params(args.params, "hope")["hope"]
    evaluator = build_evaluator(score_config([*params.score_overrides(), *args.overrides]))
    llm = evaluator.llm
    documents = read_jsonl(args.documents, "documents file")
    passages = read_jsonl(args.passages, "passages file")
    from hope.tracking.stage import record_score_stage, stage_trace_recorder

    llm.on_call = recorder = stage_trace_recorder(args.params)
    out = Path(args.out_dir)
    with EvidenceStream(out / "evidence.jsonl") as stream:
        scored = asyncio.run(
            score_pairs(
                evaluator,
                documents,
                passages,
                parallel_pairs=params.parallel_pairs,
                on_result=stream,
            )
        )
        # Inside the stream's block: raising here discards the evidence written so far.
        check_something_scored(
            (r for _, _, r in scored), f" of the {len(scored)} (document, chunker) pairs"
        )
    summary = summarise(scored, llm.usage.to_dict())
    write_score_outputs(out, [score_row(*item) for item in scored], summary)
    run_id = record_score_stage(
        args.params,
        out,
        [args.documents, args.passages],
        wall_s=time.perf_counter() - started,
        traces=recorder.calls if recorder is not None else (),
    )
    usage = summary["usage"]
    print(
        f"hope: {len(scored)} (document, chunker) pairs -> {out}; "
        f"{int(usage.get('requests', 0))} LLM requests, {int(usage.get('cache_hits', 0))} cache "
        f"hits, {int(usage.get('failures', 0))} failed items",
        file=sys.stderr,
    )
    print(f"hope: MLflow run {run_id or '- (tracking off)'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
