"""DVC stage ``labelled``: does HOPE pick the chunker that retrieves best? (issue #18)

Reads the labelled corpora and questions that ``labelled_data`` copied (``--data``) and params.yaml
``labelled:`` (``hope.labelled.benchmark.BenchmarkSettings``: corpora, chunkers, k, budget, HOPE
profiles and sizes; the ``sample`` experiment's slice by default, ``experiment=labelled`` the
whole 2-core benchmark). For every chunker on every corpus: labelled retrieval, the cheap
baselines, BLEU and HOPE; then Kendall τ and pairwise agreement of each label-free score with
the labelled measures, per corpus and pooled (``hope.labelled.convergent``). Writes

* ``results.json``: everything, per question and per item (no time, host or path);
* ``chunkers.csv``: one row per (corpus, chunker), the data of the DVC plot;
* ``metrics.json``: the headline for ``dvc metrics show`` and ``dvc exp show``, the pooled τ of
  HOPE and BLEU with budget recall and the LLM usage (every τ: results.json and the MLflow run);

and logs an MLflow run beside the HOPE runs (params.yaml ``tracking:``), a child per chunker.
Score columns: ``hope`` and the sub-metrics are the first profile's; another profile's carry its
name (``hope_robust``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hope.core.io import csv_text, json_text, write_atomic
from hope.pipeline.labelled_step import (
    chunker_settings,
    headline_metrics,
    run_labelled_stage,
    usage_by_chunker,
)
from hope.pipeline.stage_params import stage_params


def main(argv: list[str] | None = None) -> int:
    from hope.models.model_errors import BackendError
    from hope.models.preflight import BACKEND_EXIT_CODE
    from hope.pipeline.stage_support import stage_parser

    parser = stage_parser(
        __doc__,
        params=Path("params.yaml"),
        data=Path("data/labelled/source"),
        out_dir=Path("data/labelled"),
        conf_dir=Path("conf/chunker"),
    )
    parser.add_argument(
        "--cache", help="response cache file (default $HOPE_CACHE or .cache/hope/cache.sqlite)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        labelled = stage_params(args.params, "labelled")["labelled"]
        report, rows, metrics, timings = run_labelled_stage(
            labelled.benchmark(), args.data, args.conf_dir, args.cache
        )
    except BackendError as exc:  # nothing written, answers stay cached
        print(f"labelled: error: {exc}", file=sys.stderr)
        return BACKEND_EXIT_CODE
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"labelled: error: {exc}", file=sys.stderr)
        return 1
    out = args.out_dir
    write_atomic(out / "results.json", json_text(report))
    write_atomic(out / "chunkers.csv", csv_text(rows))
    write_atomic(out / "metrics.json", json_text(headline_metrics(metrics)))
    from hope.tracking.labelled_run import record_labelled_stage

    wall_s = round(time.perf_counter() - started, 1)
    run_id = record_labelled_stage(
        args.params,
        out,
        metrics,
        rows,
        {**timings, "labelled": wall_s},
        [args.data],
        usage_by_chunker=usage_by_chunker(report),
        chunker_configs=chunker_settings(sorted({str(r["chunker"]) for r in rows}), args.conf_dir),
    )
    pooled = metrics["tau_budget_recall"].get("pooled", {})
    print(
        f"labelled: {len(rows)} (corpus, chunker) rows -> {out}; "
        f"{metrics['usage']['requests']} LLM requests; tau vs budget recall, pooled: "
        f"hope {pooled.get('hope')} ({wall_s} s)",
        file=sys.stderr,
    )
    print(f"labelled: MLflow run {run_id or '- (tracking off)'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
