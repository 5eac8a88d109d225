"""The one fetch layer every corpus adapter goes through.

A *location* is a base (an ``http(s)://`` URL, a ``file://`` URL or a local path) joined with a
relative path that is the same online and in the offline mirror. Reading a mirror therefore runs the
same code as reading the network: only the base differs.

Complete files are streamed to a temporary file beside the destination, hashed while they stream,
checked against a pinned SHA-256 when one is given, and only then renamed into place, so a failed
or interrupted download never leaves a file where a complete one is expected.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from hope.core.io import atomic_path

log = logging.getLogger(__name__)

CHUNK = 1 << 20
# Headers worth keeping in a manifest: Hugging Face reports the commit a `resolve/<rev>` URL
# resolved to (X-Repo-Commit) and, for LFS files, the SHA-256 of the content (X-Linked-Etag).
_KEPT_HEADERS = ("etag", "x-repo-commit", "x-linked-etag", "content-length", "last-modified")


class FetchError(RuntimeError):
    """A source could not be read; the message names the URL or path."""


class ChecksumError(FetchError):
    pass


def is_remote(location: str) -> bool:
    return urllib.parse.urlsplit(location).scheme in ("http", "https")


def join_location(base: str | os.PathLike[str], relpath: str = "") -> str:
    base = os.fspath(base)
    if not relpath:
        return base
    if is_remote(base) or base.startswith("file://"):
        return base.rstrip("/") + "/" + urllib.parse.quote(relpath.lstrip("/"), safe="/")
    return str(Path(base) / relpath)


def local_path(location: str) -> Path:
    if location.startswith("file://"):
        return Path(urllib.request.url2pathname(urllib.parse.urlsplit(location).path))
    return Path(location)


class _IterReader(io.RawIOBase):
    """A read-only binary file over an iterator of byte chunks (an HTTP response body)."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks = chunks
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:  # type: ignore[override]
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(target), len(self._buffer))
        target[:n] = self._buffer[:n]
        self._buffer = self._buffer[n:]
        return n


class HashingReader(io.RawIOBase):
    """Passes reads through and hashes exactly the bytes that were read."""

    def __init__(self, raw: BinaryIO, location: str):
        self._raw = raw
        self.location = location
        self.digest = hashlib.sha256()
        self.bytes_read = 0
        self.eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:  # type: ignore[override]
        try:
            data = self._raw.read(len(target))
        except (httpx.HTTPError, OSError) as exc:
            raise FetchError(f"error while reading {self.location}: {exc}") from exc
        if not data:
            self.eof = True
            return 0
        n = len(data)
        target[:n] = data
        self.digest.update(data)
        self.bytes_read += n
        return n

    def hexdigest(self) -> str:
        return self.digest.hexdigest()


@dataclass
class Opened:
    location: str
    stream: HashingReader
    headers: dict[str, str] = field(default_factory=dict)


@contextlib.contextmanager
def open_location(location: str, *, timeout: float = 60.0) -> Iterator[Opened]:
    """Open a location for streaming binary reads; errors name the location."""
    if is_remote(location):
        try:
            with (
                httpx.Client(follow_redirects=True, timeout=timeout) as client,
                client.stream("GET", location) as response,
            ):
                if response.status_code >= 400:
                    raise FetchError(
                        f"HTTP {response.status_code} {response.reason_phrase} for {location}"
                    )
                headers = {k: response.headers[k] for k in _KEPT_HEADERS if k in response.headers}
                raw = _IterReader(response.iter_bytes(CHUNK))
                yield Opened(location, HashingReader(raw, location), headers)
        except httpx.HTTPError as exc:
            raise FetchError(f"network error for {location}: {exc}") from exc
        return
    path = local_path(location)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the caller's block
    except FileNotFoundError as exc:
        raise FetchError(f"file not found: {path}") from exc
    except OSError as exc:
        raise FetchError(f"cannot open {path}: {exc}") from exc
    with handle:
        yield Opened(str(path), HashingReader(handle, str(path)))


@dataclass
class Fetched:
    location: str
    path: Path
    sha256: str
    bytes: int
    headers: dict[str, str]

    def record(self, relative_to: Path | None = None) -> dict[str, Any]:
        path = self.path.relative_to(relative_to) if relative_to else self.path
        return {
            "location": self.location,
            "file": path.as_posix(),
            "sha256": self.sha256,
            "bytes": self.bytes,
            **({"headers": self.headers} if self.headers else {}),
        }


def fetch(
    base: str | os.PathLike[str],
    relpath: str,
    dest: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    timeout: float = 60.0,
) -> Fetched:
    """Copy ``base/relpath`` to ``dest`` atomically, verifying ``sha256`` when given."""
    location = join_location(base, relpath)
    dest = Path(dest)
    with atomic_path(dest, suffix=".part") as tmp:
        with tmp.open("wb") as handle, open_location(location, timeout=timeout) as opened:
            for chunk in iter(lambda: opened.stream.read(CHUNK), b""):
                handle.write(chunk)
        digest = opened.stream.hexdigest()
        if sha256 and digest != sha256.lower():
            raise ChecksumError(
                f"checksum mismatch for {opened.location}: expected sha256 {sha256}, got {digest}"
            )
    log.info("fetched %s -> %s (%d bytes)", location, dest, opened.stream.bytes_read)
    return Fetched(opened.location, dest, digest, opened.stream.bytes_read, opened.headers)
