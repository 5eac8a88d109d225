"""A persistent, content-addressed cache for LLM responses and embeddings.

SQLite in WAL mode: many processes (a Hydra joblib multirun) may read and write the same file at
once. A key is the SHA-256 of the canonical JSON of everything that determines the answer: model
identity and the full request (prompt name, version and text, schema, seed, temperature...).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (namespace, key)
)
"""


def content_key(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Key-value store shared by processes; ``path=None`` keeps it in memory for one process."""

    def __init__(self, path: str | Path | None, *, busy_timeout_s: float = 60.0):
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        if self.path is None:
            target = ":memory:"
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            target = str(self.path)
        self._conn = sqlite3.connect(
            target, timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        if self.path is not None:
            self._retry(lambda: self._conn.execute("PRAGMA journal_mode=WAL"))
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self._retry(lambda: self._conn.execute(_SCHEMA))
        self.hits = 0
        self.misses = 0
        self.writes = 0

    @staticmethod
    def _retry(operation, attempts: int = 20):
        # WAL switching and schema creation can meet "database is locked" when several processes
        # open a fresh file at the same instant; the busy timeout does not cover every such case.
        for attempt in range(attempts):
            try:
                return operation()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == attempts - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        return None

    def get(self, namespace: str, key: str) -> bytes | None:
        with self._lock:
            row = self._retry(
                lambda: self._conn.execute(
                    "SELECT value FROM entries WHERE namespace=? AND key=?", (namespace, key)
                ).fetchone()
            )
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return bytes(row[0])

    def get_many(self, namespace: str, keys: list[str]) -> dict[str, bytes]:
        """The stored values of those ``keys`` that are present, in one query per 500 keys."""
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            with self._lock:
                rows = self._retry(
                    lambda batch=batch, marks=marks: self._conn.execute(
                        f"SELECT key, value FROM entries WHERE namespace=? AND key IN ({marks})",
                        (namespace, *batch),
                    ).fetchall()
                )
            found.update((key, bytes(value)) for key, value in rows)
        self.hits += len(found)
        self.misses += len(unique) - len(found)
        return found

    def put(self, namespace: str, key: str, value: bytes) -> None:
        with self._lock:
            self._retry(
                lambda: self._conn.execute(
                    "INSERT OR REPLACE INTO entries (namespace, key, value, created) "
                    "VALUES (?, ?, ?, ?)",
                    (namespace, key, sqlite3.Binary(value), time.time()),
                )
            )
        self.writes += 1

    def get_json(self, namespace: str, key: str) -> Any | None:
        raw = self.get(namespace, key)
        return None if raw is None else json.loads(raw.decode("utf-8"))

    def put_json(self, namespace: str, key: str, value: Any) -> None:
        self.put(namespace, key, json.dumps(value, ensure_ascii=False).encode("utf-8"))

    def count(self, namespace: str | None = None) -> int:
        with self._lock:
            if namespace is None:
                return self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            return self._conn.execute(
                "SELECT COUNT(*) FROM entries WHERE namespace=?", (namespace,)
            ).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
