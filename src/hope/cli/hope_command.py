"""The ``hope`` command line.

    hope score --document doc.txt --passages passages.jsonl [--output result.json] [overrides...]
    hope labelled --corpus corpus.md --questions questions.jsonl --passages passages.jsonl
    hope merge-shards SWEEP_DIR --output merged/     # the shards of a sharded hope-run multirun
    hope ui                                          # MLflow UI, links that open on the chunkers

Overrides are Hydra overrides of the packaged ``score`` config, e.g. ``hope=reference``,
``llm=vllm``, ``llm.base_url=http://gpu-box:8000/v1``, ``hope.seed=7``, ``embedder=hashing``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from hope.core.io import read_passages_jsonl, read_text, write_json_atomic
from hope.core.result import NothingScoredError, check_something_scored


def _score(args: argparse.Namespace) -> int:
    from hope.models.factory import build_evaluator
    from hope.pipeline.score_step import score_config

    document = read_text(args.document, "document")
    passages, ids = read_passages_jsonl(args.passages)
    result = build_evaluator(score_config(args.overrides)).evaluate(document, passages, ids)
    check_something_scored([result])  # a result of nulls only is no result: exit 3, no file
    payload = result.to_dict()
    if args.output:
        write_json_atomic(args.output, payload)
        counts = ", ".join(
            f"{name} {c['scored']}/{c['total']}" for name, c in payload["counts"].items()
        )
        scores = " ".join(
            f"{k}={'nan' if v is None else f'{v:.4f}'}"
            for k, v in payload.items()
            if k in ("hope", "concept_unity", "semantic_independence", "information_preservation")
        )
        print(f"{scores}\nscored items: {counts}; failures: {len(payload['failures'])}")
        print(f"wrote {args.output}")
    else:
        json.dump(payload, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hope", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    from hope.cli.batch_command import add_batch_command
    from hope.cli.labelled_command import add_labelled_command
    from hope.cli.probe_command import add_probe_command
    from hope.cli.ui_command import add_ui_command
    from hope.pipeline.shards import add_merge_command

    add_labelled_command(sub)
    add_probe_command(sub)
    add_merge_command(sub)
    add_batch_command(sub)
    add_ui_command(sub)
    score = sub.add_parser(
        "score",
        help="score one document's passages with HOPE",
        description="Score passages (a chunking of one document) with HOPE and its sub-metrics.",
    )
    score.add_argument("--document", required=True, help="UTF-8 text file of the document")
    score.add_argument(
        "--passages", required=True, help='JSON lines: {"text": ..., "passage_id": ...} per passage'
    )
    score.add_argument("--output", help="write the result JSON here (atomically) instead of stdout")
    score.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. hope=reference")
    score.set_defaults(handler=_score)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    from hope.models.model_errors import BackendError
    from hope.models.preflight import BACKEND_EXIT_CODE

    try:
        return args.handler(args)
    except (BackendError, NothingScoredError) as exc:
        # preflight, mid-run, or every item failed: nothing written, answers stay cached
        print(f"hope: error: {exc}", file=sys.stderr)
        return BACKEND_EXIT_CODE
    except ValueError as exc:  # InputFileError, InputError, settings validation, bad config values
        print(f"hope: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException

        if isinstance(exc, HydraException | OmegaConfBaseException):
            print(f"hope: configuration error: {exc}", file=sys.stderr)
            return 2
        raise
