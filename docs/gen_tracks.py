"""The HOPE page's section "What HOPE tracks beyond passage length" (issue #34), generated from
the labelled record by ``gen_results.py`` in place of its marker line in ``docs/metric.md``: per
sub-metric, τ with the mean passage length and the partial τ with each labelled target given
it, and a sentence read off the intervals; then the same analysis at more items per chunking
(the ``precision_items`` record) where it exists.
"""

from __future__ import annotations

from typing import Any

from gen_markdown import TARGET_WORDS, markdown_table, short_commit


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.2f}"


PARTIAL = "partial_tau_given_length"
# The HOPE page holds this line where the section's figures go; the build puts them there.
TRACKS_PAGE = "metric.md"
TRACKS_MARKER = "<!-- gen_results: what HOPE tracks beyond passage length -->"
TRACKS_RECORD = "labelled"
# The same analysis at 16 focus passages and 16 segments per chunking (make bench-precision-items),
# shown after the labelled one where it exists: with one focus passage per chunking (the labelled
# benchmark's size) the bootstrap cannot see concept unity's and semantic independence's noise.
TRACKS_RECORD_LARGER = "precision_items"
SUB_METRICS = {
    "hope": "HOPE",
    "concept_unity": "Concept unity",
    "semantic_independence": "Semantic independence",
    "information_preservation": "Information preservation",
}


def _with_interval(cell: dict[str, Any] | None) -> str:
    if not cell or cell.get("tau") is None:
        reason = (cell or {}).get("reason")
        return f"undefined ({reason})" if reason else "–"
    return f"{cell['tau']:+.2f} [{_signed(cell.get('low'))}, {_signed(cell.get('high'))}]"


def _side(cell: dict[str, Any] | None) -> int | None:
    """+1 or −1 where the interval excludes 0 on that side, 0 where it includes 0, None where
    the value or its interval is undefined."""
    if not cell or cell.get("tau") is None or cell.get("low") is None or cell.get("high") is None:
        return None
    return 1 if cell["low"] > 0 else -1 if cell["high"] < 0 else 0


def _zero_width(cell: dict[str, Any] | None) -> bool:
    """An interval that is a point: every bootstrap replicate gave the same τ, as when each
    chunking has one scored item (the labelled benchmark's one focus passage)."""
    return bool(cell) and cell.get("low") is not None and cell.get("low") == cell.get("high")


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def tracks_sentence(label: str, pooled: dict[str, Any], score: str) -> str:
    """What one score tracks, in words, from the pooled intervals alone."""
    length = (pooled.get("tau_with_length") or {}).get(score)
    side = _side(length)
    interval = _with_interval(length)
    inner = label if label.isupper() else label.lower()  # the name inside a sentence
    if side and _zero_width(length):
        first = (
            f"{label}'s τ with the mean passage length is {length['tau']:+.2f}, with an interval "
            "of zero width: the record scored one item of it per chunking, so the bootstrap "
            "cannot see its sampling noise. No evidence either way."
        )
    elif side is None:
        first = f"{label}'s τ with the mean passage length is undefined ({interval})."
    elif side == 0:
        first = (
            f"No evidence that {inner} tracks passage length: its τ interval with the mean "
            f"passage length includes 0 ({interval})."
        )
    else:
        prefers = "longer" if side > 0 else "shorter"
        first = f"{label} tracks passage length: τ {interval}, it prefers {prefers} passages."
    by_side: dict[int | None, list[str]] = {}
    for target, cells in (pooled.get(PARTIAL) or {}).items():
        cell = cells.get(score)
        side = None if _zero_width(cell) else _side(cell)
        detail = _with_interval(cell) if side is not None else (cell or {}).get("reason")
        words = TARGET_WORDS.get(target, target) + (f" ({detail})" if detail else "")
        by_side.setdefault(side, []).append(words)
    if not by_side:
        return first
    if set(by_side) == {0}:
        return first + (
            " Its partial τ interval includes 0 on every target: no evidence that "
            f"{inner} tracks retrieval beyond chunk size."
        )
    parts = []
    if by_side.get(1):
        parts.append(f"it tracks {_listing(by_side[1])}")
    if by_side.get(-1):
        parts.append(f"it orders chunkers against {_listing(by_side[-1])}")
    if by_side.get(0):
        parts.append(f"its partial τ interval includes 0 on {_listing(by_side[0])}")
    if by_side.get(None):
        parts.append(f"the partial τ is undefined on {_listing(by_side[None])}")
    text = "; ".join(parts)
    return f"{first} Given passage length, {text}."


def tracks_section(
    record: dict[str, Any] | None, name: str = TRACKS_RECORD, heading: str = "###"
) -> list[str]:
    """The HOPE page's figures on what HOPE and each sub-metric track beyond passage length, from
    the labelled record (``name``); a record without them says the figures are owed."""
    source = f"`bench/results/{name}.json`"
    pooled = (record or {}).get("pooled_passage_length")
    if not pooled or not pooled.get("tau_with_length"):
        if record:
            commit = short_commit(record)
            state = f"{source} (commit `{commit}`) predates this analysis"
        else:
            state = f"there is no {source}"
        return [
            '!!! warning "Figures owed"',
            f"    {state}: the figures appear here once `make bench-labelled` has been rerun",
            "    and its record committed.",
            "",
        ]
    profiles = (record.get("settings") or {}).get("profiles_requested") or []
    names = pooled["tau_with_length"]
    profile = next((p for p in profiles if f"hope[{p}]" in names), None)
    corpora = [c for c, e in (record.get("corpora") or {}).items() if e.get("passage_length")]
    commit = short_commit(record)
    lines = [
        f"From {source} (commit `{commit}`; {len(record.get('chunkers') or [])} chunkers on "
        f"{len(corpora)} {'corpus' if len(corpora) == 1 else 'corpora'}: {', '.join(corpora)}). "
        "Kendall τ with 95 % bootstrap intervals; pooled is the mean over the corpora. Every "
        "score and corpus: the "
        f"[results page](results/{name}.md).",
        "",
    ]
    blocks = {c: record["corpora"][c]["passage_length"] for c in corpora}
    header = ["", "pooled (mean)", *corpora]
    targets = pooled.get("targets_with_length") or {}
    lines += ["**The labelled targets themselves** against the mean passage length:", ""]
    lines += markdown_table(
        header,
        [
            [
                f"τ of {TARGET_WORDS.get(t, t)} with length",
                _with_interval(targets[t]),
                *(_with_interval(blocks[c]["targets_with_length"].get(t)) for c in corpora),
            ]
            for t in targets
        ],
    )
    if profile is None:
        return [*lines, "HOPE was not run in this record: no figures for its sub-metrics.", ""]
    if len(profiles) > 1:
        lines += [f"Profile `{profile}`; the others are on the results page.", ""]
    for metric, label in SUB_METRICS.items():
        score = f"{metric}[{profile}]"
        rows = [
            [
                "τ with mean passage length",
                _with_interval(names.get(score)),
                *(_with_interval(blocks[c]["tau_with_length"].get(score)) for c in corpora),
            ]
        ]
        for target, cells in (pooled.get(PARTIAL) or {}).items():
            rows.append(
                [
                    f"partial τ with {TARGET_WORDS.get(target, target)} given length",
                    _with_interval(cells.get(score)),
                    *(
                        _with_interval(blocks[c][PARTIAL].get(target, {}).get(score))
                        for c in corpora
                    ),
                ]
            )
        lines += [f"{heading} {label}", "", *markdown_table(header, rows)]
        lines += [tracks_sentence(label, pooled, score), ""]
    return lines


def tracks_from(all_records: dict[str, dict[str, Any]]) -> list[str]:
    """The section from the labelled record (every corpus, one focus passage per chunking) and,
    where it exists, the same analysis at 16 focus passages and 16 segments per chunking, whose
    intervals carry the sub-metrics' sampling noise."""
    lines = tracks_section(all_records.get(TRACKS_RECORD))
    larger = all_records.get(TRACKS_RECORD_LARGER) or {}
    if not (larger.get("pooled_passage_length") or {}).get("tau_with_length"):
        return lines
    size = (larger.get("settings") or {}).get("hope_size") or {}
    title = (
        f"### At {size.get('focus_passages')} focus passages and {size.get('segments')} "
        "segments per chunking"
    )
    note = (
        "The same analysis on HOPE scored with more items per chunking "
        "(`make bench-precision-items`). With one focus passage, the bootstrap above cannot see "
        "concept unity's and semantic independence's sampling noise; here it can, on fewer "
        "corpora."
    )
    return [*lines, title, "", note, "", *tracks_section(larger, TRACKS_RECORD_LARGER, "####")]
