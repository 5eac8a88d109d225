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
        )
