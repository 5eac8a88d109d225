"""Loading and rendering the versioned prompt files in ``hope/core/prompts``.

A prompt's identity is ``name@vVERSION#sha`` where sha covers its text: changing the wording without
bumping the version still changes every cache key and is visible in the results.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    purpose: str
    system: str
    user: str

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256((self.system + "\x1f" + self.user).encode("utf-8")).hexdigest()[:12]

    @cached_property
    def id(self) -> str:
        return f"{self.name}@v{self.version}#{self.digest}"

    @cached_property
    def fields(self) -> frozenset[str]:
        return frozenset(f for _, f, _, _ in string.Formatter().parse(self.user) if f)

    def render(self, **values: Any) -> list[dict[str, str]]:
        missing = self.fields - values.keys()
        if missing:
            raise KeyError(f"prompt {self.name} needs {sorted(missing)}")
        return [
            {"role": "system", "content": self.system.strip()},
            {"role": "user", "content": self.user.format(**values).strip()},
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "id": self.id,
            "purpose": self.purpose,
            "system": self.system,
            "user": self.user,
        }


def _parse(text: str, origin: str) -> Prompt:
    data = yaml.safe_load(text)
    try:
        return Prompt(
            name=data["name"],
            version=int(data["version"]),
            purpose=data.get("purpose", ""),
            system=data["system"],
            user=data["user"],
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"prompt file {origin} lacks a field: {exc}") from exc


@lru_cache(maxsize=64)
def load_prompt(name: str, directory: str | None = None) -> Prompt:
    """Load ``name`` from the packaged prompts, or from ``directory`` to try edited prompts."""
    if directory is not None:
        path = Path(directory) / f"{name}.yaml"
        if not path.is_file():
            raise FileNotFoundError(f"prompt file not found: {path}")
        return _parse(path.read_text(encoding="utf-8"), str(path))
    resource = resources.files("hope.core.prompts").joinpath(f"{name}.yaml")
    if not resource.is_file():
        raise FileNotFoundError(f"no packaged prompt named {name!r}")
    return _parse(resource.read_text(encoding="utf-8"), f"hope/core/prompts/{name}.yaml")
