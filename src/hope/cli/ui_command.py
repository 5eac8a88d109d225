"""``hope ui``: the MLflow UI on this repository's store, with links that open on the chunkers.

    hope ui                     # mlflow ui on sqlite:///mlflow.db (or MLFLOW_TRACKING_URI)
    hope ui --print-only        # only the links

Prints, per chunker run kind (HOPE, labelled, probe), the runs table filtered to that kind and
the compare view of the latest run's chunker runs, then serves the UI until interrupted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Any

DEFAULT_STORE = "sqlite:///mlflow.db"
TITLES = {
    "chunker": "HOPE chunker runs",
    "labelled_chunker": "labelled-benchmark chunker runs",
    "probe_chunker": "probe chunker runs",
}


def _ui(args: argparse.Namespace) -> int:
    from mlflow import MlflowClient

    from hope.tracking.views import experiment_views

    uri = args.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_STORE
    base = f"http://{args.host}:{args.port}"
    try:
        exp_id, views = experiment_views(MlflowClient(tracking_uri=uri), args.experiment, base)
    except LookupError as exc:
        print(f"hope ui: error: {exc}", file=sys.stderr)
        return 2
    print(f"experiment {args.experiment!r} (id {exp_id}) in {uri}")
    for view in views:
        print(f"\n{TITLES[view.kind]}:")
        print(f"  runs table: {view.runs}")
        if view.compare:
            print(f"  compare {len(view.chunkers)} runs of {view.parent_run}: {view.compare}")
        else:
            print("  compare: none logged yet")
    sys.stdout.flush()
    if args.print_only:
        return 0
    command = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri]
    command += ["--host", args.host, "--port", str(args.port)]
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 0


def add_ui_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``ui`` on an argparse subparsers object (``hope ui ...``)."""
    from hope.cli.cli_arguments import positive_int

    parser = subparsers.add_parser(
        "ui",
        help="serve the MLflow UI and print links that open on the chunker runs",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--tracking-uri", help=f"MLflow store (default: MLFLOW_TRACKING_URI, else {DEFAULT_STORE})"
    )
    parser.add_argument("--experiment", default="hope", help="experiment name (default: hope)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=positive_int, default=5000)
    parser.add_argument("--print-only", action="store_true", help="print the links, serve nothing")
    parser.set_defaults(handler=_ui)
    return parser
