"""Chunkers as YAML configs: ``conf/chunker/<name>.yaml`` names any callable through ``_target_``.

A config holds ``name`` (must equal the file name without ``.yaml``), ``_target_`` and the
target's parameters. The target is instantiated with Hydra and must yield a callable
``(document_text, doc_id, chunker_name) -> passages``: a class whose instances are called that
way, or a function ``(document_text, doc_id, chunker_name, **params)`` configured with
``_partial_: true``. "Passages" may be :class:`Passage` objects, strings or mappings with
``text``; :meth:`Chunker.chunk` numbers them, checks their spans and rejects an empty result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hope.chunking.chunker_settings import ChunkerConfigError
from hope.chunking.passages import ChunkingError, Passage, build_passages

DEFAULT_CONF_DIR = Path("conf/chunker")


@dataclass(frozen=True)
class Chunker:
    """A named, instantiated chunker plus the config it came from."""

    name: str
    fn: Callable[..., Any]
    config: dict[str, Any] = field(default_factory=dict)

    def chunk(self, document_text: str, doc_id: str) -> list[Passage]:
        raw = self.fn(document_text, doc_id, self.name)
        if raw is None:
            raw = []
        passages = build_passages(raw, document_text, doc_id, self.name)
        if not passages:
            raise ChunkingError(
                f"chunker {self.name!r} returned no passages for document {doc_id!r} "
                f"({len(document_text)} characters)"
            )
        return passages


def available_chunkers(conf_dir: Path | str = DEFAULT_CONF_DIR) -> list[str]:
    return sorted(p.stem for p in Path(conf_dir).glob("*.yaml"))


def _config_path(name: str, conf_dir: Path) -> Path:
    candidate = Path(name)
    if candidate.suffix in {".yaml", ".yml"} and candidate.is_file():
        return candidate
    path = conf_dir / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(available_chunkers(conf_dir)) or "none"
        raise ChunkerConfigError(
            f"no chunker config {name!r}: {path} does not exist (available in {conf_dir}: {known})"
        )
    return path


def load_chunker(name: str, conf_dir: Path | str = DEFAULT_CONF_DIR) -> Chunker:
    """Load and instantiate ``<conf_dir>/<name>.yaml`` (or a YAML path given as ``name``).

    Raises :class:`ChunkerConfigError` naming the file for a missing file, a missing or wrong
    ``name``, a missing ``_target_``, settings the target rejects, or a non-callable result.
    """
    from omegaconf import DictConfig, OmegaConf

    path = _config_path(name, Path(conf_dir))
    try:
        loaded = OmegaConf.load(path)
    except Exception as exc:  # yaml and omegaconf raise several types for malformed files
        raise ChunkerConfigError(f"chunker config {path}: cannot be read: {exc}") from exc
    if not isinstance(loaded, DictConfig):
        raise ChunkerConfigError(f"chunker config {path}: must be a mapping")
    config = OmegaConf.to_container(loaded, resolve=True)
    assert isinstance(config, dict)
    return chunker_from_config(config, f"chunker config {path}", name=path.stem)


def chunker_from_config(
    node: Mapping[str, Any], where: str = "chunker config", *, name: str | None = None
) -> Chunker:
    """A chunker from a config node (``name``, ``_target_`` and its settings: a YAML file of
    conf/chunker/ or hope-run's composed ``chunker`` group); every error starts with ``where``.
    ``name``: what the node must be called (a file's stem)."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    config = dict(node)
    declared = config.pop("name", None)
    if name is not None and declared != name:
        raise ChunkerConfigError(
            f"{where}: 'name' must be {name!r} (the file name), got {declared!r}"
        )
    if not declared:
        raise ChunkerConfigError(f"{where}: no 'name'")
    if "_target_" not in config:
        raise ChunkerConfigError(f"{where}: no '_target_' naming a callable")
    try:
        fn = instantiate(OmegaConf.create(config), _convert_="all")
    except InstantiationException as exc:
        # Hydra wraps the target's exception (sometimes twice); the innermost says what is wrong.
        cause: BaseException = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        raise ChunkerConfigError(f"{where}: {cause}") from cause
    except (ChunkerConfigError, TypeError, ValueError) as exc:
        raise ChunkerConfigError(f"{where}: {exc}") from exc
    if not callable(fn):
        raise ChunkerConfigError(
            f"{where}: _target_ {config['_target_']!r} produced a "
            f"{type(fn).__name__}, not a callable (document_text, doc_id, chunker_name)"
        )
    return Chunker(name=str(declared), fn=fn, config={"name": declared, **config})


def load_chunkers(names: list[str], conf_dir: Path | str = DEFAULT_CONF_DIR) -> list[Chunker]:
    if not names:
        raise ChunkerConfigError("no chunkers selected")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ChunkerConfigError(f"chunkers selected more than once: {duplicates}")
    return [load_chunker(name, conf_dir) for name in names]
