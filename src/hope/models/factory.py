"""Building models from configuration (Hydra ``_target_`` points here)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hope.core.packaged_configs import packaged_config
from hope.core.response_cache import ResponseCache
from hope.models.embedded_server import EmbeddedServer
from hope.models.embeddings import (
    CachingEmbedder,
    Embedder,
    HashingEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
)
from hope.models.llm import ChatLLM
from hope.models.llm_settings import LLMSettings
from hope.models.openai_client import LazyOpenAIClient

DEFAULT_CACHE = Path(".cache") / "hope" / "cache.sqlite"
IN_MEMORY = {":memory:", "off", "none", "memory"}
_servers: dict[tuple[Any, ...], EmbeddedServer] = {}


def open_cache(path: str | os.PathLike | None = None) -> ResponseCache:
    """``None``: $HOPE_CACHE or .cache/hope/cache.sqlite; ``":memory:"`` keeps nothing on disk."""
    if path is None:
        path = os.environ.get("HOPE_CACHE", str(DEFAULT_CACHE))
    return ResponseCache(None if str(path).lower() in IN_MEMORY else path)


def embedded_server(
    gguf_path: str | None = None,
    n_parallel: int = 4,
    ctx_per_slot: int = 4096,
    n_threads: int | None = None,
    n_threads_batch: int | None = None,
) -> EmbeddedServer:
    """One server per process and configuration, shared by every client that asks for it."""
    key = (gguf_path, n_parallel, ctx_per_slot, n_threads, n_threads_batch)
    if key not in _servers:
        _servers[key] = EmbeddedServer(
            gguf_path,
            n_parallel=n_parallel,
            ctx_per_slot=ctx_per_slot,
            n_threads=n_threads,
            n_threads_batch=n_threads_batch,
        )
    return _servers[key]


@dataclass
class ModelEndpoint:
    """How to reach one configured chat model, without starting anything yet."""

    settings: LLMSettings
    identity: str  # enters every cache key: answers of another model are not reused (llm_identity)
    endpoint: str | list[str] | Callable[[], str]

    def client(self) -> LazyOpenAIClient:
        """The openai client (built at its first request, retrying network faults itself)."""
        return LazyOpenAIClient(self.settings, self.endpoint)


def llm_identity(backend: str, model: str, *, gguf: str | None = None) -> str:
    """The model's name in every response-cache key (and in each kept result's key).

    An answer is identified by the model, the request and the seed, never by the address it came
    from: a finished cache copied to another machine, or reused after the server moved to another
    port or behind a router, or against a list of servers in any order, sends nothing. ``openai``
    servers are named by their served model name (``llm.model``, the ``model`` field of every
    request); the embedded server by its GGUF file (``gguf``: name and size), whatever port it
    picked at start.

    A fingerprint the server reports (OpenAI's ``system_fingerprint``) is not part of it: it is only
    known once a response has come back, and a cached run must find its answers without sending
    anything, not even the preflight. It is recorded in each cached answer instead
    (``ChatLLM._request``). One consequence: two servers that serve different weights under the same
    name (``llama-server`` answers to any name) share answers; give them different ``llm.model``
    names or ``llm.cache_identity`` values.
    """
    if backend == "embedded":
        return f"embedded:{gguf}"
    return f"{backend}:{model}"


def llm_endpoint(
    *,
    backend: str = "embedded",
    gguf_path: str | None = None,
    n_parallel: int = 4,
    ctx_per_slot: int = 4096,
    n_threads: int | None = None,
    n_threads_batch: int | None = None,
    cache_identity: str | None = None,
    **settings: Any,
) -> ModelEndpoint:
    """An LLM configuration (``hope/conf/llm/*.yaml`` keys) resolved to settings and address.

    ``cache_identity``, when set, replaces the identity ``llm_identity`` derives, verbatim: for
    users who know two configurations serve the same model (the embedded GGUF and a llama-server of
    the same file, or two names of one deployment), or who reuse a cache written under another
    identity (before the identity dropped the URL it was ``openai:<first base_url>|<model>``).
    """
    if cache_identity is not None and (
        not isinstance(cache_identity, str) or not cache_identity.strip()
    ):
        raise ValueError(
            f"llm.cache_identity: expected a non-empty string or null, got {cache_identity!r}"
        )
    llm_settings = LLMSettings(**settings)
    if backend == "embedded":
        server = embedded_server(gguf_path, n_parallel, ctx_per_slot, n_threads, n_threads_batch)
        identity = cache_identity or llm_identity(backend, llm_settings.model, gguf=server.identity)
        return ModelEndpoint(llm_settings, identity, server.ensure_started)
    if backend == "openai":
        if not llm_settings.base_url:
            raise ValueError("llm.base_url is required for backend 'openai'")
        # Every server of a list serves the same model, and none of them enters the identity: the
        # answers and the cache of [A, B] are those of A alone, of B alone or of [B, A].
        servers = llm_settings.servers
        identity = cache_identity or llm_identity(backend, llm_settings.model)
        return ModelEndpoint(llm_settings, identity, servers if len(servers) > 1 else servers[0])
    raise ValueError(f"unknown llm.backend {backend!r} (expected 'embedded' or 'openai')")


def build_llm(*, cache: ResponseCache | None = None, **config: Any) -> ChatLLM:
    target = llm_endpoint(**config)
    return ChatLLM(target.settings, identity=target.identity, endpoint=target.endpoint, cache=cache)


def build_embedder(
    *,
    backend: str = "sentence_transformers",
    model: str = "minilm",
    cache: ResponseCache | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    batch_size: int = 32,
    device: str = "cpu",
    dim: int = 256,
) -> CachingEmbedder:
    inner: Embedder
    if backend == "hashing":
        inner = HashingEmbedder(dim)
    elif backend == "sentence_transformers":
        inner = SentenceTransformerEmbedder(model, batch_size=batch_size, device=device)
    elif backend == "openai":
        if not base_url:
            raise ValueError("embedder.base_url is required for backend 'openai'")
        inner = OpenAIEmbedder(
            model, base_url=base_url, api_key_env=api_key_env, batch_size=batch_size
        )
    else:
        raise ValueError(
            f"unknown embedder.backend {backend!r} "
            "(expected 'sentence_transformers', 'openai' or 'hashing')"
        )
    return CachingEmbedder(inner, cache)


def default_llm(cache: ResponseCache | None = None) -> ChatLLM:
    """The embedded backend exactly as configured in hope/conf/llm/embedded.yaml."""
    from hydra.utils import instantiate

    return instantiate(packaged_config("llm", "embedded"), cache=cache)


def default_embedder(cache: ResponseCache | None = None) -> CachingEmbedder:
    return build_embedder(cache=cache)


def build_from_config(cfg) -> tuple[Any, Any, Any]:
    """Settings, LLM and embedder of a config with ``hope``, ``llm``, ``embedder`` and ``cache``
    sections: a composed Hydra config (the ``score`` config of the DVC stage) or the validated
    ``RunConfig`` of ``hope-run``, whose ``hope`` is already a HopeSettings."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from hope.core.hope_settings import HopeSettings, validated

    if isinstance(cfg.hope, HopeSettings):
        settings = cfg.hope
    else:
        settings = validated(
            HopeSettings, OmegaConf.to_container(cfg.hope, resolve=True), "config", "hope"
        )
    cache = open_cache(cfg.cache.path)
    llm = instantiate(cfg.llm, cache=cache)
    embedder = instantiate(cfg.embedder, cache=cache)
    return settings, llm, embedder


def build_evaluator(cfg) -> Any:
    """The HopeEvaluator of a config (see ``build_from_config``); with ``cache.reuse_results``
    (the default) it keeps each finished pair's result in the response cache and reads it back
    on a rerun."""
    from hope.core.evaluator import HopeEvaluator

    settings, llm, embedder = build_from_config(cfg)
    reuse = bool(getattr(cfg.cache, "reuse_results", True))
    return HopeEvaluator(llm, embedder, settings, result_cache=llm.cache if reuse else None)


def preset_config(group: str, name: str) -> Any:
    """Option ``name`` of a packaged model group (``llm``, ``embedder``) as an OmegaConf node,
    read from its file rather than composed by Hydra, so that it also works inside a running
    Hydra app (``hope-run objective=probe``), where a second Hydra initialisation is refused.
    These groups' files have no defaults list, so reading one is composing it."""
    from importlib.resources import files

    from omegaconf import OmegaConf

    folder = files("hope.conf") / group
    preset = folder / f"{name}.yaml"
    if not preset.is_file():
        options = sorted(
            f.name.removesuffix(".yaml") for f in folder.iterdir() if f.name.endswith(".yaml")
        )
        raise ValueError(f"no packaged {group} config {name!r}; available: {options}")
    return OmegaConf.load(str(preset))


def default_cache_path() -> str:
    """The packaged ``score`` config's cache path ($HOPE_CACHE, else .cache/hope/cache.sqlite)."""
    from importlib.resources import files

    from omegaconf import OmegaConf

    return str(OmegaConf.load(str(files("hope.conf") / "score.yaml")).cache.path)


def embedder_preset(name: str, cache_path: str | None = None) -> CachingEmbedder:
    """An embedder of the packaged ``embedder`` group (minilm, hashing, openai, ...) with the
    cache at ``cache_path`` (default: :func:`default_cache_path`)."""
    from hydra.utils import instantiate

    cache = open_cache(cache_path or default_cache_path())
    return instantiate(preset_config("embedder", name), cache=cache)


def llm_preset(name: str, cache_path: str | None = None) -> ChatLLM:
    """A chat model of the packaged ``llm`` group (embedded, vllm, ollama, ...) with the cache at
    ``cache_path`` (default: :func:`default_cache_path`)."""
    from hydra.utils import instantiate

    cache = open_cache(cache_path or default_cache_path())
    return instantiate(preset_config("llm", name), cache=cache)
