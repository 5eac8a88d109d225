"""A Hydra multirun as one MLflow parent run with a child run per job.

``on_multirun_start`` runs once, in the launching process, before any job: it opens the parent run
and writes its id to ``<sweep dir>/.mlflow_parent_run``. Every job, in whatever process or machine
the launcher puts it (joblib workers, SLURM nodes sharing the filesystem), reads that file and
logs its own run as a child. ``on_multirun_end`` summarises the children on the parent and closes
it. ``HOPE_MLFLOW_PARENT_RUN_ID`` names a parent run made by some other orchestrator instead.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger("hope.pipeline")

MARKER = ".mlflow_parent_run"
PARENT_ENV = "HOPE_MLFLOW_PARENT_RUN_ID"


def tracking_settings(config: DictConfig):
    """The ``tracking`` settings of a composed config; None without them or with tracking off."""
    from hope.tracking.tracking_settings import TrackingSettings

    tracking = config.get("tracking")
    if tracking is None:
        return None
    settings = TrackingSettings.from_mapping(OmegaConf.to_container(tracking, resolve=True))
    return settings if settings.enabled else None


class MlflowSweepCallback(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from hope.pipeline import REPO_ROOT
        from hope.tracking.sweep import start_parent_run

        settings = tracking_settings(config)
        if settings is None:
            return
        sweep_dir = Path(str(config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        overrides = list(config.hydra.overrides.task)
        params = {"sweep.overrides": " ".join(overrides), "sweep.dir": str(sweep_dir)}
        run_id = start_parent_run(
            settings,
            run_name=f"sweep {sweep_dir.name}: {' '.join(overrides)}"[:250],
            params=params,
            tags={"hope.sweep_dir": str(sweep_dir)},
            repo=REPO_ROOT,
        )
        (sweep_dir / MARKER).write_text(f"{run_id}\n", encoding="utf-8")
        log.info("MLflow parent run %s for sweep %s", run_id, sweep_dir)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from hope.tracking.sweep import finish_parent_run

        settings = tracking_settings(config)
        if settings is None:
            return
        marker = Path(str(config.hydra.sweep.dir)) / MARKER
        if marker.is_file():
            finish_parent_run(settings, marker.read_text(encoding="utf-8").strip())


def job_context() -> tuple[str | None, dict[str, str]]:
    """(parent run id or None, tags naming this job) for the job running now."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    parent = os.environ.get(PARENT_ENV) or None
    tags: dict[str, str] = {}
    if not HydraConfig.initialized():
        return parent, tags
    hydra_cfg = HydraConfig.get()
    tags["hope.job_overrides"] = " ".join(hydra_cfg.overrides.task)[:5000]
    if hydra_cfg.mode == RunMode.MULTIRUN:
        tags["hope.job_num"] = str(hydra_cfg.job.num)
        marker = Path(str(hydra_cfg.sweep.dir)) / MARKER
        if parent is None and marker.is_file():
            parent = marker.read_text(encoding="utf-8").strip() or None
    return parent, tags
