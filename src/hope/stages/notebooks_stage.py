"""DVC stage ``notebooks``: execute the jupytext notebooks of ``notebooks/`` headless.

Each ``notebooks/*.py`` (jupytext percent format, kept in git without outputs) is converted in
memory, run by papermill with the given parameters, and the executed notebook is written to
``--out-dir`` (``paper_figures/notebooks/<name>.ipynb``); a notebook that fails is kept as
``<name>.failed.ipynb`` for inspection and the stage exits non-zero. With ``--mlflow`` the
outputs the pipeline writes in ``--mlflow-dir`` (``paper_figures/``; those dvc.yaml declares, so
not a benchmark record's figure kept there) are then logged to an MLflow run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from hope.pipeline.notebooks_step import DEFAULT_NOTEBOOKS, DEFAULT_OUT_DIR, execute_notebook


def parse_parameter(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as YAML (numbers, booleans, lists), else a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    try:
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError:
        parsed = value
    return key.strip(), parsed


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help=f"jupytext .py notebooks (default: every {DEFAULT_NOTEBOOKS}/*.py)",
    )
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument(
        "-p",
        "--parameter",
        dest="parameters",
        action="append",
        type=parse_parameter,
        default=[],
        metavar="KEY=VALUE",
        help="papermill parameter (repeatable); the value is read as YAML",
    )
    parser.add_argument("--kernel", default=None, help="kernel name (default: this interpreter)")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the notebooks' working dir")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    parser.add_argument("--mlflow", action="store_true", help="log --mlflow-dir to MLflow")
    parser.add_argument(
        "--mlflow-run-id",
        default=None,
        help="that run (default: the parent run of the analysed scores, else a new one)",
    )
    parser.add_argument("--mlflow-dir", type=Path, default=Path("paper_figures"))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sources = args.notebooks or sorted(DEFAULT_NOTEBOOKS.glob("*.py"))
    if not sources:
        print(
            f"error: notebooks: no notebooks given or found in {DEFAULT_NOTEBOOKS}/",
            file=sys.stderr,
        )
        return 1
    parameters = dict(args.parameters)
    for source in sources:
        output = args.out_dir / f"{source.stem}.ipynb"
        try:
            execute_notebook(
                source,
                output,
                parameters,
                kernel_name=args.kernel,
                cwd=args.cwd,
                timeout=args.timeout,
            )
        except Exception as exc:  # papermill raises its own error types; all end the stage
            print(f"error: notebooks: {source}: {exc}", file=sys.stderr)
            return 1
        print(f"notebooks: executed {source} -> {output}")
    if args.mlflow:
        from hope.analysis.paper_tracking import log_outputs_to_mlflow, run_output_files

        # The analysed scores (parameter ``scores``, relative to --cwd) name the experiment run
        # whose parent MLflow run gets the outputs.
        scores = parameters.get("scores")
        scores = Path(args.cwd) / str(scores) if scores is not None else None
        files = run_output_files(args.mlflow_dir, Path.cwd())
        run_id = log_outputs_to_mlflow(
            args.mlflow_dir, args.mlflow_run_id, scores=scores, files=files
        )
        print(f"notebooks: logged {args.mlflow_dir} to MLflow run {run_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
