"""HOPE: Holistic Passage Evaluation, a label-free metric for text chunking.

The public API: ``evaluate`` (one chunking of one document, offline default models unless given),
``HopeEvaluator`` (models injected, many documents), ``HopeSettings`` and ``load_profile``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hope.core import config_resolvers
from hope.core.evaluator import HopeEvaluator, InputError
from hope.core.hope_settings import HopeSettings, load_profile
from hope.core.model_interface import ChatModel, Embedder
from hope.core.result import HopeResult
from hope.models.factory import default_embedder, default_llm, open_cache


def evaluate(
    document: str,
    passages: Sequence[str],
    passage_ids: Sequence[str] | None = None,
    *,
    llm: ChatModel | None = None,
    embedder: Embedder | None = None,
    settings: HopeSettings | str = "paper",
    cache_path: str | None = None,
) -> HopeResult:
    """Score ``passages`` (a chunking of ``document``) with HOPE.

    ``settings`` is a HopeSettings or a profile name. Missing models are the offline defaults:
    the embedded SmolLM2 server and the packaged MiniLM, sharing the cache at ``cache_path``.
    """
    if isinstance(settings, str):
        settings = load_profile(settings)
    if llm is None or embedder is None:
        cache = open_cache(cache_path)
        llm = llm or default_llm(cache)
        embedder = embedder or default_embedder(cache)
    return HopeEvaluator(llm, embedder, settings).evaluate(document, passages, passage_ids)


__all__ = ["HopeEvaluator", "HopeResult", "HopeSettings", "InputError", "evaluate", "load_profile"]
__version__ = "0.1.0"

# ${hope.as_overrides:...} of conf/dvc_params.yaml; Hydra imports this package for pkg://hope.conf.
config_resolvers.register()
