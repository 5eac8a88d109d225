"""Reading inputs with errors that name the file and line, and writing outputs atomically."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class InputFileError(ValueError):
    pass


def read_text(path: str | Path, what: str = "file") -> str:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise InputFileError(f"{what} {path}: no such file") from exc
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


def write_atomic(path: str | Path, content: str | bytes) -> None:
    """Write to a temporary file beside ``path`` and rename: readers never see a partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: str | Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
