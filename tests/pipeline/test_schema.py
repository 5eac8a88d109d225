"""One pydantic validation per composed config (params.yaml, a hope-run job), errors naming keys."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from hope.core.hope_settings import ConfigError
from hope.pipeline.config_schema import validate_run_config
from hope.pipeline.params import compose_params, main
from hope.rag.rag_config import RagConfigError, load_rag_config

from .conftest import compose


def test_the_rag_group_is_composed_by_hydra_and_read_as_is_by_the_stages(tmp_path: Path):
    params = compose_params(
        ["rag_llm@experiment.rag.llm=vllm", "experiment.rag.retrieval.top_k=7", "experiment=mirror"]
    )
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    config, profile = load_rag_config(path)
    assert profile == "mirror"
    assert config.retrieval.top_k == 7
    assert config.questions.count_for("mirror") == 100  # conf/rag/default.yaml
    # rag_llm's preset composed over the rag group's role: its n_threads override stays.
    assert config.llm.judge.preset == "vllm"
    assert config.llm.judge.overrides == {"n_threads": 1, "max_tokens": 1024}


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("experiment.rag.retrieval.top_k=0", "rag.retrieval.top_k"),
        ("experiment.rag.ragas.metrics=[nope]", "rag.ragas.metrics"),
        ("+experiment.rag.retrieval.k=3", "rag.retrieval.k: unknown setting"),
        ("analysis.binning=linear", "analysis.binning"),
        ("experiment.scoring.parallel_pairs=0", "hope.parallel_pairs"),
        ("experiment.bleu.tokenize=spacy", "bleu.tokenize"),
        ("experiment.chunkers=[]", "chunkers"),
    ],
)
def test_a_bad_value_in_params_is_an_error_naming_its_key(override, key, capsys):
    with pytest.raises(ConfigError, match=f"conf/dvc_params.yaml: .*{key}"):
        compose_params([override])
    assert main(["--check", override]) == 2
    assert key in capsys.readouterr().err


def test_a_stage_reading_a_bad_rag_section_names_the_file_and_key(tmp_path: Path):
    path = tmp_path / "params.yaml"
    params = compose_params()
    params["rag"]["questions"]["max_attempts"] = 0
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    with pytest.raises(RagConfigError, match=r"params\.yaml: rag\.questions\.max_attempts: "):
        load_rag_config(path)
    path.write_text(yaml.safe_dump({"corpora": {"profile": "sample"}}), encoding="utf-8")
    with pytest.raises(RagConfigError, match="no 'rag' mapping"):
        load_rag_config(path)


@pytest.mark.parametrize("name", ["sample", "mirror", "paper"])
def test_every_hope_run_experiment_validates(name):
    config = validate_run_config(
        OmegaConf.to_container(compose([f"experiment={name}"]), resolve=True)
    )
    assert config.rag.retrieval.top_k >= 1 and config.chunkers


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("objective=rouge", "objective"),
        ("hope.concept_unity.n_items=0", "hope.concept_unity.n_items"),
        ("rag.answer.temperature=-1", "rag.answer.temperature"),
        ("bleu.enabled=maybe", "bleu.enabled"),
    ],
)
def test_a_bad_hope_run_config_names_its_key(override, key):
    cfg = OmegaConf.to_container(compose([override]), resolve=True)
    with pytest.raises(ConfigError, match=f"hope-run config: .*{key}"):
        validate_run_config(cfg)
