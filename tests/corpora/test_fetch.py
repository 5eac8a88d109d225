from __future__ import annotations

import hashlib
import re
import socket
from pathlib import Path

import pytest

from hope.core.io import write_atomic
from hope.corpora.fetch import (
    ChecksumError,
    FetchError,
    fetch,
    join_location,
    local_path,
)

WIKI = "20231101.en/train-00000-of-00001.parquet"
WIKI_SHA = "353ef560aa439c414257db98098a89c9372040f1a4e7227c8954aff3ebd6431d"


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


def test_http_fetch_verifies_and_renames(mirror_url: str, tmp_path: Path):
    dest = tmp_path / "out" / "wiki.parquet"
    got = fetch(f"{mirror_url}/wiki", WIKI, dest, sha256=WIKI_SHA)
    assert got.sha256 == WIKI_SHA
    assert got.location == f"{mirror_url}/wiki/{WIKI}"
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == WIKI_SHA
    assert got.bytes == dest.stat().st_size == 919657
    assert _leftovers(dest.parent) == []


def test_local_path_and_file_url_read_the_same_bytes(corpora_dir: Path, tmp_path: Path):
    a = fetch(corpora_dir / "wiki", WIKI, tmp_path / "a.parquet", sha256=WIKI_SHA)
    b = fetch((corpora_dir / "wiki").as_uri(), WIKI, tmp_path / "b.parquet", sha256=WIKI_SHA)
    assert a.sha256 == b.sha256 == WIKI_SHA
    assert local_path((corpora_dir / "wiki").as_uri()) == corpora_dir / "wiki"


def test_checksum_mismatch_leaves_no_file(mirror_url: str, tmp_path: Path):
    dest = tmp_path / "wiki.parquet"
    with pytest.raises(ChecksumError, match=re.escape(f"{mirror_url}/wiki/{WIKI}")):
        fetch(f"{mirror_url}/wiki", WIKI, dest, sha256="0" * 64)
    assert not dest.exists()
    assert _leftovers(tmp_path) == []


def test_failed_refetch_keeps_the_previous_complete_file(mirror_url: str, tmp_path: Path):
    dest = tmp_path / "wiki.parquet"
    write_atomic(dest, "previous complete content")
    with pytest.raises(ChecksumError):
        fetch(f"{mirror_url}/wiki", WIKI, dest, sha256="f" * 64)
    assert dest.read_text() == "previous complete content"


def test_http_404_names_the_url(mirror_url: str, tmp_path: Path):
    with pytest.raises(FetchError, match=r"HTTP 404 .*/wiki/missing\.parquet"):
        fetch(f"{mirror_url}/wiki", "missing.parquet", tmp_path / "x.parquet")
    assert list(tmp_path.iterdir()) == []


def test_interrupted_download_leaves_no_partial_file(mirror_url: str, tmp_path: Path):
    with pytest.raises(FetchError, match="__truncated__"):
        fetch(mirror_url, "__truncated__/file.bin", tmp_path / "file.bin")
    assert list(tmp_path.iterdir()) == []


def test_connection_refused_names_the_url(tmp_path: Path):
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(FetchError, match=re.escape(f"network error for {url}/a.bin")):
        fetch(url, "a.bin", tmp_path / "a.bin", timeout=5)
    assert list(tmp_path.iterdir()) == []


def test_missing_local_file_names_the_path(tmp_path: Path):
    with pytest.raises(
        FetchError, match=re.escape(f"file not found: {tmp_path / 'nope' / 'a.csv'}")
    ):
        fetch(tmp_path / "nope", "a.csv", tmp_path / "a.csv")


def test_join_location_quotes_urls_but_not_paths():
    assert join_location("https://h/x/", "a b/c.json") == "https://h/x/a%20b/c.json"
    assert join_location("/data/x", "a b/c.json") == "/data/x/a b/c.json"
