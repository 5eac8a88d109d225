"""DVC outputs of the download stage hold no absolute path: the same inputs give the same bytes
in any checkout folder (issue #13)."""

from __future__ import annotations

import shutil
from pathlib import Path

from hope.corpora import DOMAINS
from hope.corpora.base import DOWNLOAD_MANIFEST, portable_location
from hope.corpora.corpus_config import sample_dir
from hope.pipeline.download_step import run_download


def test_portable_location_forms(tmp_path: Path, monkeypatch):
    assert portable_location("https://example.org/data") == "https://example.org/data"
    assert portable_location("file:///srv/mirror") == "file:///srv/mirror"
    assert portable_location(str(sample_dir())) == "package:hope/corpora/sample"
    assert (
        portable_location(str(sample_dir() / "news.txt")) == "package:hope/corpora/sample/news.txt"
    )
    (tmp_path / "repo").mkdir()
    (tmp_path / "shared" / "corpora").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert portable_location(str(tmp_path / "shared" / "corpora")) == "../shared/corpora"
    assert portable_location(str(tmp_path / "repo" / "data")) == "data"


def test_sample_download_manifests_are_the_same_bytes_in_two_folders(
    sample_cfg: dict, tmp_path: Path, monkeypatch
):
    manifests = []
    for checkout in ("first", "second/deeper"):
        root = tmp_path / checkout
        root.mkdir(parents=True)
        monkeypatch.chdir(root)
        for domain in DOMAINS:
            run_download(sample_cfg, domain, Path("data/raw") / domain)
        manifests.append(
            {d: (root / "data/raw" / d / DOWNLOAD_MANIFEST).read_bytes() for d in DOMAINS}
        )
        for text in manifests[-1].values():
            # Neither this folder nor the package's (another checkout's src/) may be recorded.
            assert str(tmp_path).encode() not in text
            assert str(sample_dir()).encode() not in text
    assert manifests[0] == manifests[1]


def test_mirror_manifest_is_relative_to_the_checkout(
    mirror_cfg: dict, corpora_dir: Path, tmp_path: Path, monkeypatch
):
    # A checkout beside a copy of the mirror, as the developers' and CI's layout has it.
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(corpora_dir / "news", tmp_path / "shared" / "corpora" / "news")
    monkeypatch.chdir(repo)
    cfg = dict(mirror_cfg, mirror_path=str(tmp_path / "shared" / "corpora"))
    run_download(cfg, "news", Path("data/raw/news"))
    text = (repo / "data/raw/news" / DOWNLOAD_MANIFEST).read_text()
    assert str(tmp_path) not in text
    assert '"base": "../shared/corpora/' in text
