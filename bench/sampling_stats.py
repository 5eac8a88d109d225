"""What bench_sequential and bench_precision share: a chunking's HOPE and its standard error from
its item scores, the test that decides which of two chunkings of one document scores higher, the
sequential rule replayed on item scores, the LLM requests a set of items costs, and the items
records of separate runs read as one.

Items of one chunking: ``{"concept_unity": [score | None per focus passage],
"semantic_independence": [...], "information_preservation": [True/False/None per segment]}``, the
segments in the document's order (every chunking of a document is asked about the same segments,
so information preservation is compared segment by segment); None is a failed item, left out.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

METRICS = ("concept_unity", "semantic_independence", "information_preservation")
Items = Mapping[str, Sequence[Any]]
# The items record that make bench-precision-items writes, read by both scripts by default.
DEFAULT_ITEMS_RECORD = "bench/results/precision_items.json"


def items_of(result: Any) -> dict[str, list[Any]]:
    """A ``HopeResult``'s items: focus passages in index order (those not sampled left out),
    segments in document order."""
    focus = [
        p
        for p in result.passages
        if p["concept_unity"]["status"] != "not_sampled"
        or p["semantic_independence"]["status"] != "not_sampled"
    ]

    def score(record: Mapping[str, Any]) -> float | None:
        return record["score"] if record["status"] == "ok" else None

    return {
        "concept_unity": [score(p["concept_unity"]) for p in focus],
        "semantic_independence": [score(p["semantic_independence"]) for p in focus],
        "information_preservation": [
            bool(s["correct"]) if s["status"] == "ok" else None for s in result.segments
        ],
    }


def _mean(values: Sequence[Any]) -> float:
    kept = [float(v) for v in values if v is not None]
    return float(np.mean(kept)) if kept else float("nan")


def hope_of(items: Items, weights: Sequence[float] = (1.0, 1.0, 1.0)) -> float:
    """Eq. 10 (paper aggregation) from the items."""
    parts = [_mean(items[name]) for name in METRICS]
    return float(sum(w * v for w, v in zip(weights, parts, strict=True)) / sum(weights))


def _finite(values: Sequence[Any]) -> np.ndarray:
    return np.array([float(v) for v in values if v is not None], dtype=float)


def _variance_of_mean(values: np.ndarray) -> float:
    """The squared standard error of a mean (sample variance with n - 1 over n); NaN below 2."""
    return float(np.var(values, ddof=1) / values.size) if values.size >= 2 else float("nan")


def standard_error(items: Items) -> float:
    """HOPE's standard error: the sub-metrics' standard errors combined as eq. 10 combines the
    means (equal weights; concept unity and semantic independence taken as independent). NaN
    with fewer than 2 scored items of any sub-metric: one item says nothing about the spread
    (a bootstrap would call it exact)."""
    parts = [_variance_of_mean(_finite(items[name])) for name in METRICS]
    return float(np.sqrt(sum(parts)) / len(METRICS))


def compare(a: Items, b: Items, confidence: float = 0.95) -> int:
    """+1 if chunking ``a`` of a document scores significantly higher than ``b``, -1 if lower, 0
    if undecided: a t test of the HOPE difference. Focus passages differ between chunkings, so
    their sub-metrics enter as independent means; the segments are the same, so information
    preservation enters as the mean of per-segment differences. Degrees of freedom: the
    smallest item count less one (conservative); fewer than 2 items of any kind decide nothing."""
    from scipy.stats import t as student

    variance, counts = 0.0, []
    for name in METRICS[:2]:
        for items in (a, b):
            values = _finite(items[name])
            counts.append(values.size)
            variance += _variance_of_mean(values)
    ip = [
        float(x) - float(y)
        for x, y in zip(a[METRICS[2]], b[METRICS[2]], strict=False)
        if x is not None and y is not None
    ]
    counts.append(len(ip))
    variance += _variance_of_mean(np.array(ip))
    df = min(counts) - 1
    if df < 1 or not np.isfinite(variance):
        return 0
    diff = hope_of(a) - hope_of(b)
    if variance == 0.0:
        return int(np.sign(diff))
    t = diff / (np.sqrt(variance) / len(METRICS))
    critical = float(student.ppf(1 - (1 - confidence) / 2, df))
    return 1 if t > critical else -1 if t < -critical else 0


def decisions(
    chunkings: Mapping[str, Items], *, confidence: float = 0.95
) -> dict[tuple[str, str], int]:
    """``compare`` for each pair (a, b) of chunkings, in name order."""
    return {
        (a, b): compare(chunkings[a], chunkings[b], confidence)
        for a, b in itertools.combinations(sorted(chunkings), 2)
    }


def agreement(
    reference: Mapping[tuple[str, str], int], other: Mapping[tuple[str, str], int]
) -> dict[str, Any]:
    """How the decisions ``other`` makes compare with ``reference``'s, pair by pair."""
    pairs = sorted(reference)
    same = sum(reference[p] == other[p] for p in pairs)
    significant = [p for p in pairs if reference[p] != 0]
    return {
        "pairs": len(pairs),
        "agreeing": same,
        "agreement": same / len(pairs) if pairs else None,
        "reference_significant": len(significant),
        "significant_kept": sum(other[p] == reference[p] for p in significant),
        "reversed": sum(other[p] == -reference[p] != 0 for p in pairs),
        "new_significant": sum(reference[p] == 0 and other[p] != 0 for p in pairs),
    }


def requests_for(
    drawn: Mapping[str, Mapping[str, int]], n_questions: int, shared_segments: int
) -> int:
    """LLM requests of the drawn items of one document's chunkings (name -> {"focus_passages",
    "segments"}): per focus passage 1 (statements) + 1 (questions) + 2 per question (answers
    alone and with context); per segment 1 choice per chunking, plus its quadruple once for the
    document (``shared_segments``: segments drawn by any chunking), as the cache shares it."""
    per_passage = 2 + 2 * n_questions
    own = sum(per_passage * d["focus_passages"] + d["segments"] for d in drawn.values())
    return own + shared_segments


async def _replay_async(
    chunkings: Mapping[str, Items], settings: Any, seed: int
) -> dict[str, dict[str, Any]]:
    from hope.core.sequential_sampling import RoundBoard, SequentialState, draw_order

    board = RoundBoard(list(chunkings))

    async def one(name: str, items: Items) -> dict[str, Any]:
        n_focus = max(len(items["concept_unity"]), len(items["semantic_independence"]))
        n_segments = len(items["information_preservation"])
        state = SequentialState(
            settings,
            draw_order(list(range(n_focus)), seed, "focus", name),
            draw_order(list(range(n_segments)), seed, "segments"),
        )

        def record(metric: str, position: int) -> dict[str, Any]:
            values = items[metric]
            value = values[position] if position < len(values) else None
            if value is None:
                return {"status": "failed", "score": None, "correct": None}
            if metric == "information_preservation":
                return {"status": "ok", "correct": bool(value)}
            return {"status": "ok", "score": float(value)}

        while state.stopped is None:
            focus, segments = state.next_round()
            for metric in METRICS[:2]:
                state.add(metric, [record(metric, i) for i in focus])
            state.add(METRICS[2], [record(METRICS[2], i) for i in segments])
            state.close_round()
            await asyncio.sleep(0)
            state.stopped = await board.report(name, state)
        drawn_focus = set(state.focus_order[: state.focus_drawn])
        drawn_segments = set(state.segment_order[: state.segments_drawn])
        kept = {
            metric: [v for i, v in enumerate(items[metric]) if i in drawn_focus]
            for metric in METRICS[:2]
        }
        kept[METRICS[2]] = [
            v if i in drawn_segments else None
            for i, v in enumerate(items["information_preservation"])
        ]
        return {
            "items": kept,
            "drawn_segment_positions": sorted(drawn_segments),
            "record": state.record(),
        }

    results = await asyncio.gather(*(one(n, items) for n, items in chunkings.items()))
    return dict(zip(chunkings, results, strict=True))


def replay_sequential(
    chunkings: Mapping[str, Items], settings: Any, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """The sequential rule run on known item scores, the chunkings of one document on one board,
    as the evaluator runs it (``hope.core.sequential_sampling``): what each drew, why it stopped,
    and its drawn items (segments not drawn as None, so segments stay aligned)."""
    return asyncio.run(_replay_async(chunkings, settings, seed))


__all__ = [
    "DEFAULT_ITEMS_RECORD",
    "agreement",
    "compare",
    "decisions",
    "hope_of",
    "items_of",
    "load_items_records",
    "replay_sequential",
    "requests_for",
    "scored_chunkings",
    "standard_error",
]


def scored_chunkings(corpus: Mapping[str, Any], profile: str) -> dict[str, dict[str, Any]]:
    """name -> HOPE block under ``profile`` for the chunkings of one corpus of an items record
    whose HOPE was scored and kept its items; the others (HOPE undefined, failed, or not run)
    are left out."""
    found = {}
    for name, chunker in corpus["chunkers"].items():
        hope = (chunker.get("hope") or {}).get(profile) or {}
        if hope.get("status") == "ok" and "items" in hope:
            found[name] = hope
    return found


def load_items_records(paths: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Several items records as one (a corpus scored in separate runs, e.g. one per corpus):
    their corpora together, refused where a corpus is in two records or where the records'
    HOPE sizes or embedders differ (their items would not be draws of the same size). Also
    what each record is: path, commit, command, corpora and its LLM usage where it keeps one."""
    merged: dict[str, Any] = {}
    about = []
    for path in paths:
        source = json.loads(Path(path).read_text(encoding="utf-8"))
        if not merged:
            merged = {"settings": source["settings"], "corpora": {}}
        for key in ("hope_size", "embedder"):
            if source["settings"][key] != merged["settings"][key]:
                raise SystemExit(
                    f"{path}: {key} {source['settings'][key]!r} differs from {paths[0]}'s "
                    f"{merged['settings'][key]!r}: items of different runs pool only where both "
                    "match"
                )
        if clash := sorted(set(source["corpora"]) & set(merged["corpora"])):
            raise SystemExit(f"{path}: corpora {clash} are already in an earlier --source")
        merged["corpora"].update(source["corpora"])
        about.append(
            {
                "record": str(path),
                "commit": source["provenance"]["commit"],
                "command": source["provenance"]["command"],
                "corpora": sorted(source["corpora"]),
                **({"llm": source["llm"]} if "llm" in source else {}),
            }
        )
    return merged, about
