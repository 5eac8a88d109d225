"""DVC stage ``probe``: which chunker retrieves best in each domain, without labels (issue #32).

Reads ``data/prepared/documents.jsonl``, ``data/chunks/passages.jsonl`` and params.yaml
``probe:`` (writer, questions per domain, k, character budgets, embedder, resamples, seed); per
domain writes probe questions from the domain's documents and measures every chunker's retrieval
of them (``hope.pipeline.probe_step``), then writes

* ``data/probe/results.json``: per domain and pooled, each chunking's measures with intervals,
  the rankings, the pairwise decisions, and the questions with their gold spans, writer, seed and
  filter outcomes;
* ``data/probe/chunkers.csv``: one row per (domain, chunker) and per chunker pooled;
* ``data/probe/metrics.json``: the pooled ranking and means (``dvc metrics show``);

and, with params.yaml's ``tracking:`` on, an MLflow run with a child per chunker under the keys
of the labelled runs. Outputs are replaced atomically, only when every domain is done.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hope.core.io import csv_text, json_text
from hope.pipeline import stage_support as runner
from hope.pipeline.labelled_step import chunker_settings
from hope.pipeline.probe_step import probe_metrics, probe_rows, probe_writer, run_probe
from hope.pipeline.stage_params import stage_params


def main(argv: list[str] | None = None) -> int:
    parser = runner.stage_parser(
        __doc__,
        documents=runner.DEFAULT_DOCUMENTS,
        passages=Path("data/chunks/passages.jsonl"),
        params=Path("params.yaml"),
        out_dir=Path("data/probe"),
        conf_dir=Path("conf/chunker"),
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    timings: dict[str, float] = {}
    written: dict[str, object] = {}

    def compute() -> runner.StageOutput:
        from hope.core.stage_records import check_documents
        from hope.models.factory import embedder_preset

        probe = stage_params(args.params, "probe")["probe"]
        settings = probe.settings()
        writer = probe_writer(probe.writer, probe.llm)
        documents = runner.read_records(args.documents, "documents", check_documents)
        passages = runner.read_records(args.passages, "passages")
        report, domain_timings = run_probe(
            documents,
            passages,
            embedder_preset(probe.embedder),
            settings,
            writer,
            log=lambda message: print(f"probe: {message}", file=sys.stderr, flush=True),
        )
        timings.update(domain_timings)
        rows = probe_rows(report, settings)
        metrics = probe_metrics(report, settings)
        written.update(rows=rows, metrics=metrics, params=probe.model_dump())
        out = args.out_dir
        return runner.StageOutput(
            files={
                out / "results.json": json_text(report),
                out / "chunkers.csv": csv_text(rows),
                out / "metrics.json": json_text(metrics),
            },
            message=f"{metrics['questions']} probe questions in {len(report['domains'])} domains; "
            f"ranking by {metrics['measure']}: {metrics['ranking']} -> {out}",
        )

    status = runner.run_stage("probe", compute, (ValueError, FileNotFoundError, KeyError))
    if status != 0:
        return status
    from hope.tracking.probe_run import record_probe_stage

    timings["probe"] = round(time.perf_counter() - started, 1)
    run_id = record_probe_stage(
        args.params,
        args.out_dir,
        written["metrics"],
        written["rows"],
        timings,
        [args.documents, args.passages],
        probe_params=written["params"],
        chunker_configs=chunker_settings(
            sorted({str(r["chunker"]) for r in written["rows"]}), args.conf_dir
        ),
    )
    print(f"probe: MLflow run {run_id or '- (tracking off)'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
