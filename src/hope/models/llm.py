"""One LLM interface: OpenAI-compatible chat completions with JSON-schema structured output.

Any backend that speaks the protocol works (the embedded llama.cpp server, vLLM, Ollama, llama.cpp's
own server, OpenAI). Responses are validated with pydantic and cached by content. Network faults are
retried by the openai client (``hope.models.openai_client``); an answer that fails its schema or
validation is asked again here, with a new seed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import openai
from pydantic import BaseModel, ValidationError

from hope.core.model_interface import (
    LLMCallError,
    StructuredResponse,
    Usage,
    call_labels,
    usage_scope,
)
from hope.core.response_cache import ResponseCache, content_key
from hope.core.seeding import derive_seed
from hope.models.llm_settings import LLMSettings
from hope.models.model_errors import (
    BackendError,
    MissingEndpointError,
    classify_error,
    error_reason,
)
from hope.models.openai_client import LazyOpenAIClient, attempt_observer
from hope.models.server_pool import ServerPool

CACHE_NAMESPACE = "chat"
# Answers that arrived but failed their schema or validation, by request and attempt: a rerun after
# a kill replays them (and validates them again) instead of sending the request again.
ATTEMPT_NAMESPACE = "chat-invalid"
# What a failed request means is ``classify_error``'s call: a fatal one (dead backend, 401, 403,
# 404) stops the run and is never cached; a transient one fails the item and is not cached; only a
# content-bound one (400 for a prompt longer than the context, ...) is cached, as it fails again.
# Caches written before that rule may hold fatal statuses as failures: they are not believed.
_FATAL_CACHED = re.compile(r"^HTTP (401|403|404|407)\b")


@dataclass
class LLMCall:
    """One finished ``ChatLLM.structured`` call, as ``ChatLLM.on_call`` observers see it."""

    key: str  # the request's cache key (a content hash)
    prompt_id: str
    messages: list[dict[str, str]]
    response: str | None  # the raw answer; None when the call failed
    seed: int | None  # the seed the answer came from (a retry's derived seed), else the asked one
    temperature: float
    latency_s: float
    cached: bool
    attempts: int
    started_ns: int
    error: str | None = None
    # What the call was for (``hope.core.model_interface.call_labels``: chunker, doc_id, metric).
    labels: dict[str, str] = field(default_factory=dict)


class _InvalidResponse(Exception):
    pass


@lru_cache(maxsize=256)
def json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    # Generating a schema costs about a millisecond; a run asks for the same few thousands of times.
    return model.model_json_schema()


@lru_cache(maxsize=256)
def schema_digest(model: type[BaseModel]) -> str:
    return content_key(json_schema_of(model))


def response_format(schema_name: str, model: type[BaseModel], strict: bool) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema_name, "schema": json_schema_of(model), "strict": strict},
    }


def attempt_seed(seed: int | None, attempt: int) -> int | None:
    """The seed ``ChatLLM`` sends at ``attempt`` (0: the request's own, then derived ones)."""
    return seed if attempt == 0 else derive_seed(seed or 0, "retry", attempt)


def attempt_temperature(
    temperature: float, retry_temperatures: Sequence[float] | None, attempt: int
) -> float:
    """The temperature ``ChatLLM`` sends at ``attempt``."""
    if retry_temperatures and attempt > 0:
        return retry_temperatures[min(attempt - 1, len(retry_temperatures) - 1)]
    return temperature


def chat_request(
    settings: LLMSettings,
    messages: Sequence[dict[str, str]],
    fmt: dict[str, Any],
    temperature: float,
    seed: int | None,
    max_tokens: int | None,
) -> dict[str, Any]:
    """The arguments of ``chat.completions.create`` for one attempt (``extra_body`` apart)."""
    request: dict[str, Any] = {
        "model": settings.model,
        "messages": list(messages),
        "temperature": temperature,
        "max_tokens": max_tokens or settings.max_tokens,
        "response_format": fmt,
    }
    if settings.send_seed and seed is not None:
        request["seed"] = seed
    if settings.extra_body:
        request["extra_body"] = dict(settings.extra_body)
    return request


class ChatLLM:
    """Async structured-output client with caching, bounded concurrency and retries.

    ``endpoint`` is a base URL or a callable returning one; the callable is only invoked when a
    request actually has to be sent, so a fully cached run never starts the embedded server.
    ``client`` shares an existing chat client (its retry policy applies); ``transport`` replaces
    the network under the client built here (test doubles).
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        identity: str,
        endpoint: str | Callable[[], str] | None = None,
        cache: ResponseCache | None = None,
        client: Any | None = None,
        transport: Any | None = None,
    ):
        self.settings = settings
        self.identity = identity
        self._cache = cache
        self._owns_client = client is None
        if client is None:
            client = LazyOpenAIClient(settings, endpoint, transport=transport)
        self._client = client
        self._loop: tuple[int | None, Any, dict[str, asyncio.Future]] = (None, None, {})
        self.usage = Usage()
        # Optional observer of each finished call (tracing: hope.tracking.traces); changes nothing.
        self.on_call: Callable[[LLMCall], None] | None = None

    @property
    def cache(self) -> ResponseCache | None:
        """The response cache this client reads and writes (None: none)."""
        return self._cache

    @property
    def server_pool(self) -> ServerPool | None:
        """The pool of servers behind this client when ``llm.base_url`` is a list, else None
        (its ``stats()`` say what each server answered)."""
        return getattr(self._client, "pool", None)

    def _add(self, field: str, amount: float) -> None:
        setattr(self.usage, field, getattr(self.usage, field) + amount)
        scoped = usage_scope.get()
        if scoped is not None:
            setattr(scoped, field, getattr(scoped, field) + amount)

    def _loop_state(self) -> tuple[asyncio.Semaphore, dict[str, asyncio.Future]]:
        """The semaphore and the requests in flight of the running event loop (both belong to
        one loop; evaluate() may be called repeatedly, each time with a fresh loop)."""
        loop_id = id(asyncio.get_running_loop())
        if self._loop[0] != loop_id:
            self._loop = (loop_id, asyncio.Semaphore(self.settings.total_concurrency), {})
        return self._loop[1], self._loop[2]

    async def aclose(self) -> None:
        """Close the HTTP client this object created for the running event loop."""
        if self._owns_client:
            await self._client.aclose()

    def cache_key(
        self,
        *,
        messages: Sequence[dict[str, str]],
        response_model: type[BaseModel],
        temperature: float,
        seed: int | None,
        max_tokens: int | None,
        prompt_id: str,
    ) -> str:
        material = {
            "identity": self.identity,
            "prompt": prompt_id,
            "messages": list(messages),
            "schema": schema_digest(response_model),
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens or self.settings.max_tokens,
        }
        if self.settings.extra_body:
            # Backend fields such as llama.cpp's DRY sampler or prompt caching change the answer.
            material["extra_body"] = dict(self.settings.extra_body)
        return content_key(material)

    def request_key(self, request: dict[str, Any]) -> str:
        """``cache_key`` of a ``structured`` call, given its keyword arguments."""
        fields = ("messages", "response_model", "temperature", "seed", "max_tokens", "prompt_id")
        return self.cache_key(**{name: request.get(name) for name in fields})

    def lookup(
        self,
        key: str,
        response_model: type[BaseModel],
        validate: Callable[[Any], None] | None = None,
    ) -> StructuredResponse | None:
        """The cached answer to request ``key``, or None; a cached failure raises LLMCallError."""
        hit = self._cache.get_json(CACHE_NAMESPACE, key) if self._cache is not None else None
        if hit is None:
            return None
        if "error" in hit:
            if _FATAL_CACHED.match(hit["error"]):
                return None
            raise LLMCallError(hit["error"], attempts=0)
        try:
            value = response_model.model_validate_json(hit["content"])
            if validate is not None:
                validate(value)
        except (ValidationError, ValueError):
            return None  # stale entry (schema or validation rules changed): ask again
        return StructuredResponse(
            value, hit["content"], True, 0, hit.get("seed"), hit["temperature"]
        )

    async def structured(self, **request: Any) -> StructuredResponse:
        """``_structured`` (below), reported to ``on_call`` when an observer is set."""
        if self.on_call is None:
            return await self._structured(**request)
        started_ns, mark = time.time_ns(), time.perf_counter()
        try:
            result = await self._structured(**request)
        except LLMCallError as exc:
            self._report(request, started_ns, mark, None, str(exc))
            raise
        self._report(request, started_ns, mark, result, None)
        return result

    def _report(self, request: dict[str, Any], started_ns: int, mark: float, result, error) -> None:
        try:
            self.on_call(  # type: ignore[misc]
                LLMCall(
                    key=self.request_key(request),
                    prompt_id=request["prompt_id"],
                    messages=list(request["messages"]),
                    response=result.raw if result is not None else None,
                    seed=result.seed_used if result is not None else request.get("seed"),
                    temperature=(
                        result.temperature_used if result is not None else request["temperature"]
                    ),
                    latency_s=time.perf_counter() - mark,
                    cached=bool(result.cached) if result is not None else False,
                    attempts=result.attempts if result is not None else 0,
                    started_ns=started_ns,
                    error=error,
                    labels=dict(call_labels.get() or {}),
                )
            )
        except Exception as exc:  # an observer's fault must not fail a score
            logging.getLogger(__name__).warning("on_call observer failed: %r", exc)

    async def _structured(
        self,
        *,
        messages: Sequence[dict[str, str]],
        response_model: type[BaseModel],
        schema_name: str,
        prompt_id: str,
        temperature: float,
        seed: int | None,
        max_tokens: int | None = None,
        invalid_retry_temperatures: Sequence[float] | None = None,
        validate: Callable[[Any], None] | None = None,
    ) -> StructuredResponse:
        """Ask for a JSON answer matching ``response_model``; raise LLMCallError on final failure.

        Transport faults are retried with the *same* request, so injected faults cannot change a
        result. An invalid answer is retried with a derived seed (same seed would reproduce it),
        or with the next temperature of ``invalid_retry_temperatures`` when given. ``validate``
        may reject a schema-valid answer (raise ValueError): it then counts as invalid too.
        """
        key = self.cache_key(
            messages=messages,
            response_model=response_model,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            prompt_id=prompt_id,
        )
        try:
            cached = self.lookup(key, response_model, validate)
        except LLMCallError:
            self._add("cache_hits", 1)
            self._add("failures", 1)
            raise
        if cached is not None:
            self._add("cache_hits", 1)
            return cached

        # The same request may already be on its way for another caller: the pairs of one
        # document share its information-preservation segments, and chunkers that cut a passage
        # identically ask the same questions of it. Wait for that answer instead of computing it
        # twice; the cache alone cannot help while the first request is still running.
        inflight = self._loop_state()[1]
        pending = inflight.get(key)
        if pending is not None:
            self._add("cache_hits", 1)
            shared, error = await asyncio.shield(pending)
            if error is not None:
                self._add("failures", 1)
                raise error
            return replace(shared, cached=True, attempts=0)
        outcome: asyncio.Future = asyncio.get_running_loop().create_future()
        inflight[key] = outcome
        try:
            result = await self._request(
                key,
                messages=messages,
                response_model=response_model,
                schema_name=schema_name,
                temperature=temperature,
                seed=seed,
                max_tokens=max_tokens,
                invalid_retry_temperatures=invalid_retry_temperatures,
                validate=validate,
            )
        except (LLMCallError, BackendError) as exc:
            outcome.set_result((None, exc))
            raise
        except BaseException as exc:
            # Cancelled or broken: waiting callers get the same error rather than hanging.
            outcome.set_result((None, LLMCallError(f"shared request failed: {exc!r}", attempts=0)))
            raise
        else:
            outcome.set_result((result, None))
            return result
        finally:
            inflight.pop(key, None)

    async def _request(
        self,
        key: str,
        *,
        messages: Sequence[dict[str, str]],
        response_model: type[BaseModel],
        schema_name: str,
        temperature: float,
        seed: int | None,
        max_tokens: int | None,
        invalid_retry_temperatures: Sequence[float] | None,
        validate: Callable[[Any], None] | None,
    ) -> StructuredResponse:
        semaphore = self._loop_state()[0]
        settings = self.settings
        fmt = response_format(schema_name, response_model, settings.strict_schema)
        calls = 0
        invalid_count = 0
        client_retries = 0

        def observe(retries_taken: int) -> None:
            nonlocal client_retries
            if retries_taken:  # a first attempt is counted below, whatever the client
                client_retries += 1
                self._add("requests", 1)
                self._add("retries", 1)

        while True:
            calls += 1
            call_seed = attempt_seed(seed, invalid_count)
            call_temperature = attempt_temperature(
                temperature, invalid_retry_temperatures, invalid_count
            )
            request = chat_request(settings, messages, fmt, call_temperature, call_seed, max_tokens)
            transient = False
            raw: str | None = None
            fingerprint: str | None = None
            # An invalid answer that arrived before a kill is replayed, not asked again.
            attempt_key = content_key({"request": key, "invalid_attempt": invalid_count})
            replay = (
                self._cache.get_json(ATTEMPT_NAMESPACE, attempt_key)
                if self._cache is not None
                else None
            )
            try:
                if replay is not None:
                    self._add("cache_hits", 1)
                    if "content" not in replay:
                        raise _InvalidResponse(replay.get("invalid", "invalid response"))
                    raw = replay["content"]
                else:
                    async with semaphore:
                        self._add("requests", 1)
                        started = time.perf_counter()
                        observing = attempt_observer.set(observe)
                        try:
                            response = await self._send(request)
                        finally:
                            attempt_observer.reset(observing)
                            self._add("latency_s", time.perf_counter() - started)
                    raw = _content_of(response, self._add)
                    fingerprint = getattr(response, "system_fingerprint", None)
                value = response_model.model_validate_json(raw)
                if validate is not None:
                    validate(value)
            except (openai.APIStatusError, openai.APIConnectionError) as exc:  # after retries
                kind = classify_error(exc)
                if kind == "fatal":
                    raise self._backend_error(exc) from exc
                transient = kind == "transient"
                reason = error_reason(exc)
            except (ValidationError, _InvalidResponse, ValueError) as exc:
                self._add("invalid_responses", 1)
                if replay is None and self._cache is not None:
                    # Durable the moment it arrives, like a valid answer (no await in between).
                    stored = {"content": raw} if raw is not None else {"invalid": _short(exc)}
                    self._cache.put_json(ATTEMPT_NAMESPACE, attempt_key, stored)
                invalid_count += 1
                if invalid_count <= settings.max_retries:
                    self._add("retries", 1)
                    continue  # the server is fine; the next seed is the remedy, not waiting
                reason = f"invalid response: {_short(exc)}"
            else:
                if self._cache is not None:
                    entry: dict[str, Any] = {
                        "content": raw,
                        "seed": call_seed,
                        "temperature": call_temperature,
                    }
                    if isinstance(fingerprint, str) and fingerprint:
                        # Which build or configuration of the model answered, where the server
                        # says (OpenAI's system_fingerprint): evidence kept with the answer, not
                        # part of its key, which must be known before anything is sent.
                        entry["fingerprint"] = fingerprint
                    self._cache.put_json(CACHE_NAMESPACE, key, entry)
                attempts = calls + client_retries
                return StructuredResponse(value, raw, False, attempts, call_seed, call_temperature)

            attempts = calls + client_retries
            self._add("failures", 1)
            if transient:
                self._add("transient_failures", 1)
            final = f"{reason} (after {attempts} attempt{'s' if attempts > 1 else ''})"
            if self._cache is not None and not transient:
                self._cache.put_json(CACHE_NAMESPACE, key, {"error": final})
            raise LLMCallError(final, attempts=attempts)

    async def _send(self, request: dict[str, Any]) -> Any:
        try:
            if isinstance(self._client, LazyOpenAIClient):
                return await self._client.post_chat(request)
            return await self._client.chat.completions.create(**request)
        except MissingEndpointError as exc:
            raise self._backend_error(exc) from exc

    def _backend_error(self, exc: BaseException) -> BackendError:
        if isinstance(self._client, LazyOpenAIClient):
            return self._client.backend_error(exc)
        base_url = str(getattr(self._client, "base_url", "") or "") or self.settings.base_url
        return BackendError("LLM", base_url, self.settings.model, error_reason(exc))


def _content_of(response: Any, add: Callable[[str, float], None]) -> str:
    if getattr(response, "usage", None) is not None:
        add("prompt_tokens", response.usage.prompt_tokens or 0)
        add("completion_tokens", response.usage.completion_tokens or 0)
    if not response.choices:
        raise _InvalidResponse("no choices in response")
    choice = response.choices[0]
    content = choice.message.content
    if not content:
        raise _InvalidResponse("empty message content")
    if choice.finish_reason == "length":
        raise _InvalidResponse("answer cut off at max_tokens")
    return content


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
