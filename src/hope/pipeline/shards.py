"""One experiment split into shards that run as separate jobs, and their outputs merged back.

``shard.count`` jobs, each with its ``shard.index``, score disjoint parts of the (document,
chunker) pairs: ``shard.by=document`` (contiguous ranges of the documents sorted by id),
``domain`` (the sorted domains dealt round-robin) or ``chunker`` (the chunkers dealt
round-robin). A Hydra multirun runs them on any launcher, e.g. on SLURM::

    hope-run -m launcher=submitit_slurm shard.count=8 'shard.index=range(0,8)' ...
    hope merge-shards multirun/<date>/<time> --output merged/

The jobs share the response cache (``cache.path`` on a filesystem every job sees) and log MLflow
child runs under the sweep's parent (``hope.pipeline.callbacks``). A pair's score depends only on
the pair and the configuration, so the merged ``scores.csv`` is the one a single job over every
pair writes, byte for byte (rows in sorted (doc_id, chunker) order), and so is ``evidence.jsonl``
but for what each job measured (latencies, wall times, the embedder's per-process totals).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hope.core.io import csv_text, write_atomic, write_json_atomic

SHARD_FILE = "shard.json"
_SUMMED_USAGE = (
    "requests",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "retries",
    "invalid_responses",
    "failures",
)


class ShardError(ValueError):
    """Bad shard settings or shard outputs that do not make one whole."""


class ShardSettings(BaseModel):
    """``shard``: which part of the pairs this job scores (``count: 1``: all of them)."""

    model_config = ConfigDict(extra="forbid")

    index: int | None = Field(default=None, ge=0)
    count: int = Field(default=1, ge=1)
    by: Literal["document", "domain", "chunker"] = "document"

    @model_validator(mode="after")
    def _consistent(self) -> ShardSettings:
        if self.count > 1 and self.index is None:
            raise ValueError(f"shard.index is required with shard.count={self.count}")
        if self.index is not None and self.index >= self.count:
            raise ValueError(f"shard.index={self.index} is not below shard.count={self.count}")
        return self

    @property
    def active(self) -> bool:
        return self.count > 1


def select_shard(
    settings: ShardSettings,
    documents: Sequence[Mapping[str, Any]],
    chunkers: Sequence[Any],
) -> tuple[list[Mapping[str, Any]], list[Any]]:
    """The documents and chunkers of shard ``settings.index`` (everything when not sharded).

    ``chunkers`` are anything with a ``name``. An empty shard is an error: it would be a job
    that scores nothing, which with more shards than parts is a configuration mistake.
    """
    if not settings.active:
        return list(documents), list(chunkers)
    index, count = settings.index or 0, settings.count
    docs, chosen = list(documents), list(chunkers)
    if settings.by == "document":
        ordered = sorted(d["doc_id"] for d in documents)
        start, end = index * len(ordered) // count, (index + 1) * len(ordered) // count
        wanted = set(ordered[start:end])
        docs = [d for d in documents if d["doc_id"] in wanted]
        unit, total = "documents", len(ordered)
    elif settings.by == "domain":
        domains = sorted({d["domain"] for d in documents})
        mine = set(domains[index::count])
        docs = [d for d in documents if d["domain"] in mine]
        unit, total = "domains", len(domains)
    else:
        chosen = list(chunkers)[index::count]
        unit, total = "chunkers", len(chunkers)
    if not docs or not chosen:
        raise ShardError(
            f"shard.index={index} of shard.count={count} (shard.by={settings.by}) gets no "
            f"{unit}: there are only {total}"
        )
    return docs, chosen


def config_digest(config: Mapping[str, Any]) -> str:
    """What every shard of one experiment shares: the job config without ``shard`` and ``hydra``."""
    material = {k: v for k, v in config.items() if k not in ("shard", "hydra")}
    text = json.dumps(material, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def shard_record(
    settings: ShardSettings,
    config: Mapping[str, Any],
    documents: Sequence[Mapping[str, Any]],
    chunkers: Sequence[Any],
) -> dict[str, Any]:
    return {
        "index": settings.index or 0,
        "count": settings.count,
        "by": settings.by,
        "config_sha256": config_digest(config),
        "doc_ids": [d["doc_id"] for d in documents],
        "chunkers": [c.name for c in chunkers],
    }


# --- merging -------------------------------------------------------------------------------------


def shard_dirs(paths: Sequence[str | Path]) -> list[Path]:
    """Job folders holding ``shard.json``: the paths themselves, or their subfolders (a sweep)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if (path / SHARD_FILE).is_file():
            found.append(path)
        elif path.is_dir():
            inner = sorted(p.parent for p in path.glob(f"*/{SHARD_FILE}"))
            if not inner:
                raise ShardError(f"{path}: neither a shard job folder nor a sweep holding any")
            found.extend(inner)
        else:
            raise ShardError(f"{path}: no such folder")
    return found


def _load(path: Path, name: str) -> str:
    target = path / name
    if not target.is_file():
        raise ShardError(f"{path}: {name} is missing (did the job finish?)")
    return target.read_text(encoding="utf-8")


def merge_shards(paths: Sequence[str | Path], output: str | Path) -> dict[str, Any]:
    """Merge the outputs of every shard of one experiment into ``output``; returns its summary.

    Checks that the shards are one whole: same count, split and config digest, each index once.
    """
    dirs = shard_dirs(paths)
    shards = [(json.loads(_load(d, SHARD_FILE)), d) for d in dirs]
    first = shards[0][0]
    for info, path in shards:
        for key in ("count", "by", "config_sha256"):
            if info[key] != first[key]:
                raise ShardError(
                    f"{path} is shard {info['index']} of another experiment: its {key} "
                    f"{info[key]!r} differs from {first[key]!r} ({shards[0][1]})"
                )
    indices = sorted(info["index"] for info, _ in shards)
    if indices != list(range(first["count"])):
        missing = sorted(set(range(first["count"])) - set(indices))
        doubled = sorted({i for i in indices if indices.count(i) > 1})
        raise ShardError(
            f"shards do not make one whole of {first['count']}: missing {missing}, "
            f"given twice {doubled}"
        )
    shards.sort(key=lambda item: item[0]["index"])

    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    evidence: list[tuple[tuple[str, str], str]] = []
    summaries = []
    for _info, path in shards:
        reader = csv.DictReader(io.StringIO(_load(path, "scores.csv")))
        if header is None:
            header = list(reader.fieldnames or [])
        elif list(reader.fieldnames or []) != header:
            raise ShardError(
                f"{path}/scores.csv has other columns than shard 0: {reader.fieldnames}"
            )
        rows.extend(reader)
        for line in _load(path, "evidence.jsonl").splitlines():
            if line.strip():
                record = json.loads(line)
                evidence.append(((record["doc_id"], record["chunker"]), line))
        summaries.append(json.loads(_load(path, "summary.json")))
    pairs = [(r["doc_id"], r["chunker"]) for r in rows]
    if len(set(pairs)) != len(pairs):
        raise ShardError("a (document, chunker) pair was scored by two shards")
    # One job scores its pairs in sorted (doc_id, chunker) order
    # (hope.pipeline.score_step.score_pairs).
    rows.sort(key=lambda r: (r["doc_id"], r["chunker"]))
    evidence.sort(key=lambda item: item[0])

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "scores.csv", csv_text(rows, header))
    write_atomic(out / "evidence.jsonl", "".join(line + "\n" for _, line in evidence))
    summary = merge_summaries(summaries, [info for info, _ in shards], [d for _, d in shards])
    write_json_atomic(out / "summary.json", summary)
    return summary


def merge_summaries(
    summaries: Sequence[Mapping[str, Any]],
    shards: Sequence[Mapping[str, Any]],
    dirs: Sequence[Path],
) -> dict[str, Any]:
    """Counts and usage summed over the shards; settings, models and prompts checked equal."""
    first = summaries[0]
    for summary, path in zip(summaries[1:], dirs[1:], strict=True):
        for key in ("settings", "models"):
            if summary.get(key) != first.get(key):
                raise ShardError(f"{path}/summary.json: {key} differ from shard 0's")
    usage = {
        key: sum(s.get("usage", {}).get(key, 0) or 0 for s in summaries) for key in _SUMMED_USAGE
    }
    failures: dict[str, dict[str, int]] = {}
    undefined: dict[str, int] = {}
    prompts: dict[str, Any] = {}
    for summary in summaries:
        for metric, by_chunker in summary.get("failures_by_metric_and_chunker", {}).items():
            for chunker, n in by_chunker.items():
                failures.setdefault(metric, {}).setdefault(chunker, 0)
                failures[metric][chunker] += n
        for name, n in summary.get("undefined_scores", {}).items():
            undefined[name] = undefined.get(name, 0) + n
        prompts.update(summary.get("prompts") or {})
    chunkers = list(dict.fromkeys(c for s in summaries for c in s.get("chunkers", [])))
    return {
        "pairs": sum(s.get("pairs", 0) for s in summaries),
        "usage": usage,
        "failures_by_metric_and_chunker": failures,
        "undefined_scores": undefined,
        "prompts": prompts,
        "settings": first.get("settings"),
        "models": first.get("models"),
        "chunkers": chunkers,
        "shards": [
            {
                "index": info["index"],
                "dir": str(path),
                "pairs": summary.get("pairs"),
                "doc_ids": info["doc_ids"],
                "chunkers": info["chunkers"],
                "timings_s": summary.get("timings_s"),
            }
            for info, summary, path in zip(shards, summaries, dirs, strict=True)
        ],
        "shard_split": {"count": shards[0]["count"], "by": shards[0]["by"]},
        "config_sha256": shards[0]["config_sha256"],
    }


def add_merge_command(sub: Any) -> None:
    parser = sub.add_parser(
        "merge-shards",
        help="merge the outputs of a sharded hope-run multirun",
        description="Merge scores.csv, evidence.jsonl and summary.json of every shard job of one "
        "experiment (hope-run shard.count=N shard.index=...) into one folder.",
    )
    parser.add_argument("paths", nargs="+", help="shard job folders, or the sweep folder")
    parser.add_argument("--output", required=True, help="folder for the merged outputs")
    parser.add_argument(
        "--no-mlflow",
        dest="mlflow",
        action="store_false",
        help="do not log the merged result to the sweep's MLflow run (by default it is, when the "
        "sweep folder names one in .mlflow_parent_run)",
    )
    parser.set_defaults(handler=_merge_command)


def sweep_run(paths: Sequence[str | Path]) -> tuple[Any, str] | None:
    """``(tracking settings, run id)`` of the MLflow run of the sweep the shards ran in: the run
    id from the sweep folder's marker (``hope.pipeline.callbacks``), the tracking settings from
    the first job's composed config (``.hydra/config.yaml``); None without a marker or with
    tracking off."""
    from omegaconf import OmegaConf

    import hope.pipeline  # noqa: F401  (registers ${hope_repo:}, which the saved config uses)
    from hope.pipeline.callbacks import MARKER, tracking_settings

    dirs = shard_dirs(paths)
    candidates = [Path(p) for p in paths] + [d.parent for d in dirs]
    marker = next((c / MARKER for c in candidates if (c / MARKER).is_file()), None)
    config_file = dirs[0] / ".hydra" / "config.yaml"
    if marker is None or not config_file.is_file():
        return None
    settings = tracking_settings(OmegaConf.load(config_file))
    if settings is None:
        return None
    return settings, marker.read_text(encoding="utf-8").strip()


def _merge_command(args: argparse.Namespace) -> int:
    try:
        summary = merge_shards(args.paths, args.output)
    except ShardError as exc:
        print(f"hope merge-shards: error: {exc}", file=sys.stderr)
        return 2
    print(f"merged {len(summary['shards'])} shards ({summary['pairs']} pairs) into {args.output}")
    if args.mlflow and (found := sweep_run(args.paths)) is not None:
        from hope.tracking.sweep import log_merged_result

        settings, run_id = found
        logged = log_merged_result(settings, run_id, Path(args.output), len(summary["shards"]))
        print(f"logged {len(logged)} merged metrics and the merged files to MLflow run {run_id}")
    return 0


__all__ = [
    "ShardError",
    "ShardSettings",
    "config_digest",
    "merge_shards",
    "select_shard",
    "shard_dirs",
    "sweep_run",
]
