"""What an evaluation returns: scores with every piece of evidence behind them."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

METRICS = ("concept_unity", "semantic_independence", "information_preservation")


@dataclass
class Failure:
    metric: str
    item: str
    reason: str


@dataclass
class MetricCount:
    total: int = 0
    scored: int = 0
    failed: int = 0


@dataclass
class HopeResult:
    hope: float
    concept_unity: float
    semantic_independence: float
    information_preservation: float
    passages: list[dict[str, Any]]
    segments: list[dict[str, Any]]
    failures: list[Failure]
    counts: dict[str, MetricCount]
    usage: dict[str, Any]
    prompts: dict[str, dict[str, Any]]
    settings: dict[str, Any]
    models: dict[str, str]
    warnings: list[str] = field(default_factory=list)
    # ``sampling.mode: sequential`` only (hope.core.sequential_sampling): items drawn, intervals
    # per round, why sampling stopped. Absent otherwise, so other results keep their bytes.
    sampling: dict[str, Any] | None = None

    @property
    def scores(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in ("hope", *METRICS)}

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["sampling"] is None:
            del data["sampling"]
        return nan_to_none(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HopeResult:
        """The result that ``to_dict`` wrote (undefined scores back to NaN)."""
        fields = dict(data)
        for name in ("hope", *METRICS):
            fields[name] = math.nan if fields[name] is None else float(fields[name])
        fields["failures"] = [Failure(**f) for f in fields["failures"]]
        fields["counts"] = {name: MetricCount(**c) for name, c in fields["counts"].items()}
        return cls(**fields)

    def to_json(self, **kwargs: Any) -> str:
        kwargs.setdefault("indent", 2)
        kwargs.setdefault("ensure_ascii", False)
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)


class NothingScoredError(RuntimeError):
    """Every LLM item of every result failed, so every score is undefined. A partial failure is
    recorded and excluded; a run that scored nothing at all has no result to give, so it stops
    like a backend that cannot answer (``hope.models.preflight.BACKEND_EXIT_CODE``) and writes
    nothing, instead of a file of nulls that looks like a finished run."""


def check_something_scored(results: Iterable[HopeResult], scope: str = "") -> None:
    """Raise NothingScoredError, with the most common failure reason, if no item of any of
    ``results`` was scored (and there was at least one item to score)."""
    results = list(results)
    counts = [count for result in results for count in result.counts.values()]
    total = sum(count.total for count in counts)
    if total == 0 or any(count.scored for count in counts):
        return
    failed: Counter[str] = Counter()
    for result in results:
        for name, count in result.counts.items():
            failed[name] += count.failed
    reasons = Counter(f.reason for result in results for f in result.failures)
    by_metric = ", ".join(f"{name} {n}" for name, n in failed.items())
    message = f"nothing could be scored: all {total} LLM items{scope} failed ({by_metric})"
    if reasons:
        reason, n = reasons.most_common(1)[0]
        message += f"; the most common reason ({n} of {reasons.total()} failures): {reason}"
    raise NothingScoredError(message)


def nan_to_none(value: Any) -> Any:
    """``value`` with every NaN float, in nested dicts, lists and tuples, replaced by None (a
    tuple becomes a list): JSON has no NaN, so an undefined score is written as null, with its
    reason in failures/warnings."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [nan_to_none(v) for v in value]
    return value
