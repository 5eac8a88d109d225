"""Joining the per-(document, chunker) tables of the pipeline into one frame of pairs."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import pandas as pd

from hope.analysis.paper import HOPE_METRICS, INDICATORS, KEYS


class JoinError(ValueError):
    """The input tables cannot be joined on (doc_id, chunker) as they are."""


@dataclass(frozen=True)
class JoinReport:
    """What the join found: pairs kept, and per table the pairs it has no row for."""

    n_pairs: int
    missing: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # RAG indicators the ragas table has no column for (not configured in ragas.metrics).
    not_run: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {
            "pairs": self.n_pairs,
            "missing": {name: len(keys) for name, keys in self.missing.items()},
            "indicators_not_run": list(self.not_run),
        }


def _preview(keys: Sequence[tuple[str, str]], limit: int = 5) -> str:
    shown = ", ".join(f"({d!r}, {c!r})" for d, c in keys[:limit])
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return shown + more


def _check_table(df: pd.DataFrame, name: str, required: Sequence[str]) -> pd.DataFrame:
    absent = [c for c in required if c not in df.columns]
    if absent:
        raise JoinError(f"{name} table lacks column(s) {absent}; it has {list(df.columns)}")
    df = df.copy()
    for key in KEYS:
        if df[key].isna().any():
            rows = df.index[df[key].isna()].tolist()[:5]
            raise JoinError(f"{name} table: empty {key!r} in row(s) {rows}")
        df[key] = df[key].astype(str)
    duplicated = df.duplicated(list(KEYS), keep=False)
    if duplicated.any():
        keys = sorted(set(map(tuple, df.loc[duplicated, list(KEYS)].to_numpy().tolist())))
        raise JoinError(f"{name} table: duplicate (doc_id, chunker) pair(s) {_preview(keys)}")
    for column in required:
        if column in KEYS or column == "domain":
            continue
        try:
            df[column] = pd.to_numeric(df[column], errors="raise").astype(float)
        except (TypeError, ValueError) as exc:
            raise JoinError(f"{name} table: column {column!r} is not numeric ({exc})") from exc
    return df


def join_pairs(
    scores: pd.DataFrame,
    bleu: pd.DataFrame,
    ragas: pd.DataFrame,
    *,
    allow_missing: Collection[str] = ("ragas",),
) -> tuple[pd.DataFrame, JoinReport]:
    """One row per (doc_id, chunker) of ``scores`` with BLEU and the four RAG indicators.

    ``scores`` defines the population. A pair of ``bleu`` or ``ragas`` that ``scores`` does not
    have is always an error (the tables come from different runs). A pair of ``scores`` missing
    from a table named in ``allow_missing`` gets NaN there and is listed in the report: the ragas
    stage writes no row for a document without questions, which is legitimate, whereas a missing
    BLEU row means a broken pipeline. Extra columns are ignored; ``domain`` is taken from
    ``scores`` and, where ``ragas`` has one too, must agree with it. An indicator the ragas table
    has no column for was not run (``ragas.metrics``): its column is NaN and the report names it;
    a ragas table with none of the four is an error.
    """
    scores = _check_table(scores, "scores", [*KEYS, "domain", *HOPE_METRICS])
    bleu = _check_table(bleu, "bleu", [*KEYS, "bleu"])
    not_run = tuple(c for c in INDICATORS if c not in ragas.columns)
    if len(not_run) == len(INDICATORS) and len(ragas.columns):
        raise JoinError(f"ragas table has none of the columns {list(INDICATORS)}")
    ragas = _check_table(ragas.assign(**dict.fromkeys(not_run, float("nan"))), "ragas", [*KEYS])
    if scores.empty:
        raise JoinError("scores table has no rows")

    base = scores.set_index(list(KEYS))
    frame = base[["domain", *HOPE_METRICS]]
    missing: dict[str, list[tuple[str, str]]] = {}
    for name, table, columns in (
        ("bleu", bleu, ["bleu"]),
        ("ragas", ragas, list(INDICATORS)),
    ):
        indexed = table.set_index(list(KEYS))
        extra = sorted(indexed.index.difference(base.index))
        if extra:
            raise JoinError(
                f"{name} table has {len(extra)} pair(s) that the scores table lacks: "
                f"{_preview(extra)}"
            )
        absent = sorted(base.index.difference(indexed.index))
        if absent and name not in allow_missing:
            raise JoinError(
                f"{name} table lacks {len(absent)} of {len(base)} pair(s): {_preview(absent)}"
            )
        missing[name] = absent
        if name == "ragas" and "domain" in indexed.columns:
            theirs = indexed["domain"].reindex(base.index)
            clash = theirs.notna() & (theirs.astype(str) != base["domain"].astype(str))
            if clash.any():
                clashing = list(base.index[clash])
                raise JoinError(f"ragas and scores disagree on the domain of {_preview(clashing)}")
        frame = frame.join(indexed[columns], how="left")

    frame = frame.reset_index()[[*KEYS, "domain", *HOPE_METRICS, "bleu", *INDICATORS]]
    return frame, JoinReport(n_pairs=len(frame), missing=missing, not_run=not_run)
