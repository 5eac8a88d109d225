"""Reading inputs with errors that name the file and line, and writing outputs atomically.

Every file the project writes goes through :func:`atomic_path` (directly or via
:func:`write_atomic`), so a reader never sees a partial file and a failed write leaves the old one.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# mkstemp creates files private (0600); a finished output gets the usual umask-based mode.
_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK


class InputFileError(ValueError):
    pass


class MissingInputFileError(InputFileError, FileNotFoundError):
    """A missing input is both: callers that expect the OS error catch it as one."""


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes, read in blocks (a corpus archive need not fit in memory)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_text(path: str | Path, what: str = "file") -> str:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise MissingInputFileError(f"{what} {path}: no such file") from exc
    except IsADirectoryError as exc:
        raise InputFileError(f"{what} {path}: is a directory") from exc
    except OSError as exc:
        raise InputFileError(f"{what} {path}: cannot be read ({exc.strerror})") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"{what} {path}: not valid UTF-8 (byte {exc.start}: {raw[exc.start : exc.start + 1]!r})"
        ) from exc


def read_params(path: str | Path) -> dict[str, Any]:
    """A params YAML file (params.yaml) as a mapping; errors name the file."""
    import yaml

    try:
        params = yaml.safe_load(read_text(path, "params file")) or {}
    except yaml.YAMLError as exc:
        raise InputFileError(f"params file {path}: not valid YAML ({exc})") from exc
    if not isinstance(params, dict):
        raise InputFileError(f"params file {path}: expected a mapping")
    return params


def iter_json_objects(
    path: str | Path, what: str, expected: str = "a JSON object"
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, object)`` per non-blank JSON line; ``where`` names the file and line for errors,
    and a malformed line or a non-object is an InputFileError saying so."""
    for number, line in enumerate(read_text(path, what).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{what} {path}, line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(
                f"{where}: malformed JSON ({exc.msg} at column {exc.colno})"
            ) from exc
        if not isinstance(record, dict):
            raise InputFileError(f"{where}: expected {expected}")
        yield where, record


def read_jsonl(path: str | Path, what: str = "file") -> list[dict[str, Any]]:
    """Every object of a JSON-lines file; errors name ``what``, the file and the line."""
    return [record for _, record in iter_json_objects(path, what)]


def read_passages_jsonl(path: str | Path) -> tuple[list[str], list[str]]:
    """Passages from JSON lines ``{"text": ..., "passage_id": ...}`` (id optional)."""
    texts: list[str] = []
    ids: list[str] = []
    objects = iter_json_objects(path, "passages file", "a JSON object with a 'text' field")
    for where, record in objects:
        text = record.get("text")
        if not isinstance(text, str):
            raise InputFileError(f"{where}: no 'text' string")
        if not text.strip():
            raise InputFileError(f"{where}: the passage text is empty")
        texts.append(text)
        ids.append(str(record.get("passage_id", record.get("id", len(ids)))))
    if not texts:
        raise InputFileError(f"passages file {path}: no passages")
    if len(set(ids)) != len(ids):
        raise InputFileError(f"passages file {path}: passage ids are not unique")
    return texts, ids


@contextmanager
def atomic_path(path: str | Path, *, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary file beside ``path`` for the caller to fill; on a clean exit it is synced and
    renamed to ``path`` in one step, on an error it is removed and ``path`` stays as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _FILE_MODE)
        # fsync before the rename: after a crash the name points at complete data.
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: str | Path, content: str | bytes | Iterable[str]) -> None:
    """Write text, bytes or an iterable of text pieces (streamed) to ``path`` atomically."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    with atomic_path(path) as tmp, tmp.open("wb") as handle:
        if isinstance(data, bytes):
            handle.write(data)
        else:
            handle.writelines(piece.encode("utf-8") for piece in data)


# Measurements of one execution rather than of its inputs: clock durations, and counters that
# depend on which concurrent caller happened to go first. They go to the log and to MLflow; a
# DVC output keeps none of them, so the same inputs give the same bytes (issue #13).
RUN_DEPENDENT_KEYS = frozenset({"latency_s", "wall_s", "wall_time_s", "embedder_process_totals"})


def without_run_timings(value: Any) -> Any:
    """``value`` (JSON-like) with every ``RUN_DEPENDENT_KEYS`` entry removed, at any depth."""
    if isinstance(value, Mapping):
        return {k: without_run_timings(v) for k, v in value.items() if k not in RUN_DEPENDENT_KEYS}
    if isinstance(value, list | tuple):
        return [without_run_timings(v) for v in value]
    return value


def json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json_atomic(path: str | Path, value: Any) -> None:
    write_atomic(path, json_text(value))


def jsonl_lines(records: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """One JSON line per record; NaN is refused (it is not JSON), text stays unescaped."""
    return (json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in records)


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """CSV with a header (``columns``, else the first row's keys); no rows and no columns: ""."""
    fieldnames = list(columns) if columns is not None else list(rows[0]) if rows else []
    if not fieldnames:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fieldnames, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
