from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from hope.models import model_files as models
from hope.models.model_files import EmbeddingModelError, extract_split_zip, resolve_embedding_model


def split_zip(folder: Path, files: dict[str, bytes], n_parts: int) -> list[Path]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    blob = buffer.getvalue()
    size = -(-len(blob) // n_parts)
    parts = []
    for i in range(n_parts):
        part = folder / f"model.zip.{i + 1:03d}"
        part.write_bytes(blob[i * size : (i + 1) * size])
        parts.append(part)
    return parts


MODEL_FILES = {
    "tiny-model/config.json": b'{"hidden_size": 4}',
    "tiny-model/modules.json": b"[]",
    "tiny-model/1_Pooling/config.json": b"{}",
    "elsewhere/ignored.txt": b"not part of the model",
}


def test_split_zip_is_joined_in_order_and_unzipped_once(tmp_path: Path):
    parts = split_zip(tmp_path, MODEL_FILES, n_parts=3)
    dest = tmp_path / "cache" / "tiny-model"
    assert extract_split_zip(parts, dest, "tiny-model") == dest
    assert (dest / "config.json").read_bytes() == b'{"hidden_size": 4}'
    assert (dest / "1_Pooling" / "config.json").is_file()
    assert not (dest / "ignored.txt").exists()
    # Only the final folder remains beside dest: no joined zip, no temporary folder.
    assert [p.name for p in dest.parent.iterdir()] == ["tiny-model"]
    # A second call reuses the folder without reading the parts.
    for part in parts:
        part.unlink()
    assert extract_split_zip(parts, dest, "tiny-model") == dest


def test_parts_out_of_order_fail_and_leave_nothing_behind(tmp_path: Path):
    parts = split_zip(tmp_path, MODEL_FILES, n_parts=3)
    dest = tmp_path / "cache" / "tiny-model"
    with pytest.raises(zipfile.BadZipFile):
        extract_split_zip(list(reversed(parts)), dest, "tiny-model")
    assert list(dest.parent.iterdir()) == []


def test_a_half_written_cache_folder_is_reported(tmp_path: Path):
    parts = split_zip(tmp_path, MODEL_FILES, n_parts=2)
    dest = tmp_path / "cache" / "tiny-model"
    dest.mkdir(parents=True)
    (dest / "config.json").write_text("{}")
    with pytest.raises(EmbeddingModelError, match=r"not a complete model folder.*delete it"):
        extract_split_zip(parts, dest, "tiny-model")


def test_zip_without_the_model_folder_is_rejected(tmp_path: Path):
    parts = split_zip(tmp_path, {"other/config.json": b"{}"}, n_parts=2)
    with pytest.raises(EmbeddingModelError, match="has no tiny-model/"):
        extract_split_zip(parts, tmp_path / "cache" / "tiny-model", "tiny-model")


def test_minilm_resolves_to_the_packaged_model():
    path = Path(resolve_embedding_model("minilm"))
    assert (path / "modules.json").is_file() and (path / "model.safetensors").is_file()
    assert resolve_embedding_model("sentence-transformers/all-MiniLM-L6-v2") == str(path)


def test_mpnet_parts_are_the_five_installed_files_in_order():
    parts = models.mpnet_part_files()
    assert [p.name for p in parts] == [f"all-mpnet-base-v2.zip.{n:03d}" for n in range(1, 6)]
    assert all(p.is_file() and p.stat().st_size > 0 for p in parts)


def test_model_cache_follows_the_environment(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("HOPE_MODEL_CACHE", str(tmp_path / "models"))
    assert models.model_cache_dir() == tmp_path / "models"
    described = models.check_embedding_model("mpnet")
    assert "to be unzipped" in described and str(tmp_path / "models") in described


def test_local_folder_and_unknown_names(tmp_path: Path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    for name in ("config.json", "modules.json"):
        (folder / name).write_text("{}")
    assert resolve_embedding_model(str(folder)) == str(folder.resolve())
    with pytest.raises(EmbeddingModelError, match="unknown embedding model 'not a model'"):
        resolve_embedding_model("not a model")
    with pytest.raises(EmbeddingModelError, match="empty"):
        resolve_embedding_model("  ")
