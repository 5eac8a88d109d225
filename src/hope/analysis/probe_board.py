"""The probe's label-free retrieval ranking beside HOPE on the leaderboard (issue #32).

HOPE scores a chunking by its passages; the probe (``data/probe/results.json``, the DVC stage
``probe`` or ``hope probe --output``) measures how well each chunking retrieves questions written
from the same documents, with known gold spans. :func:`probe_table` reads the probe's report into
one row per (scope, chunker), under the leaderboard's scopes (each domain, and ``overall`` for the
probe's pooled ranking): the mean of the measure the probe ranks by, its bootstrap interval and
the chunker's place in the probe's ranking. :func:`with_probe` joins those rows onto the
leaderboard, so that each scope shows which chunker HOPE picks and which retrieves best.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from hope.analysis.leaderboard import OVERALL

PROBE_COLUMNS = [
    "probe_measure",
    "probe",
    "probe_ci_low",
    "probe_ci_high",
    "probe_rank",
    "probe_behind_best",
    "probe_questions",
]


class ProbeReportError(ValueError):
    """A probe report without what the leaderboard needs (names the missing key)."""


def probe_measure(report: Mapping[str, Any]) -> str:
    """The measure the probe's rankings are read by (``primary_measure`` in the report)."""
    measure = report.get("primary_measure")
    if not isinstance(measure, str):
        raise ProbeReportError(
            "probe report has no 'primary_measure' (an older report): rerun the probe stage "
            "(dvc repro probe) or hope probe --output"
        )
    return measure


def _scope_rows(scope: str, result: Mapping[str, Any], measure: str) -> list[dict[str, Any]]:
    ranking = result.get("rankings", {}).get(measure)
    if ranking is None:
        raise ProbeReportError(f"probe report, scope {scope!r}: no ranking by {measure!r}")
    place = {chunker: i for i, chunker in enumerate(ranking, start=1)}
    behind = _behind_best(result.get("pairs", {}).get(measure, []), ranking[:1])
    rows = []
    for chunker, cell in result["chunkings"].items():
        values = cell.get("measures", {}).get(measure, {}) if cell.get("status") == "ok" else {}
        rows.append(
            {
                "scope": scope,
                "chunker": chunker,
                "probe_measure": measure,
                "probe": _number(values.get("mean")),
                "probe_ci_low": _number(values.get("low")),
                "probe_ci_high": _number(values.get("high")),
                "probe_rank": place.get(chunker, math.nan),
                "probe_behind_best": behind.get(chunker),
                "probe_questions": result.get("n_questions", 0),
            }
        )
    return rows


def _behind_best(pairs: list[Mapping[str, Any]], best: list[str]) -> dict[str, bool]:
    """Per chunker, whether the probe's paired bootstrap puts the scope's best significantly
    ahead of it (``None`` for the best itself and for chunkers without a pair)."""
    if not best:
        return {}
    found = {}
    for pair in pairs:
        if best[0] in pair["pair"]:
            other = next(c for c in pair["pair"] if c != best[0])
            found[other] = bool(pair["significant"]) and pair.get("better") == best[0]
    return found


def _number(value: Any) -> float:
    return float(value) if value is not None else math.nan


def probe_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per (scope, chunker): the probe's mean, interval and rank by its ranking measure
    (``PROBE_COLUMNS``); each domain, then ``overall`` from the pooled ranking."""
    measure = probe_measure(report)
    rows: list[dict[str, Any]] = []
    for domain, result in report.get("domains", {}).items():
        rows += _scope_rows(str(domain), result, measure)
    if "pooled" in report:
        rows += _scope_rows(OVERALL, report["pooled"], measure)
    return pd.DataFrame.from_records(rows, columns=["scope", "chunker", *PROBE_COLUMNS])


def with_probe(board: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard with the probe's columns beside each (scope, chunker); NaN where the probe
    did not measure a chunker or a scope. The board's rows and order stay as they are."""
    joined = board.merge(table, on=["scope", "chunker"], how="left", validate="one_to_one")
    joined["probe_questions"] = joined["probe_questions"].fillna(0).astype(int)
    return joined


def probe_sentence(board: pd.DataFrame, scope: str) -> str:
    """Which chunker the probe's ranking puts first in ``scope``, and whether HOPE's pick is it."""
    rows = board[(board["scope"] == scope) & board["probe_rank"].notna()]
    if rows.empty:
        return f"Retrieval probe: no ranking for {scope}."
    top = rows.sort_values("probe_rank").iloc[0]
    measure = top["probe_measure"]
    hope_pick = board[(board["scope"] == scope) & (board["rank"] == 1)]["chunker"].tolist()
    text = (
        f"Retrieval probe ({measure}, {int(top['probe_questions'])} questions written from the "
        f"documents): **{top['chunker']}** retrieves best ({top['probe']:.3f}"
    )
    if not math.isnan(top["probe_ci_low"]):
        text += f" [{top['probe_ci_low']:.3f}, {top['probe_ci_high']:.3f}]"
    text += ")"
    others = rows[rows["chunker"] != top["chunker"]]
    worse = others[others["probe_behind_best"].eq(True)]["chunker"].tolist()
    if others.empty:
        pass
    elif not worse:
        text += ", no other chunker significantly worse (paired bootstrap over the questions)"
    elif len(worse) == len(others):
        text += ", significantly better than every other chunker (paired bootstrap)"
    else:
        text += f", significantly better than {', '.join(worse)} (paired bootstrap)"
    if hope_pick:
        verb = "agrees with" if hope_pick[0] == top["chunker"] else "differs from"
        text += f"; its pick {verb} HOPE's"
    return text + "."


__all__ = [
    "PROBE_COLUMNS",
    "ProbeReportError",
    "probe_measure",
    "probe_sentence",
    "probe_table",
    "with_probe",
]
