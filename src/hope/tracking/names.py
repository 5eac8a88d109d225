"""MLflow names and values from plain data: safe name parts, flattened params, score aggregates."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. :]")
MAX_PARAM_CHARS = 6000  # mlflow.utils.validation.MAX_PARAM_VAL_LENGTH


def name_part(value: Any) -> str:
    """One segment of a metric or param name, safe for MLflow (and no path traversal)."""
    return _NAME_UNSAFE.sub("_", str(value)).replace("..", "_").strip("/") or "_"


def is_finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def finite_mean(values: Iterable[Any], empty: float | None = None) -> float | None:
    """The mean of the finite numbers among ``values``; ``empty`` when there is none."""
    finite = [float(v) for v in values if is_finite(v)]
    return sum(finite) / len(finite) if finite else empty


def aggregate_metrics(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    per_pair: bool = True,
    per_chunker: bool = True,
) -> dict[str, float]:
    """Score columns of pair rows (doc_id, domain, chunker, ...) at corpus, domain and pair level.

    A level's value is the mean over its pairs whose score is defined; a level where none is
    defined gets no metric (MLflow has no null), and ``.../undefined/<score>`` counts such pairs.
    Metric names do not mention the chunker unless the job ran several, so that the runs of a
    sweep over chunkers share names and can be compared side by side. ``per_chunker=False``
    leaves the chunker level out (the MLflow parent run: its chunker runs hold it).
    """
    metrics: dict[str, float] = {}
    chunkers = sorted({str(r["chunker"]) for r in rows})

    def level(prefix: str, subset: Sequence[Mapping[str, Any]]) -> None:
        metrics[f"{prefix}/n_pairs"] = float(len(subset))
        for column in columns:
            mean = finite_mean(r.get(column) for r in subset)
            if mean is not None:
                metrics[f"{prefix}/{name_part(column)}"] = mean
            undefined = sum(1 for r in subset if not is_finite(r.get(column)))
            metrics[f"{prefix}/undefined/{name_part(column)}"] = float(undefined)

    def by_domain(prefix: str, subset: Sequence[Mapping[str, Any]]) -> None:
        for domain in sorted({str(r["domain"]) for r in subset}):
            level(
                f"{prefix}domain/{name_part(domain)}", [r for r in subset if r["domain"] == domain]
            )

    level("corpus", rows)
    by_domain("", rows)
    if per_chunker and len(chunkers) > 1:
        for chunker in chunkers:
            subset = [r for r in rows if r["chunker"] == chunker]
            level(f"chunker/{name_part(chunker)}", subset)
            by_domain(f"chunker/{name_part(chunker)}/", subset)
    if per_pair:
        for row in rows:
            prefix = f"pair/{name_part(row['chunker'])}/{name_part(row['doc_id'])}"
            for column in columns:
                if is_finite(row.get(column)):
                    metrics[f"{prefix}/{name_part(column)}"] = float(row[column])
    return metrics


def flatten(config: Any, prefix: str = "") -> dict[str, str]:
    """Dotted keys -> string values; lists are JSON, values cut to MLflow's param length."""
    flat: dict[str, str] = {}
    if isinstance(config, Mapping):
        for key, value in config.items():
            flat.update(flatten(value, f"{prefix}{name_part(key)}."))
        if not config and prefix:
            flat[prefix[:-1]] = "{}"
        return flat
    text = (
        json.dumps(config, ensure_ascii=False) if isinstance(config, list | tuple) else str(config)
    )
    flat[prefix[:-1]] = text[:MAX_PARAM_CHARS]
    return flat
