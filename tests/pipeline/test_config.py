"""Every option of every config group composes; models and chunkers instantiate offline."""

from __future__ import annotations

import importlib.util
from importlib import resources

import pytest
from hydra.utils import get_method, instantiate
from omegaconf import OmegaConf

from hope.pipeline import CONF_DIR
from hope.pipeline.run import chunker_from_config

from .conftest import compose


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def _packaged(group: str) -> list[str]:
    folder = resources.files("hope.conf").joinpath(group)
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def test_default_config_is_the_offline_sample_experiment():
    cfg = compose([])
    assert cfg.corpus.profile == "sample" and cfg.llm.backend == "embedded"
    assert cfg.embedder.model == "minilm" and cfg.hope.profile == "paper"
    assert cfg.get("chunker") is None and list(cfg.chunkers) == ["fixed_500_o0", "semantic_minilm"]
    assert cfg.tracking.enabled and cfg.tracking.uri.startswith("sqlite:///")
    assert cfg.objective == "hope" and cfg.dry_run is False
    # The sample experiment shrinks HOPE's per-passage work exactly as params.yaml does for DVC.
    assert cfg.hope.focus_passages == 1 and cfg.hope.concept_unity.n_items == 3
    assert cfg.hope.information_preservation.n_segments == 2


@pytest.mark.parametrize("name", _options("chunker"))
def test_every_chunker_composes_and_instantiates(name: str):
    cfg = compose([f"chunker={name}"])
    node = OmegaConf.to_container(cfg.chunker, resolve=True)
    assert node["name"] == name
    if "Semantic" in node["_target_"]:
        # Instantiating loads an embedding model (or needs a key); resolving the target suffices.
        assert callable(get_method(node["_target_"]))
        return
    chunker = chunker_from_config(node)
    passages = chunker.chunk("A first sentence here. " * 60, "doc")
    assert chunker.name == name and len(passages) >= 1


@pytest.mark.parametrize("name", _options("corpus"))
def test_every_corpus_composes(name: str):
    assert compose([f"corpus={name}"]).corpus.profile == name


@pytest.mark.parametrize("name", _options("experiment"))
def test_every_experiment_composes(name: str):
    cfg = compose([f"experiment={name}"])
    # `labelled`: the sample experiment plus the whole labelled benchmark.
    assert cfg.corpus.profile == {"labelled": "sample"}.get(name, name)
    assert len(cfg.labelled.corpora) == (1 if name == "sample" else 4)
    if name == "paper":
        assert sum(cfg.corpus.counts.values()) == 131 and len(cfg.chunkers) == 8
        assert cfg.llm.backend == "openai" and cfg.hope.concept_unity.n_items == 5


@pytest.mark.parametrize("name", _packaged("llm"))
def test_every_llm_instantiates_without_contacting_anything(name: str):
    from hope.core.response_cache import ResponseCache

    cfg = compose([f"llm={name}"])
    llm = instantiate(cfg.llm, cache=ResponseCache(None))
    assert llm.settings.model == cfg.llm.model


@pytest.mark.parametrize("name", _packaged("embedder"))
def test_every_embedder_composes(name: str):
    cfg = compose([f"embedder={name}"])
    assert cfg.embedder.backend in {"sentence_transformers", "openai", "hashing"}
    if name == "hashing":
        assert instantiate(cfg.embedder).embed(["a b", "c"]).shape == (2, cfg.embedder.dim)


@pytest.mark.parametrize("name", _packaged("hope"))
def test_every_hope_profile_composes_into_settings(name: str):
    from hope.core.hope_settings import HopeSettings

    cfg = compose([f"hope={name}"])
    assert HopeSettings(**OmegaConf.to_container(cfg.hope, resolve=True)).profile == name


@pytest.mark.parametrize("name", _options("tracking"))
def test_every_tracking_option_composes(name: str):
    from hope.tracking.tracking_settings import TrackingSettings

    cfg = compose([f"tracking={name}"])
    settings = TrackingSettings.from_mapping(OmegaConf.to_container(cfg.tracking, resolve=True))
    assert settings.enabled is (name == "mlflow")


_PLUGINS = {
    "local": None,
    "joblib": "hydra_plugins.hydra_joblib_launcher",
    "submitit_slurm": "hydra_plugins.hydra_submitit_launcher",
    "submitit_local": "hydra_plugins.hydra_submitit_launcher",
    "optuna_chunk_size": "hydra_plugins.hydra_optuna_sweeper",
    "optuna_probe": "hydra_plugins.hydra_optuna_sweeper",
}


def _plugin_missing(name: str) -> bool:
    module = _PLUGINS[name]
    if module is None:
        return False
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:
        return True


@pytest.mark.parametrize("name", _options("launcher"))
def test_every_launcher_composes_where_its_plugin_is_installed(name: str):
    if _plugin_missing(name):
        pytest.skip(f"{_PLUGINS[name]} is not installed (see conf/launcher/{name}.yaml)")
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = hydra_compose("config", overrides=[f"launcher={name}"], return_hydra_config=True)
    expected = {
        "local": "BasicLauncher",
        "joblib": "JoblibLauncher",
        "submitit_local": "LocalLauncher",
        "submitit_slurm": "SlurmLauncher",
    }[name]
    assert cfg.hydra.launcher._target_.endswith(expected)


@pytest.mark.parametrize("name", _options("sweep"))
def test_every_sweep_composes_where_its_plugin_is_installed(name: str):
    if _plugin_missing(name):
        pytest.skip(f"{_PLUGINS[name]} is not installed (see conf/sweep/{name}.yaml)")
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = hydra_compose("config", overrides=[f"+sweep={name}"], return_hydra_config=True)
    assert cfg.chunker.name == "fixed_500_o0" and "chunker.chunk_size" in cfg.hydra.sweeper.params


def test_overridden_chunker_parameters_reach_the_chunker():
    cfg = compose(["chunker=fixed_500_o0", "chunker.chunk_size=300"])
    chunker = chunker_from_config(OmegaConf.to_container(cfg.chunker, resolve=True))
    passages = chunker.chunk("x" * 900, "doc")
    assert [len(p.text) for p in passages] == [300, 300, 300]
