"""One Hydra job of the experiment: corpus -> chunkers -> HOPE (+ BLEU) -> MLflow -> objective.

``hope-run`` (``hope.pipeline.app:main``) composes ``conf/config.yaml``; ``run(cfg)`` does the work.
"""

from __future__ import annotations

import os
from pathlib import Path

from omegaconf import OmegaConf

# src/hope/pipeline/__init__.py -> the repository root (conf/, params.yaml, data/ live there).
REPO_ROOT = Path(os.environ.get("HOPE_REPO") or Path(__file__).resolve().parents[3]).resolve()
CONF_DIR = REPO_ROOT / "conf"

# ${hope_repo:} in conf/: absolute paths that do not depend on the directory hope-run starts in.
if not OmegaConf.has_resolver("hope_repo"):
    OmegaConf.register_new_resolver("hope_repo", lambda: str(REPO_ROOT))

from hope.pipeline.run import run  # noqa: E402  (the resolver must exist before configs load)

__all__ = ["CONF_DIR", "REPO_ROOT", "run"]
