"""Model clients of the RAG side: a response-caching wrapper for the requests ragas makes through
instructor (over ``hope.models.openai_client.LazyOpenAIClient``), the ragas ``InstructorLLM`` over
it, and the project's embedder behind ragas' embeddings interface.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Mapping, Sequence
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np

from hope.core.response_cache import ResponseCache, content_key
from hope.models.embeddings import Embedder
from hope.models.model_errors import BackendError, classify_error, error_reason

# ragas reports usage to a remote service unless told not to; this project runs offline.
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

RAGAS_CACHE_NAMESPACE = "ragas-chat"
# Request fields that do not change the answer and must not split the cache.
_TRANSPORT_FIELDS = {"timeout", "extra_headers", "extra_query", "stream_options"}


# Integer fields of ragas' output models that are binary verdicts (context recall, response
# relevancy, faithfulness, factual correctness, context precision).
BINARY_FIELDS = frozenset({"attributed", "verdict", "noncommittal"})


def bound_schema(schema: Any, *, max_string_chars: int, max_items: int) -> Any:
    """A copy of a JSON schema in which every free string gets ``maxLength``, every array
    ``maxItems`` (where the schema sets none) and the binary verdicts (``BINARY_FIELDS``) the
    values 0 and 1.

    ragas' output models leave both open; a grammar-constrained backend then lets a small judge
    write one statement forever until ``max_tokens`` cuts the JSON off, which costs the longest
    possible request and still fails. With bounds the grammar closes the string or list instead.
    An answer a capable judge writes stays inside the bounds, and ragas' own pydantic models
    still validate the result.
    """
    bound = partial(bound_schema, max_string_chars=max_string_chars, max_items=max_items)
    if isinstance(schema, list):
        return [bound(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: bound(value) for key, value in schema.items()}
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    free_string = "enum" not in schema and "const" not in schema and "pattern" not in schema
    if "string" in types and free_string and "maxLength" not in schema:
        bounded["maxLength"] = max_string_chars
    if "array" in types and "maxItems" not in schema:
        bounded["maxItems"] = max_items
    # ragas' 0/1 verdicts are plain integers in its models; the 135M judge wrote `attributed: 2`
    # (context recall out of range, issue 12). The grammar now allows 0 and 1 only.
    for name, prop in (bounded.get("properties") or {}).items():
        if name in BINARY_FIELDS and isinstance(prop, dict) and prop.get("type") == "integer":
            prop.setdefault("enum", [0, 1])
    return bounded


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr, sort_keys=True))


class CachingChatClient:
    """``chat.completions.create`` answered from the response cache when the same request (model
    identity + every answer-determining field) was made before; otherwise forwarded to ``inner``
    under a concurrency bound and stored. A warm rerun therefore sends nothing, and a killed run
    resumes where it stopped. Only successful responses are stored: a transport fault is retried
    on the next run, while an unparseable answer is stored and fails identically again. A fatal
    error of the backend (dead, 401, 403, 404) raises BackendError and is never stored.
    """

    def __init__(
        self,
        inner: Any,
        *,
        identity: str,
        cache: ResponseCache | None,
        concurrency: int = 4,
        schema_bounds: Mapping[str, int] | None = None,
    ):
        self.inner = inner
        self.schema_bounds = dict(schema_bounds) if schema_bounds else None
        self.identity = identity
        self.cache = cache
        self.concurrency = concurrency
        self.requests = 0
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.latency_s = 0.0
        # A fatal error of the backend (hope.models.model_errors.classify_error): ragas turns
        # exceptions into NaN scores, so it is kept here and raised again at once for every
        # later request, and the callers look for it (``backend_error_in``) to stop the run.
        self.fatal: BackendError | None = None
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _semaphore(self) -> asyncio.Semaphore:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores = {loop_id: asyncio.Semaphore(self.concurrency)}
        return self._semaphores[loop_id]

    def key(self, request: dict[str, Any]) -> str:
        material = {k: v for k, v in request.items() if k not in _TRANSPORT_FIELDS}
        return content_key({"identity": self.identity, "request": _jsonable(material)})

    async def _create(self, **request: Any) -> Any:
        from openai.types.chat import ChatCompletion

        request = self._bounded(request)
        key = self.key(request)
        if self.cache is not None:
            hit = self.cache.get_json(RAGAS_CACHE_NAMESPACE, key)
            if hit is not None:
                self.cache_hits += 1
                return ChatCompletion.model_validate(hit)
        if self.fatal is not None:  # the backend is gone: no further request, the same error
            raise self.fatal
        async with self._semaphore():
            self.requests += 1
            started = time.perf_counter()
            try:
                response = await self.inner.chat.completions.create(**request)
            except Exception as exc:
                if classify_error(exc) != "fatal":
                    raise  # transient or content-bound: nothing stored, ragas decides
                self.fatal = self._backend_error(exc, request)
                raise self.fatal from exc
            finally:
                self.latency_s += time.perf_counter() - started
        stored = response.model_dump(mode="json", exclude_none=True)
        usage = stored.get("usage") or {}
        self.prompt_tokens += usage.get("prompt_tokens", 0) or 0
        self.completion_tokens += usage.get("completion_tokens", 0) or 0
        if self.cache is not None:
            self.cache.put_json(RAGAS_CACHE_NAMESPACE, key, stored)
        return ChatCompletion.model_validate(stored)

    def _backend_error(self, exc: BaseException, request: dict[str, Any]) -> BackendError:
        make = getattr(self.inner, "backend_error", None)
        if callable(make):
            return make(exc)
        if isinstance(exc, BackendError):
            return exc
        base_url = getattr(self.inner, "base_url", None)
        return BackendError("LLM", base_url, str(request.get("model")), error_reason(exc))

    def _bounded(self, request: dict[str, Any]) -> dict[str, Any]:
        fmt = request.get("response_format")
        if not self.schema_bounds or not isinstance(fmt, dict) or "json_schema" not in fmt:
            return request
        spec = dict(fmt["json_schema"])
        spec["schema"] = bound_schema(spec.get("schema"), **self.schema_bounds)
        return {**request, "response_format": {**fmt, "json_schema": spec}}

    def usage(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 3),
        }


def instructor_llm(
    chat_client: CachingChatClient,
    *,
    model: str,
    temperature: float,
    max_tokens: int,
    seed: int | None,
    extra_body: dict[str, Any] | None = None,
    parse_retries: int = 1,
) -> Any:
    """ragas' ``InstructorLLM`` in ``Mode.JSON_SCHEMA`` over ``chat_client``.

    JSON_SCHEMA (a grammar-constrained ``response_format``) rather than ragas' ``llm_factory``
    default JSON mode, which small local models fail. ``seed`` and ``extra_body`` travel with
    every request because the embedded llama.cpp server reproduces an answer only with a fixed
    seed and prompt caching off.
    """
    import instructor
    import openai
    from ragas.llms.base import InstructorLLM, InstructorModelArgs

    # instructor only accepts a real OpenAI client; its create method is swapped for the caching
    # one, so the placeholder address below is never contacted.
    shim = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused")
    shim.chat.completions.create = chat_client.chat.completions.create  # type: ignore[method-assign]
    client = instructor.from_openai(shim, mode=instructor.Mode.JSON_SCHEMA)
    extra: dict[str, Any] = {"max_retries": parse_retries}
    if seed is not None:
        extra["seed"] = seed
    if extra_body:
        extra["extra_body"] = dict(extra_body)
    return InstructorLLM(
        client,
        model=model,
        provider="openai",
        model_args=InstructorModelArgs(temperature=temperature, top_p=1.0, max_tokens=max_tokens),
        **extra,
    )


def ragas_embeddings(embedder: Embedder) -> Any:
    """The project's (caching) embedder behind ragas' modern ``BaseRagasEmbedding``."""
    from ragas.embeddings.base import BaseRagasEmbedding

    class ProjectEmbeddings(BaseRagasEmbedding):
        def __init__(self, inner: Embedder):
            super().__init__(cache=None)
            self.inner = inner

        def embed_text(self, text: str, **kwargs: Any) -> list[float]:
            return self.embed_texts([text])[0]

        def embed_texts(self, texts: Sequence[str], **kwargs: Any) -> list[list[float]]:
            return np.asarray(self.inner.embed(list(texts)), dtype=np.float64).tolist()

        async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
            return (await self.aembed_texts([text]))[0]

        async def aembed_texts(self, texts: Sequence[str], **kwargs: Any) -> list[list[float]]:
            # Model inference is CPU-bound: keep the event loop free for the LLM requests.
            return await asyncio.to_thread(self.embed_texts, list(texts))

    return ProjectEmbeddings(embedder)
