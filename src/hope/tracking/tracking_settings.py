"""Where and how runs are tracked: the ``tracking`` config (conf/tracking/, params.yaml)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass
class TrackingSettings:
    uri: str
    experiment_name: str = "hope"
    artifact_root: str | None = None
    run_name: str | None = None
    log_evidence: bool = True
    log_pair_metrics: bool = True
    enabled: bool = True
    # Share of LLM calls recorded as MLflow traces (hope.tracking.traces), and their cap per run.
    trace_share: float = 1.0
    trace_limit: int | None = 2000

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, default_uri: str | None = None
    ) -> TrackingSettings:
        """Settings from a ``tracking`` node; the URI is ``uri``, else ``MLFLOW_TRACKING_URI``,
        else ``default_uri`` (hope-run's config resolves its default itself and passes none)."""
        if not data.get("enabled", True):
            return cls(uri="", enabled=False)
        uri = data.get("uri") or os.environ.get("MLFLOW_TRACKING_URI") or default_uri
        if not uri:
            raise ValueError("tracking.uri is not set (nor MLFLOW_TRACKING_URI)")
        return cls(
            uri=str(uri),
            experiment_name=str(data.get("experiment_name") or "hope"),
            artifact_root=data.get("artifact_root"),
            run_name=data.get("run_name"),
            log_evidence=bool(data.get("log_evidence", True)),
            log_pair_metrics=bool(data.get("log_pair_metrics", True)),
            trace_share=_share(data.get("trace_share", 1.0)),
            trace_limit=_limit(data.get("trace_limit", 2000)),
        )

    def trace_recorder(self):
        """A ``ChatLLM.on_call`` observer keeping the sampled calls, or None (tracking off, or a
        zero share)."""
        if not self.enabled or self.trace_share <= 0 or self.trace_limit == 0:
            return None
        from hope.tracking.traces import TraceRecorder

        return TraceRecorder(self.trace_share, self.trace_limit)


def _share(value: Any) -> float:
    try:
        share = float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"tracking.trace_share must be a number in [0, 1], got {value!r}"
        ) from None
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"tracking.trace_share must be in [0, 1], got {value!r}")
    return share


def _limit(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"tracking.trace_limit must be a count >= 0 or null, got {value!r}")
    return value
