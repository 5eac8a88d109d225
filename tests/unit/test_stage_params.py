"""params.yaml as the DVC stages read it: each section validated once, with Params' own models."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from hope.core.hope_settings import ConfigError
from hope.pipeline.config_schema import BleuParams, HopeStageParams, LabelledParams
from hope.pipeline.stage_params import stage_params

STAGES = Path(__file__).resolve().parents[2] / "src" / "hope" / "stages"


def _params(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_stage_reads_only_its_sections_typed(tmp_path):
    path = _params(tmp_path, {"chunkers": ["a", "b"], "bleu": {"tokenize": "char"}})
    sections = stage_params(path, "chunkers", "bleu")
    assert sections == {"chunkers": ["a", "b"], "bleu": BleuParams(tokenize="char", joiner=" ")}


def test_errors_name_the_file_and_the_dotted_key(tmp_path):
    path = _params(tmp_path, {"chunkers": [], "bleu": {"tokenize": "bpe"}, "hope": {"seed": "x"}})
    with pytest.raises(ConfigError, match=r"params\.yaml: chunkers: List should have at least 1"):
        stage_params(path, "chunkers")
    with pytest.raises(ConfigError, match=r"bleu\.tokenize: 'bpe' is not one of"):
        stage_params(path, "bleu")
    with pytest.raises(ConfigError, match=r"hope\.seed: Input should be a valid integer"):
        stage_params(path, "hope")
    with pytest.raises(ConfigError, match=r"section 'labelled' is missing"):
        stage_params(path, "labelled")
    with pytest.raises(KeyError, match="no section 'nope'"):
        stage_params(path, "nope")


def test_the_hope_section_gives_the_score_overrides_in_order(tmp_path):
    path = _params(tmp_path, {"hope": {"profile": "reference", "cache": "c.sqlite", "seed": 0}})
    hope = stage_params(path, "hope")["hope"]
    assert isinstance(hope, HopeStageParams) and hope.parallel_pairs == 4
    assert hope.score_overrides() == [
        "hope=reference",
        "llm=embedded",
        "embedder=minilm",
        "hope.progress=false",
        "cache.path=c.sqlite",
        "hope.seed=0",  # 0 is a seed, not "no seed"
    ]


def test_labelled_settings_leave_the_data_keys_behind():
    labelled = LabelledParams(
        corpora=["wikitexts"], chunkers=["fixed_500_o0"], source="src", checksums={"a": "b"}
    )
    settings = labelled.benchmark()
    assert type(settings).__name__ == "BenchmarkSettings"
    assert settings.corpora == ["wikitexts"] and not hasattr(settings, "source")


def test_no_stage_main_reads_the_params_file_raw():
    """Every stage goes through hope.pipeline.stage_params (or its section's own loader)."""
    raw = []
    for module in sorted(STAGES.glob("*_stage.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "hope.core.io":
                raw += [f"{module.name}: {a.name}" for a in node.names if a.name == "read_params"]
    assert raw == []
