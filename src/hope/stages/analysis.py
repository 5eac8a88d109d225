"""DVC stage ``analysis``: the paper's outputs (Tables 1-2, Figures 6-7, leaderboard).

Reads the per-(document, chunker) tables of the pipeline

* ``data/hope/scores.csv`` (HOPE and sub-metrics; empty cell = undefined),
* ``data/bleu/bleu.jsonl`` (BLEU baseline),
* ``data/ragas/per_doc_chunker.csv`` (AC, FC, CR, RR),
* ``data/prepared/table1.csv`` (Table 1),

and writes to ``--out`` (``paper_figures/``): ``table1``, ``table2`` and ``leaderboard`` as
``.csv``/``.md``/``.tex``, ``figure6``, ``figure6_by_chunker`` and ``figure7`` as ``.png``/``.pdf``,
the plot data ``figure7_bins.csv`` and ``figure7_gains.csv``, the joined ``pairs.csv`` and the
headline numbers ``metrics.json``. Every file is written atomically. The notebook
``notebooks/paper_outputs.py`` produces the same files through the same functions.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hope.analysis.data import JoinError
from hope.analysis.report import AnalysisConfig, AnalysisResult, build_outputs
from hope.io import InputFileError, read_jsonl, write_atomic
from hope.stage_runner import add_mlflow_args, log_folder_to_mlflow, stage_parser

DEFAULT_SCORES = Path("data/hope/scores.csv")
DEFAULT_BLEU = Path("data/bleu/bleu.jsonl")
DEFAULT_RAGAS = Path("data/ragas/per_doc_chunker.csv")
DEFAULT_TABLE1 = Path("data/prepared/table1.csv")
DEFAULT_OUT = Path("paper_figures")
# Join keys are identifiers: "007" must not become 7.
_KEY_DTYPES = {"doc_id": str, "chunker": str, "domain": str}


def read_csv_table(path: str | Path, what: str) -> pd.DataFrame:
    """A CSV with empty cells as NaN; errors name the file."""
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"{what} {path}: no such file")
    try:
        return pd.read_csv(path, dtype=_KEY_DTYPES, keep_default_na=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputFileError(f"{what} {path}: cannot be parsed as CSV ({exc})") from exc


def read_jsonl_table(path: str | Path, what: str) -> pd.DataFrame:
    """JSON lines of objects as a frame; a malformed line is named with its number."""
    frame = pd.DataFrame.from_records(read_jsonl(path, what))
    for key in ("doc_id", "chunker"):
        if key in frame.columns:
            frame[key] = frame[key].astype(str)
    return frame


def read_inputs(
    scores: str | Path = DEFAULT_SCORES,
    bleu: str | Path = DEFAULT_BLEU,
    ragas: str | Path = DEFAULT_RAGAS,
    table1: str | Path | None = DEFAULT_TABLE1,
) -> dict[str, pd.DataFrame | None]:
    return {
        "scores": read_csv_table(scores, "scores file"),
        "bleu": read_jsonl_table(bleu, "bleu file"),
        "ragas": read_csv_table(ragas, "ragas file"),
        "table1": read_csv_table(table1, "table1 file") if table1 else None,
    }


def write_outputs(result: AnalysisResult, out_dir: str | Path) -> list[Path]:
    """Write every output file atomically; returns the paths in name order."""
    out_dir = Path(out_dir)
    written = []
    for name, content in sorted(result.files().items()):
        write_atomic(out_dir / name, content)
        written.append(out_dir / name)
    return written


def run(
    *, out_dir: str | Path = DEFAULT_OUT, config: AnalysisConfig | None = None, **inputs: Any
) -> tuple[AnalysisResult, list[Path]]:
    """Read (``inputs``: the paths of :func:`read_inputs`), compute, write: what ``main`` and the
    notebook do."""
    result = build_outputs(*read_inputs(**inputs).values(), config)
    return result, write_outputs(result, out_dir)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = stage_parser(__doc__, scores=DEFAULT_SCORES, bleu=DEFAULT_BLEU, ragas=DEFAULT_RAGAS)
    parser.add_argument(
        "--table1", default=str(DEFAULT_TABLE1), help="Table 1 CSV; an empty string skips Table 1"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    defaults = AnalysisConfig()
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--bootstrap", type=int, default=defaults.n_boot, help="bootstrap resamples per cell"
    )
    parser.add_argument(
        "--min-n", type=int, default=defaults.min_n, help="fewest complete pairs for a statistic"
    )
    parser.add_argument("--bins", type=int, default=defaults.n_bins, help="Figure 7 bins (max)")
    parser.add_argument("--min-bin-size", type=int, default=defaults.min_bin_size)
    parser.add_argument("--binning", choices=("quantile", "width"), default=defaults.binning)
    parser.add_argument(
        "--require-ragas",
        action="store_true",
        help="fail when a pair has no RAGAS row (by default it counts as missing, NaN)",
    )
    add_mlflow_args(parser, "the outputs")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = AnalysisConfig(
            seed=args.seed,
            n_boot=args.bootstrap,
            min_n=args.min_n,
            n_bins=args.bins,
            min_bin_size=args.min_bin_size,
            binning=args.binning,
            allow_missing=() if args.require_ragas else ("ragas",),
        )
        result, written = run(
            scores=args.scores,
            bleu=args.bleu,
            ragas=args.ragas,
            table1=args.table1 or None,
            out_dir=args.out,
            config=config,
        )
    except (InputFileError, JoinError, KeyError, ValueError) as exc:
        print(f"error: analysis: {exc}", file=sys.stderr)
        return 1
    missing = {k: len(v) for k, v in result.join.missing.items() if v}
    print(f"analysis: {result.join.n_pairs} pairs; missing rows: {missing or 'none'}")
    print(result.texts["table2.md"])
    for path in written:
        print(f"  wrote {path}")
    log_folder_to_mlflow("analysis", args.out, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
