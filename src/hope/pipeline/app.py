"""``hope-run``: the Hydra entry point of the experiment (``conf/config.yaml``).

    hope-run                                          # sample corpus, offline models
    hope-run chunker=fixed_500_o0 hope=reference llm=vllm
    hope-run -m chunker=glob(*) hope=paper,reference launcher=joblib
    hope-run experiment=paper dry_run=true

Returns the objective to Hydra, so a sweeper (e.g. hydra-optuna-sweeper) can tune on it.
"""

from __future__ import annotations

import logging
import sys

import hydra
from omegaconf import DictConfig

from hope.core.result import NothingScoredError
from hope.models.model_errors import BackendError
from hope.models.preflight import BACKEND_EXIT_CODE
from hope.pipeline import CONF_DIR
from hope.pipeline.run import run


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float:
    # Hydra configures logging to INFO for the app; the HTTP client's per-request lines are noise.
    for name in ("httpx", "httpx2"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        return run(cfg)
    except (BackendError, NothingScoredError) as exc:
        # preflight, mid-run, or every item failed: nothing written, answers stay cached
        print(f"hope-run: error: {exc}", file=sys.stderr)
        raise SystemExit(BACKEND_EXIT_CODE) from exc
