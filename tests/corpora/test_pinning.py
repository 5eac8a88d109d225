"""Pinned revisions and the checksum lock of online sources, against a local HTTP server whose
files can change between downloads (a moving upstream)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from hope.corpora.base import CorpusError, SourceSpec
from hope.corpora.fetch import ChecksumError
from hope.corpora.pinning import check_pinned, is_huggingface
from hope.pipeline.download_step import run_download
from hope.stages.download_stage import main as download_main
from tests.corpora.conftest import serve

COMMIT = "b04c8d1ceb2f5cd4588862100d08de323dccfbaa"


def spec(base: str, revision: str | None) -> SourceSpec:
    return SourceSpec(
        domain="news",
        adapter="news",
        profile="paper",
        base=base,
        files=["a.parquet"],
        checksums={},
        revision=revision,
        source_label="",
        license="",
    )


def test_a_hugging_face_source_must_be_pinned_to_a_commit():
    hf = "https://huggingface.co/datasets/vblagoje/cc_news/resolve/{}"
    assert is_huggingface(hf) and not is_huggingface("https://raw.githubusercontent.com/x/y")
    with pytest.raises(CorpusError, match=r"corpora\.sources\.news\.revision is 'main'"):
        check_pinned(spec(hf.format("main"), "main"))
    with pytest.raises(CorpusError, match="--allow-unpinned"):
        check_pinned(spec(hf.format("v1.0"), "v1.0"))
    assert check_pinned(spec(hf.format("main"), "main"), allow_unpinned=True) is False
    assert check_pinned(spec(hf.format(COMMIT), COMMIT)) is True
    # Another host: a configured revision (a tag, a release date) is the pin it offers.
    assert check_pinned(spec("https://example.org/2020-07-16", "2020-07-16")) is True


@pytest.fixture()
def upstream(tmp_path: Path):
    folder = tmp_path / "upstream"
    (folder / "v1").mkdir(parents=True)
    (folder / "v1" / "a.txt").write_text("first release\n")
    server, url = serve(folder)
    yield folder, url
    server.shutdown()
    server.server_close()


def config(url: str) -> dict:
    return {
        "profile": "paper",
        "sources": {
            "wiki": {
                "adapter": "wiki",
                "revision": "v1",
                "base_url": url + "/{revision}",
                "files": ["a.txt"],
                "checksums": {},
            }
        },
    }


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_first_download_records_sha256_and_a_changed_file_is_refused(upstream, tmp_path):
    folder, url = upstream
    lock, out = tmp_path / "corpora.lock.json", tmp_path / "raw" / "wiki"
    first = run_download(config(url), "wiki", out, lock_path=lock)
    assert first["pinned"] is True and first["files"][0]["verified"] is False  # nothing to check
    assert json.loads(lock.read_text()) == {
        "sources": {
            "wiki": {
                "base": f"{url}/v1",
                "revision": "v1",
                "files": {"a.txt": sha("first release\n")},
            }
        }
    }
    again = run_download(config(url), "wiki", out, lock_path=lock)
    assert again["files"][0]["verified"] is True  # checked against the lock

    (folder / "v1" / "a.txt").write_text("silently replaced upstream\n")
    with pytest.raises(ChecksumError, match="--update-checksums") as error:
        run_download(config(url), "wiki", out, lock_path=lock)
    assert sha("first release\n") in str(error.value) and str(lock) in str(error.value)
    assert (out / "a.txt").read_text() == "first release\n"  # the previous output stays
    assert json.loads(lock.read_text())["sources"]["wiki"]["files"]["a.txt"] == sha(
        "first release\n"
    )

    updated = run_download(config(url), "wiki", out, lock_path=lock, update_checksums=True)
    assert updated["files"][0]["sha256"] == sha("silently replaced upstream\n")
    assert json.loads(lock.read_text())["sources"]["wiki"]["files"]["a.txt"] == sha(
        "silently replaced upstream\n"
    )
    assert run_download(config(url), "wiki", out, lock_path=lock)["files"][0]["verified"]


def test_a_new_revision_records_its_own_checksums(upstream, tmp_path):
    folder, url = upstream
    lock, out = tmp_path / "corpora.lock.json", tmp_path / "raw" / "wiki"
    run_download(config(url), "wiki", out, lock_path=lock)
    (folder / "v2").mkdir()
    (folder / "v2" / "a.txt").write_text("second release\n")
    cfg = config(url)
    cfg["sources"]["wiki"]["revision"] = "v2"
    assert run_download(cfg, "wiki", out, lock_path=lock)["files"][0]["verified"] is False
    entry = json.loads(lock.read_text())["sources"]["wiki"]
    assert entry["revision"] == "v2" and entry["files"] == {"a.txt": sha("second release\n")}


def test_configured_checksums_win_over_the_lock(upstream, tmp_path):
    _, url = upstream
    lock, out = tmp_path / "corpora.lock.json", tmp_path / "raw" / "wiki"
    run_download(config(url), "wiki", out, lock_path=lock)
    cfg = config(url)
    cfg["sources"]["wiki"]["checksums"] = {"a.txt": "0" * 64}
    with pytest.raises(ChecksumError, match="expected sha256 0000"):
        run_download(cfg, "wiki", out, lock_path=lock, update_checksums=True)


def test_the_download_stage_exits_1_naming_the_changed_file(upstream, tmp_path, capsys):
    folder, url = upstream
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"corpora": config(url)}))
    argv = [
        "--domain",
        "wiki",
        "--params",
        str(params),
        "--out",
        str(tmp_path / "raw" / "wiki"),
        "--checksum-lock",
        str(tmp_path / "corpora.lock.json"),
    ]
    assert download_main(argv) == 0
    (folder / "v1" / "a.txt").write_text("changed\n")
    capsys.readouterr()
    assert download_main(argv) == 1
    err = capsys.readouterr().err
    assert f"{url}/v1/a.txt" in err and "--update-checksums" in err
    assert download_main([*argv, "--update-checksums"]) == 0
