"""The output hashes of a ``dvc.lock``, and how two locks differ in them.

Used by the two-clone reproducibility test and by ``bench/bench_repro.py`` (does a fresh
clone's cold run give the committed lock's outputs?). Only outputs are compared: dependencies
and parameters are inputs, equal by construction when the same commit runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def lock_outputs(source: str | Path | dict[str, Any]) -> dict[str, str]:
    """``{output path: hash}`` over every stage's ``outs`` (metrics and plots included).

    The hash is DVC's ``md5`` (``...dir`` for a folder) or, for other hash kinds, the value of
    the field named by ``hash``. A path that two stages both claim is an error.
    """
    if isinstance(source, dict):
        lock, name = source, "lock"
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"dvc lock file {path} does not exist")
        lock, name = yaml.safe_load(path.read_text(encoding="utf-8")) or {}, str(path)
    stages = lock.get("stages")
    if not isinstance(stages, dict):
        raise ValueError(f"{name}: no 'stages' mapping (is it a dvc.lock?)")
    outputs: dict[str, str] = {}
    for stage, entry in stages.items():
        for out in entry.get("outs", []) or []:
            kind = out.get("hash", "md5")
            digest = out.get(kind, out.get("md5"))
            if digest is None:
                raise ValueError(f"{name}: stage {stage}, output {out.get('path')}: no hash")
            if out["path"] in outputs:
                raise ValueError(f"{name}: output {out['path']} appears in two stages")
            outputs[out["path"]] = str(digest)
    return outputs


def lock_differences(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """One line per output that is missing, extra or hashed differently; [] when equal."""
    lines = []
    for path in sorted(expected.keys() | actual.keys()):
        if path not in actual:
            lines.append(f"{path}: missing (expected {expected[path]})")
        elif path not in expected:
            lines.append(f"{path}: not expected (got {actual[path]})")
        elif expected[path] != actual[path]:
            lines.append(f"{path}: {expected[path]} != {actual[path]}")
    return lines
