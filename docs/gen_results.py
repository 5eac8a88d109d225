"""Write the results pages at build time from the benchmark records in ``bench/results/*.json``.

Run by the mkdocs-gen-files plugin (``mkdocs.yml``); ``python docs/gen_results.py --out DIR``
writes the same pages into a folder, to read them without MkDocs. Every number on a results page
comes from its record: no page is edited by hand. Each record gets one page:

- its provenance: the commit measured (and whether the tree differed from it), the machine, the
  load at the start, start and finish times, the command, and what the run did not record;
- its targets, met or missed, where the record states them;
- its numbers as tables: medians with their spread, means with their 95 % interval, the
  validity ladder's win counts, the labelled benchmark's Kendall τ;
- its figure, where one belongs to it.

The HOPE page (``docs/metric.md``) gets its section "What HOPE tracks beyond passage length" from
the labelled record in place of a marker line (``docs/gen_tracks.py``): per sub-metric, τ with
the mean passage length and the partial τ with each labelled target given it, and a sentence
read off the intervals. Its
sections on precision by sample size and on the sequential rule come the same way from the
precision and sequential records (``docs/gen_precision.py``, ``docs/gen_sequential.py``); the
probe page's comparison of probe and real questions from the probe record (``docs/gen_probe.py``).

A record's provenance is read from its ``provenance`` block. A record without one (written
before the block existed) shows whatever it holds of ``commit``, ``code``, ``git``, ``machine``
and the run's times and command.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The HOPE page's sample-size sections live beside this script (mkdocs-gen-files runs it by path).
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_intervals
import gen_precision
import gen_probe
import gen_sequential
from gen_markdown import markdown_table as table
from gen_tracks import PARTIAL, TRACKS_MARKER, TRACKS_PAGE, tracks_from

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
OUT = "results"

# Figures that a benchmark writes beside its record (the record does not name them).
FIGURES = {"labelled": ["paper_figures/labelled_vs_hope.png"]}
# What each record measures, in one line, and the make target that writes it.
ABOUT = {
    "choice_probs": "ζ_inf's letter probabilities per model (`bench/bench_choice_probs.py`).",
    "chunking": "CPU seconds of each scale chunker over 100 documents (`make bench-chunking`).",
    "cpu_independence": "Embedding bits on three CPU configurations, float64 cost "
    "(`make bench-cpu-independence`).",
    "dry_run_estimate_equivalence": "The dry-run estimate before and after the request "
    "declarations.",
    "embedding_batches": "Batch dependence and cost of MiniLM vectors "
    "(`bench/bench_embedding_batches.py`).",
    "engine": "The engine: cold, warm and faulty runs against the simulated server (`make bench`).",
    "ip_ladder": "ζ_inf alone on the validity ladder, choice and support forms "
    "(`bench/bench_ip_ladder.py`).",
    "labelled": "Labelled retrieval beside the label-free scores (`make bench-labelled`).",
    "precision": "HOPE's precision by sample size: standard error, τ and significant pairs "
    "against LLM requests (`make bench-precision`).",
    "precision_items": "HOPE's items at 16 focus passages and 16 segments on the labelled set, "
    "the precision and sequential benchmarks' input (`make bench-precision-items`).",
    "precision_items_sample": "HOPE's items of the sample experiment's full run at the paper's "
    "counts, the input of its precision by sample size (`make bench-sequential-sample`).",
    "precision_sample": "HOPE's precision by sample size on the sample experiment: standard "
    "error and significant pairs against LLM requests (`make bench-precision-sample`).",
    "tau_intervals": "Coverage of the true τ by the labelled benchmark's percentile interval "
    "and a bias-corrected one, on simulated corpora (`make bench-tau-intervals`).",
    "sequential": "The sequential stopping rule against the full run: requests and decisions "
    "(`make bench-sequential`).",
    "paper_dry_run": "The paper-scale request count (`hope-run experiment=paper dry_run=true`).",
    "passage_scale": "One document with 1,000 to 20,000 passages (`make bench-passage-scale`).",
    "probe": "Probe questions against Chroma's real questions: do they rank chunkers alike? "
    "(`make bench-probe`).",
    "questions": "Question generators against the quality gates (`bench/bench_questions.py`).",
    "repro": "Cold and warm `make repro` in fresh clones (`make bench-repro`).",
    "scale": "The paper profile on 10, 30 and 100 documents × 8 chunkers (`make bench-scale`).",
    "servers": "The engine workload over 1-4 servers (`make bench-servers`).",
    "support_probs": "Statement-support verdicts per model (`bench/bench_support_probs.py`).",
    "transport": "Client CPU per request over httpx and aiohttp (`make bench-transport`).",
    "validity": "Does HOPE rank chunkings of known quality right? (`make bench-validity`).",
}
# Keys whose content is configuration or raw evidence, not a result: named, not tabulated.
SKIP = {
    "prompts",
    "prompt",
    "settings",
    "reduced_settings",
    "overrides",
    "ladder",
    "baseline_cards",
    "per_document",
    "per_question",
    "items",
    "documents",
    "inputs",
    "hope_settings",
}
# Legacy provenance keys (records without a ``provenance`` block).
LEGACY = {
    "commit",
    "dirty",
    "changed_files",
    "code",
    "git",
    "machine",
    "command",
    "commands",
    "started_utc",
    "finished_utc",
    "started_unix",
    "finished_unix",
    "commit_before",
    "commit_after",
}
DETAILS_ROWS = 30  # a key-value section longer than this is folded
COMPARISON_ROWS = 60  # a side-by-side table longer than this is folded
MAX_LIST = 12  # longer lists are counted, not printed


# --- values -----------------------------------------------------------------------------------


def fmt(value: Any) -> str:
    """One value as table text."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.1f}"
        if abs(value) < 0.001:
            return f"{value:.3g}"
        return f"{round(value, 4):g}" if abs(value) < 1 else f"{round(value, 3):g}"
    if isinstance(value, list):
        if any(isinstance(v, dict | list) for v in value):
            text = json.dumps(value, ensure_ascii=False)
            return fmt(text) if len(text) <= 120 else f"({len(value)} entries)"
        if len(value) > MAX_LIST:
            return f"({len(value)} entries)"
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    text = str(value).replace("|", "\\|").replace("\n", " ")
    return text


def _ci(ci: Any) -> str:
    if isinstance(ci, list | tuple) and len(ci) == 2:
        return f" [{fmt(ci[0])}, {fmt(ci[1])}]"
    return ""


WIN_KEYS = {"wins", "ties", "losses", "undefined", "share_wins", "share_wins_ci95"}
TAU_KEYS = {
    "tau",
    "low",
    "high",
    "n",
    "corpora",
    "ci95",
    "agreement",
    "agreeing",
    "pairs",
    "undefined_replicates",
    "reason",
}


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.2f}"


def compact(value: Any) -> str | None:
    """A summary dict (spread, mean with interval, win count, target, τ) as one cell, else None."""
    if not isinstance(value, dict):
        return None
    keys = set(value)
    if {"value", "target", "met"} <= keys:
        verdict = "met" if value["met"] else "**missed**"
        return f"{fmt(value['value'])} (target {fmt(value['target'])}: {verdict})"
    if {"wins", "losses"} <= keys <= WIN_KEYS:
        defined = value["wins"] + value.get("ties", 0) + value["losses"]
        text = f"{value['wins']}/{defined}"
        if value.get("ties"):
            text += f" ({value['ties']} ties)"
        if "share_wins" in value:
            text += f", share {fmt(value['share_wins'])}{_ci(value.get('share_wins_ci95'))}"
        return text
    if "tau" in keys and keys <= TAU_KEYS:
        if value["tau"] is None:
            return "–"
        text = f"{value['tau']:+.2f} [{_signed(value.get('low'))}, {_signed(value.get('high'))}]"
        if value.get("pairs"):
            text += f", agrees on {value['agreeing']}/{value['pairs']} significant pairs"
        return text
    if "median" in keys and keys <= {
        "median",
        "min",
        "max",
        "n",
        "runs",
        "iqr",
        "mad",
        "best_of_n",
        "total",
        "unit",
    }:
        text = fmt(value["median"])
        if "min" in keys and "max" in keys and value["min"] != value["max"]:
            text += f" ({fmt(value['min'])}–{fmt(value['max'])})"
        n = value.get("n", len(value["runs"]) if isinstance(value.get("runs"), list) else None)
        if isinstance(n, int):
            text += f", n={n}"
        if isinstance(value.get("runs"), int):
            text += f", runs={value['runs']}"
        return text
    for name in ("mean", "accuracy"):
        if name in keys and keys <= {name, "n", "ci95", "std"}:
            text = fmt(value[name]) + _ci(value.get("ci95"))
            return text + (f" (n={value['n']})" if "n" in keys else "")
    return None


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted path, cell) for every leaf under ``value``; summary dicts are one leaf."""
    cell = compact(value)
    if cell is not None:
        return [(prefix, cell)]
    if isinstance(value, dict):
        rows: list[tuple[str, str]] = []
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key in SKIP:
                rows.append((path, _skipped(item)))
            else:
                rows += flatten(item, path)
        return rows
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        if len(value) > MAX_LIST:
            return [(prefix, f"({len(value)} entries)")]
        rows = []
        for i, item in enumerate(value):
            rows += flatten(item, f"{prefix}[{i}]")
        return rows
    return [(prefix, fmt(value))]


def _skipped(item: Any) -> str:
    if isinstance(item, list | dict):
        return f"({len(item)} entries, in the JSON)"
    return fmt(item)


# --- Markdown ---------------------------------------------------------------------------------


def folded(title: str, lines: list[str], limit: int = DETAILS_ROWS) -> list[str]:
    """``lines`` under a collapsed block when long, else under a heading."""
    rows = sum(1 for line in lines if line.startswith("|"))
    if rows <= limit + 2:
        return [f"### {title}", "", *lines]
    return [f'??? info "{title} ({rows - 2} rows)"', ""] + [
        f"    {line}" if line else "" for line in lines
    ]


def pairs_table(rows: list[tuple[str, str]]) -> list[str]:
    return table(["field", "value"], [[f"`{k}`" if k else "", v] for k, v in rows])


def comparison(entries: dict[str, Any]) -> list[str]:
    """Entries side by side: a row per leaf path, a column per entry."""
    flat = {name: dict(flatten(value)) for name, value in entries.items()}
    paths = list(dict.fromkeys(p for cells in flat.values() for p in cells))
    header = ["field", *(f"`{name}`" for name in entries)]
    return table(header, [[f"`{p}`", *(flat[n].get(p, "") for n in entries)] for p in paths])


def _similar(values: list[Any]) -> bool:
    dicts = [v for v in values if isinstance(v, dict)]
    return len(dicts) >= 2 and len(dicts) == len(values) and compact(dicts[0]) is None


def _label(item: dict[str, Any], index: int) -> str:
    for key in ("name", "documents", "passages", "servers", "seed", "generator", "size"):
        if key in item and not isinstance(item[key], dict | list):
            return f"{key} {fmt(item[key])}"
    return str(index)


def section(title: str, value: Any) -> list[str]:
    """One top-level key of a record as Markdown."""
    if isinstance(value, dict) and _similar(list(value.values())):
        return folded(title, comparison(value), COMPARISON_ROWS)
    if isinstance(value, list) and _similar(value) and len(value) <= MAX_LIST:
        entries = {_label(item, i): item for i, item in enumerate(value)}
        return folded(title, comparison(entries), COMPARISON_ROWS)
    return folded(title, pairs_table(flatten(value)))


# --- special tables ---------------------------------------------------------------------------


def ladder_tables(record: dict[str, Any]) -> list[str]:
    """The validity ladder (aligned against each degraded rung), wherever the record holds one.

    Removes what it printed from ``record`` (a copy), so the generic tables do not repeat it."""
    out: list[str] = []

    def walk(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            return
        children = {k: v for k, v in node.items() if isinstance(v, dict)}
        ladder = {k: v for k, v in children.items() if "aligned_vs_degraded" in v}
        if ladder:
            rungs = [r for v in ladder.values() for r in v["aligned_vs_degraded"]]
            rungs = list(dict.fromkeys(rungs))
            header = ["score", *(f"vs {r}" if r != "pooled" else "pooled" for r in rungs)]
            header.append("Kendall τ")
            rows = []
            for name, item in ladder.items():
                cells = [compact(item["aligned_vs_degraded"].get(r)) or "–" for r in rungs]
                rows.append([name, *cells, compact(item.get("kendall_tau")) or "–"])
                for key in ("aligned_vs_degraded", "kendall_tau", "mean_by_rung"):
                    item.pop(key, None)
            out.extend([f"### Ladder: `{path}`", ""])
            out.extend(table(header, rows))
        for key, child in children.items():
            walk(child, f"{path}.{key}" if path else key)

    walk(record, "")
    return out


def labelled_tables(record: dict[str, Any]) -> list[str]:
    """Kendall τ of each label-free score with each labelled measure, per corpus and pooled."""
    corpora = record.get("corpora")
    if not isinstance(corpora, dict) or not any(
        isinstance(c, dict) and "validity" in c for c in corpora.values()
    ):
        return []
    out: list[str] = []
    pooled = record.get("pooled", {})
    targets = list(dict.fromkeys(t for c in corpora.values() for t in c.get("validity", {})))
    for target in targets:
        names = list(
            dict.fromkeys(
                n
                for c in corpora.values()
                for n in c.get("validity", {}).get(target, {}).get("scores", {})
            )
        )
        header = ["score", *corpora, "pooled (mean)"]
        rows = []
        for name in names:
            cells = [
                compact(c.get("validity", {}).get(target, {}).get("scores", {}).get(name)) or "–"
                for c in corpora.values()
            ]
            rows.append([name, *cells, compact(pooled.get(target, {}).get(name)) or "–"])
        out += [f"### Kendall τ with `{target}` (95 % bootstrap interval)", ""]
        out += table(header, rows)
    out += passage_length_tables(corpora, record.get("pooled_passage_length") or {})
    for c in corpora.values():
        c.pop("validity", None)
        c.pop("passage_length", None)
    record.pop("pooled", None)
    record.pop("pooled_passage_length", None)
    return out


def passage_length_tables(corpora: dict[str, Any], pooled: dict[str, Any]) -> list[str]:
    """τ of every score and target with the mean passage length, and each score's partial τ with
    each target given that length, per corpus and pooled (empty for a record without them)."""
    blocks = {name: c.get("passage_length") or {} for name, c in corpora.items()}
    if not pooled and not any(blocks.values()):
        return []
    header = ["score", *corpora, "pooled (mean)"]

    def rows(path: Callable[[dict[str, Any]], dict[str, Any]]) -> list[list[str]]:
        names = list(dict.fromkeys(n for b in [*blocks.values(), pooled] for n in path(b)))
        return [
            [name, *(compact(path(b).get(name)) or "–" for b in [*blocks.values(), pooled])]
            for name in names
        ]

    out = ["### Kendall τ with the mean passage length (95 % bootstrap interval)", ""]
    out += table(header, rows(lambda b: b.get("tau_with_length") or {}))
    out += table(
        ["labelled target", *header[1:]], rows(lambda b: b.get("targets_with_length") or {})
    )
    targets = list(
        dict.fromkeys(t for b in [*blocks.values(), pooled] for t in b.get(PARTIAL) or {})
    )
    for target in targets:
        out += [f"### Partial τ with `{target}` given the mean passage length", ""]
        out += table(header, rows(lambda b, t=target: (b.get(PARTIAL) or {}).get(t) or {}))
    return out


def filled_page(name: str, sections: dict[str, list[str]]) -> str:
    """docs/``name`` with each generated section in place of its marker line."""
    page = (REPO / "docs" / name).read_text(encoding="utf-8")
    for marker, lines in sections.items():
        if marker not in page:
            raise SystemExit(f"docs/{name} lost its line {marker!r}")
        page = page.replace(marker, "\n".join(lines))
    return page


def tracks_page(all_records: dict[str, dict[str, Any]]) -> str:
    """The HOPE page with each generated section's figures in place of its marker line."""
    return filled_page(
        TRACKS_PAGE,
        {
            TRACKS_MARKER: tracks_from(all_records),
            gen_precision.PRECISION_MARKER: gen_precision.precision_section(
                all_records.get("precision")
            ),
            gen_precision.PRECISION_SAMPLE_MARKER: gen_precision.precision_sample_section(
                all_records.get("precision_sample")
            ),
            gen_sequential.SEQUENTIAL_MARKER: gen_sequential.sequential_section(
                all_records.get("sequential")
            ),
        },
    )


PROBE_PAGE = "probe.md"
LABELLED_PAGE = "labelled.md"


def probe_page(all_records: dict[str, dict[str, Any]]) -> str:
    """The probe page with the probe-against-real comparison in place of its marker line."""
    return filled_page(
        PROBE_PAGE, {gen_probe.PROBE_MARKER: gen_probe.probe_section(all_records.get("probe"))}
    )


def labelled_page(all_records: dict[str, dict[str, Any]]) -> str:
    """The labelled page with the coverage of its τ intervals in place of its marker line."""
    return filled_page(
        LABELLED_PAGE,
        {
            gen_intervals.INTERVALS_MARKER: gen_intervals.intervals_section(
                all_records.get("tau_intervals"), all_records.get("labelled")
            )
        },
    )


# --- provenance -------------------------------------------------------------------------------


def _time(value: Any) -> str | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value


def provenance(record: dict[str, Any]) -> dict[str, Any]:
    """The record's provenance block, or what a record without one holds of it."""
    if isinstance(record.get("provenance"), dict):
        return record["provenance"]
    code = record.get("code") or record.get("git") or {}
    machine = dict(record.get("machine") or {})
    load = machine.pop("load_average_1_5_15_min", None) or machine.pop(
        "load_average_at_start", None
    )
    command = record.get("command") or record.get("commands")
    if isinstance(command, list):
        command = "; ".join(map(str, command))
    found = {
        "commit": record.get("commit") or code.get("commit"),
        "dirty": record.get("dirty", code.get("dirty")),
        "changed_files": record.get("changed_files", code.get("changed_files")),
        "machine": machine or None,
        "load_at_start": load,
        "started_utc": _time(record.get("started_utc") or record.get("started_unix")),
        "finished_utc": _time(record.get("finished_utc") or record.get("finished_unix")),
        "command": command,
    }
    if record.get("commit_before") or record.get("commit_after"):
        found["commit"] = f"{record.get('commit_before')} → {record.get('commit_after')}"
    found["missing"] = [k for k, v in found.items() if v is None]
    found["legacy"] = True
    return found


def provenance_lines(prov: dict[str, Any]) -> list[str]:
    machine = prov.get("machine") or {}
    if isinstance(machine, dict):
        machine_text = ", ".join(f"{k} {fmt(v)}" for k, v in machine.items() if v is not None)
    else:
        machine_text = fmt(machine)
    commit = prov.get("commit")
    rows = [
        ["commit", f"`{commit}`" if commit else "not recorded"],
        ["working tree", _tree(prov)],
        ["machine", machine_text or "not recorded"],
        ["load average at the start (1, 5, 15 min)", fmt(prov.get("load_at_start"))],
        ["started (UTC)", fmt(prov.get("started_utc"))],
        ["finished (UTC)", fmt(prov.get("finished_utc"))],
        ["command", f"`{prov['command']}`" if prov.get("command") else "–"],
    ]
    lines = ["## Provenance", "", *table(["", ""], rows)]
    missing = [m for m in prov.get("missing") or [] if m != "legacy"]
    if missing:
        lines += [f"Not recorded by this run: {', '.join(missing)}.", ""]
    if prov.get("legacy"):
        lines += ["(Read from the record's own fields: it has no `provenance` block.)", ""]
    return lines


def _tree(prov: dict[str, Any]) -> str:
    dirty, changed = prov.get("dirty"), prov.get("changed_files")
    if dirty is None:
        return "not recorded"
    if not dirty:
        return "clean"
    return f"differed from the commit ({changed} files)" if changed else "differed from the commit"


# --- targets ----------------------------------------------------------------------------------

TARGET_KEYS = ("targets", "met", "targets_met")


def target_lines(record: dict[str, Any]) -> list[str]:
    rows: list[list[str]] = []
    for key in TARGET_KEYS:
        if isinstance(record.get(key), dict):
            for path, cell in flatten(record.pop(key)):
                cell = {"yes": "met", "no": "**missed**"}.get(cell, cell)
                rows.append([f"`{key}.{path}`", cell])
    return ["## Targets", "", *table(["target", "result"], rows)] if rows else []


# --- pages ------------------------------------------------------------------------------------


def record_page(name: str, record: dict[str, Any]) -> tuple[str, list[str]]:
    """The Markdown page of one record and the figures (repository paths) it shows."""
    record = copy.deepcopy(record)
    lines = [f"# {name}", ""]
    about = ABOUT.get(name) or ABOUT.get(re.sub(r"_.*", "", name))
    if about:
        lines += [about, ""]
    for key in ("benchmark", "what", "note", "notes"):
        if isinstance(record.get(key), str):
            lines += [f"**{key}:** {fmt(record.pop(key))}", ""]
    lines += [f"Record: `bench/results/{name}.json`.", ""]
    lines += provenance_lines(provenance(record))
    record.pop("provenance", None)
    for key in LEGACY:
        record.pop(key, None)
    if record.get("complete") is False:
        lines += ["!!! warning", "    The record is partial (`complete: false`).", ""]
    lines += target_lines(record)
    special = labelled_tables(record) + ladder_tables(record)
    scalars = [k for k, v in record.items() if k not in SKIP and (compact(v) or not _nested(v))]
    results = []
    if scalars:
        results += ["### Summary", "", *pairs_table(flatten({k: record[k] for k in scalars}))]
    results += special
    for key, value in record.items():
        if key in SKIP or key in scalars:
            continue
        results += section(key, value)
    lines += ["## Results", "", *results]
    figures = [f for f in FIGURES.get(name, []) if (REPO / f).exists()]
    if figures:
        lines += ["## Figure", ""]
        lines += [f"![{Path(f).stem}]({Path(f).name})" for f in figures] + [""]
    skipped = [k for k in record if k in SKIP]
    if skipped:
        lines += [f"In the JSON only: {', '.join(f'`{k}`' for k in skipped)}.", ""]
    return "\n".join(lines), figures


def _nested(value: Any) -> bool:
    return isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, dict | list) for v in value)
    )


def records(folder: Path = RESULTS) -> dict[str, dict[str, Any]]:
    paths = sorted(folder.glob("*.json"))
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in paths}


def index_page(all_records: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# Results",
        "",
        "One page per benchmark record in `bench/results/`, generated from the JSON when the",
        "site is built (`docs/gen_results.py`). How each benchmark runs:",
        "[Benchmarks](../benchmarks.md).",
        "A record's history (earlier runs, what changed between them) is in git and in",
        "`CHANGELOG.md`.",
        "",
    ]
    rows = []
    for name, record in all_records.items():
        prov = provenance(record)
        commit = prov.get("commit")
        targets = [cell for k in TARGET_KEYS for _, cell in flatten(record.get(k) or {})]
        met = sum(c == "yes" or ": met)" in c for c in targets)
        missed = sum(c == "no" or "missed" in c for c in targets)
        summary = f"{met} met, {missed} missed" if met + missed else "–"
        rows.append(
            [
                f"[{name}]({name}.md)",
                ABOUT.get(name) or ABOUT.get(re.sub(r"_.*", "", name)) or "",
                f"`{str(commit)[:10]}`" if commit else "–",
                summary,
            ]
        )
    return "\n".join(lines + table(["record", "what", "commit", "targets"], rows))


def generate(
    opener: Callable[[str, str], AbstractContextManager[Any]], folder: Path = RESULTS
) -> None:
    all_records = records(folder)
    with opener(f"{OUT}/index.md", "w") as out:
        out.write(index_page(all_records))
    with opener(TRACKS_PAGE, "w") as out:
        out.write(tracks_page(all_records))
    with opener(PROBE_PAGE, "w") as out:
        out.write(probe_page(all_records))
    with opener(LABELLED_PAGE, "w") as out:
        out.write(labelled_page(all_records))
    figures = {
        gen_precision.PRECISION_FIGURE: gen_precision.precision_figure(
            all_records.get("precision")
        ),
        gen_precision.PRECISION_SAMPLE_FIGURE: gen_precision.precision_sample_figure(
            all_records.get("precision_sample")
        ),
    }
    for path, figure in figures.items():
        if figure is not None:
            with opener(path, "wb") as out:
                out.write(figure)
    for name, record in all_records.items():
        page, figures = record_page(name, record)
        with opener(f"{OUT}/{name}.md", "w") as out:
            out.write(page)
        for figure in figures:
            with opener(f"{OUT}/{Path(figure).name}", "wb") as out:
                out.write((REPO / figure).read_bytes())


def _folder_opener(root: Path) -> Callable[[str, str], AbstractContextManager[Any]]:
    def opener(path: str, mode: str):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        return target.open(mode, **({} if "b" in mode else {"encoding": "utf-8"}))

    return opener


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the pages")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of the records")
    args = parser.parse_args(argv)
    generate(_folder_opener(args.out), args.results)


if __name__ == "__main__":
    main()
else:  # run by mkdocs-gen-files
    import mkdocs_gen_files

    generate(mkdocs_gen_files.open)
