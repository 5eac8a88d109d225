"""Every config group composes, validates and instantiates (nothing is started or called)."""

from importlib import resources

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from hope.core.hope_settings import HopeSettings, load_profile
from hope.core.packaged_configs import compose_config
from hope.models.llm import ChatLLM


def options(group):
    folder = resources.files("hope.conf").joinpath(group)
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def test_groups_are_present():
    assert options("hope") == ["paper", "reference", "robust"]
    assert {"embedded", "openai", "vllm", "ollama", "llamacpp_server"} <= set(options("llm"))
    assert {"minilm", "openai", "hashing", "sentence_transformers"} <= set(options("embedder"))


@pytest.mark.parametrize("profile", options("hope"))
def test_hope_profiles_validate(profile):
    cfg = compose_config([f"hope={profile}"])
    settings = HopeSettings(**OmegaConf.to_container(cfg.hope, resolve=True))
    assert settings.profile == profile
    assert settings == load_profile(profile)


@pytest.mark.parametrize("llm", options("llm"))
def test_llm_configs_instantiate_without_contacting_anything(llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    cfg = compose_config([f"llm={llm}"])
    client = instantiate(cfg.llm, cache=None)
    assert isinstance(client, ChatLLM)
    assert client.usage.requests == 0
    dumped = OmegaConf.to_yaml(cfg)
    assert "sk-test-not-real" not in dumped  # only the variable's name is configured


@pytest.mark.parametrize("embedder", ["hashing", "minilm"])
def test_offline_embedders_instantiate(embedder):
    cfg = compose_config([f"embedder={embedder}"])
    model = instantiate(cfg.embedder, cache=None)
    assert model.identity


def test_paper_profile_differs_from_reference_where_the_notes_say():
    paper, ref = load_profile("paper"), load_profile("reference")
    assert paper.concept_unity.method == "statements" and ref.concept_unity.method == "qa_centroid"
    assert paper.concept_unity.temperature > 0 and ref.concept_unity.temperature == 0
    assert paper.aggregation.clip == "negative_to_zero" and ref.aggregation.clip == "unit_interval"
    assert ref.information_preservation.top_k == 5 and ref.aggregation.min_passages == 2
    assert ref.semantic_independence.failed_answer == "zero"


def test_unknown_profile_lists_the_available_ones():
    with pytest.raises(ValueError, match="available"):
        load_profile("nonsense")


def test_inconsistent_settings_fail_at_config_time():
    with pytest.raises(ValueError, match="min_items"):
        load_profile("paper", concept_unity={"n_items": 2, "min_items": 3})


def test_profile_overrides_merge_into_nested_sections():
    settings = load_profile("reference", concept_unity={"n_items": 2})
    assert settings.concept_unity.n_items == 2
    assert settings.concept_unity.method == "qa_centroid" and settings.concept_unity.critic
