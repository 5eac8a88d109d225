"""The packaged Hydra configs (``hope/conf``: HOPE profiles, LLM and embedder presets, the
``score`` config), composed by name. Loading only: what is built from them is the job of
``hope.models.factory``."""

from __future__ import annotations


def compose_config(overrides: list[str], config_name: str = "score"):
    """The packaged ``hope.conf`` config (``score`` by default) with Hydra overrides applied."""
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="hope.conf", version_base="1.3"):
        return compose(config_name=config_name, overrides=overrides)


def packaged_config(group: str, name: str):
    """Option ``name`` of the packaged group ``group`` (hope, llm, embedder), composed by Hydra;
    a ValueError that lists the options when there is no such option. Interpolations such as
    ``${oc.env:...}`` stay unresolved until the caller resolves them."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    with initialize_config_module(config_module="hope.conf", version_base="1.3"):
        options = GlobalHydra.instance().config_loader().get_group_options(group)
        if name not in options:
            raise ValueError(f"no packaged {group} config {name!r}; available: {options}")
        node = compose(config_name=None, overrides=[f"+{group}={name}"])[group]
    return OmegaConf.create(OmegaConf.to_container(node))  # detached, open to new keys
