"""The paper's outputs (Tables 1-2, Figures 6-7, leaderboard) from files to files: what the DVC
stage ``paper_outputs`` (the notebook ``notebooks/paper_outputs.py``, run headless) calls.

Reads the per-(document, chunker) tables of the pipeline

* ``data/hope/scores.csv`` (HOPE and sub-metrics; empty cell = undefined),
* ``data/bleu/bleu.jsonl`` (BLEU baseline),
* ``data/ragas/per_doc_chunker.csv`` (AC, FC, CR, RR),
* ``data/prepared/table1.csv`` (Table 1),
* ``data/probe/results.json`` (the probe's retrieval ranking, optional: beside HOPE on the
  leaderboard and in ``figure_probe_vs_hope``),

and writes to ``out_dir`` (``paper_figures/``): ``table1``, ``table2`` and ``leaderboard`` as
``.csv``/``.md``/``.tex``, ``figure6``, ``figure6_by_chunker``, ``figure7`` and (with the probe)
``figure_probe_vs_hope`` as ``.png``/``.pdf``,
the plot data ``figure7_bins.csv`` and ``figure7_gains.csv``, the joined ``pairs.csv`` and the
headline numbers ``metrics.json``. Every file is written atomically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from hope.analysis.report import AnalysisConfig, AnalysisResult, build_outputs
from hope.core.io import InputFileError, read_jsonl, write_atomic

DEFAULT_SCORES = Path("data/hope/scores.csv")
DEFAULT_BLEU = Path("data/bleu/bleu.jsonl")
DEFAULT_RAGAS = Path("data/ragas/per_doc_chunker.csv")
DEFAULT_TABLE1 = Path("data/prepared/table1.csv")
DEFAULT_PROBE = Path("data/probe/results.json")
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
    probe: str | Path | None = None,
) -> dict[str, Any]:
    return {
        "scores": read_csv_table(scores, "scores file"),
        "bleu": read_jsonl_table(bleu, "bleu file"),
        "ragas": read_csv_table(ragas, "ragas file"),
        "table1": read_csv_table(table1, "table1 file") if table1 else None,
        "probe": read_probe_report(probe) if probe else None,
    }


def read_probe_report(path: str | Path) -> dict[str, Any]:
    """The probe's report (JSON); errors name the file and what is missing."""
    from hope.analysis.probe_board import ProbeReportError, probe_measure

    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"probe report {path}: no such file")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputFileError(f"probe report {path}: not JSON ({exc})") from exc
    if not isinstance(report, dict) or "domains" not in report:
        raise InputFileError(f"probe report {path}: no 'domains' (not a probe report)")
    try:
        probe_measure(report)
    except ProbeReportError as exc:
        raise InputFileError(f"probe report {path}: {exc}") from exc
    return report


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
    """Read (``inputs``: the paths of :func:`read_inputs`), compute, write; a bad input raises
    (InputFileError naming the file and line, JoinError) before anything is written."""
    found = read_inputs(**inputs)
    result = build_outputs(
        found["scores"], found["bleu"], found["ragas"], found["table1"], config, found["probe"]
    )
    return result, write_outputs(result, out_dir)
