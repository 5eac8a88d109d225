"""Invalid chunker settings fail when the config is loaded, with a message naming the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from hope.chunking import (
    ChunkerConfigError,
    FixedSizeChunker,
    RecursiveChunker,
    SemanticChunker,
    available_chunkers,
    load_chunker,
    load_chunkers,
)

PAPER_SETUPS = [
    "fixed_2000_o0",
    "fixed_2000_o500",
    "fixed_500_o0",
    "fixed_500_o125",
    "recursive_2000",
    "recursive_500",
    "semantic_minilm",
    "semantic_mpnet",
]


def write_config(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\n{body}", encoding="utf-8")
    return folder


def test_the_eight_setups_and_the_paper_models_are_configured(conf_dir: Path):
    assert set(available_chunkers(conf_dir)) == {*PAPER_SETUPS, "semantic_ada002", "semantic_qwen2"}
    loaded = load_chunkers(PAPER_SETUPS, conf_dir)
    assert [c.name for c in loaded] == PAPER_SETUPS
    semantic = {c.name: c.fn.settings for c in loaded if isinstance(c.fn, SemanticChunker)}
    # Two genuinely different embedding models.
    assert {s.model for s in semantic.values()} == {"minilm", "mpnet"}
    for chunker in loaded:
        assert chunker.config["name"] == chunker.name
    qwen2 = (conf_dir / "semantic_qwen2.yaml").read_text()
    assert "Alibaba-NLP/gte-Qwen2-1.5B-instruct" in qwen2
    assert "text-embedding-ada-002" in (conf_dir / "semantic_ada002.yaml").read_text()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("chunk_size: 500\nchunk_overlap: 500\n", r"chunk_overlap \(500\) must be smaller"),
        ("chunk_size: 500\nchunk_overlap: 600\n", r"chunk_overlap \(600\) must be smaller"),
        ("chunk_size: 0\nchunk_overlap: 0\n", r"chunk_size: must be > 0, got 0"),
        ("chunk_size: -5\n", r"chunk_size: must be > 0, got -5"),
        ("chunk_size: 500\nchunk_overlap: -1\n", r"chunk_overlap: must be >= 0, got -1"),
        ("chunk_size: 500\nchunk_overlapp: 10\n", r"chunk_overlapp: unknown setting"),
        ("chunk_overlap: 10\n", r"chunk_size: Field required"),
    ],
)
def test_invalid_fixed_size_settings_fail_at_config_time(tmp_path: Path, body: str, message: str):
    write_config(tmp_path, "bad", "_target_: hope.chunking.FixedSizeChunker\n" + body)
    with pytest.raises(ChunkerConfigError, match=message) as info:
        load_chunker("bad", tmp_path)
    assert "bad.yaml" in str(info.value) and "fixed-size chunker" in str(info.value)


def test_invalid_recursive_settings_fail_at_config_time(tmp_path: Path):
    write_config(
        tmp_path,
        "rec",
        "_target_: hope.chunking.RecursiveChunker\nchunk_size: 100\nseparators: ['\\n\\n']\n",
    )
    with pytest.raises(ChunkerConfigError, match='separators: must end with ""'):
        load_chunker("rec", tmp_path)
    with pytest.raises(ChunkerConfigError, match="chunk_overlap \\(100\\) must be smaller"):
        RecursiveChunker(chunk_size=100, chunk_overlap=100)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("model: minilmm\n", r"unknown embedding model 'minilmm'"),
        ("model: /nonexistent/model/dir\n", r"unknown embedding model '/nonexistent/model/dir'"),
        ("model: minilm\nthreshold: 1.5\n", r"threshold: must be strictly between 0 and 1"),
        ("model: minilm\nchunk_size: 0\n", r"chunk_size: must be > 0"),
        ("model: minilm\nprovider: cohere\n", r"provider: Input should be"),
        ("threshold: 0.5\n", r"model: Field required"),
    ],
)
def test_invalid_semantic_settings_fail_at_config_time(tmp_path: Path, body: str, message: str):
    write_config(tmp_path, "sem", "_target_: hope.chunking.SemanticChunker\n" + body)
    with pytest.raises(ChunkerConfigError, match=message):
        load_chunker("sem", tmp_path)


def test_a_folder_that_is_not_a_model_is_rejected(tmp_path: Path):
    (tmp_path / "empty_model").mkdir()
    with pytest.raises(ChunkerConfigError, match=r"lacks config\.json and modules\.json"):
        SemanticChunker(model=str(tmp_path / "empty_model"))


def test_uncached_hub_model_fails_clearly_when_offline(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    import huggingface_hub.constants as hf_constants

    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ChunkerConfigError, match="not in the local Hugging Face cache"):
        SemanticChunker(model="Alibaba-NLP/gte-Qwen2-1.5B-instruct", trust_remote_code=True)


def test_openai_setup_needs_its_key_and_a_known_model(monkeypatch, conf_dir: Path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ChunkerConfigError, match="'OPENAI_API_KEY', which is unset"):
        load_chunker("semantic_ada002", conf_dir)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert load_chunker("semantic_ada002", conf_dir).fn.settings.model == "text-embedding-ada-002"
    with pytest.raises(ChunkerConfigError, match="unknown OpenAI embedding model 'ada-3'"):
        SemanticChunker(provider="openai", model="ada-3")


def test_config_file_problems_name_the_file(tmp_path: Path, conf_dir: Path):
    with pytest.raises(ChunkerConfigError, match=r"no chunker config 'nope'.*fixed_2000_o0"):
        load_chunker("nope", conf_dir)
    (tmp_path / "unnamed.yaml").write_text("_target_: hope.chunking.FixedSizeChunker\n")
    with pytest.raises(ChunkerConfigError, match=r"unnamed.yaml: 'name' must be 'unnamed'"):
        load_chunker("unnamed", tmp_path)
    write_config(tmp_path, "notarget", "chunk_size: 10\n")
    with pytest.raises(ChunkerConfigError, match=r"notarget.yaml: no '_target_'"):
        load_chunker("notarget", tmp_path)
    write_config(tmp_path, "missing", "_target_: hope.chunking.NoSuchChunker\n")
    with pytest.raises(ChunkerConfigError, match=r"missing.yaml: .*NoSuchChunker"):
        load_chunker("missing", tmp_path)
    write_config(tmp_path, "notcallable", "_target_: builtins.str\nobject: hello\n")
    with pytest.raises(ChunkerConfigError, match=r"notcallable.yaml: .*not a callable"):
        load_chunker("notcallable", tmp_path)
    with pytest.raises(ChunkerConfigError, match="more than once"):
        load_chunkers(["fixed_500_o0", "fixed_500_o0"], conf_dir)


def test_direct_construction_validates_too():
    with pytest.raises(ChunkerConfigError, match="chunk_size: must be > 0"):
        FixedSizeChunker(chunk_size=0, chunk_overlap=0)
