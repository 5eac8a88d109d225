"""The openai client every chat model of the project talks through.

Built at the first request, so a fully cached run never starts the embedded server; one per event
loop, because connection pools belong to the loop that created them (``evaluate()`` and ragas'
test-set generator each run their own). Network faults are the client's to retry: ``max_retries``
more attempts on connection errors, timeouts, 408, 409, 429 and 5xx, with exponential backoff and
jitter, honouring ``Retry-After`` (with a list of servers ``hope.models.server_pool`` retries
instead, moving requests off a failed server). Every attempt is reported to the
``attempt_observer`` of the task that sends it, which is how the callers count retries in their
usage.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from contextvars import Context, ContextVar
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion

from hope.models.model_errors import (
    BackendError,
    MissingEndpointError,
    classify_error,
    error_reason,
    redact,
)
from hope.models.server_pool import ServerPool

if TYPE_CHECKING:
    import httpx2

    from hope.models.llm_settings import LLMSettings

# Called with the number of retries already taken (0 for a first attempt).
attempt_observer: ContextVar[Callable[[int], None] | None] = ContextVar(
    "hope_attempt_observer", default=None
)


async def _observe_attempt(request: Any) -> None:
    observer = attempt_observer.get()
    if observer is not None:
        observer(int(request.headers.get("x-stainless-retry-count") or 0))


def _report_retry(retries_taken: int) -> None:
    observer = attempt_observer.get()
    if observer is not None:
        observer(retries_taken)


def aiohttp_transport() -> Any:
    """aiohttp as an httpx transport: the one the openai client ships for its ``aiohttp`` extra
    (``openai.DefaultAioHttpClient``), with connection failures named as such. Its exception map
    turns a refused connection or an unknown host into ``ConnectTimeout`` (the first match wins
    over the more specific ``ClientConnectorError``), which would report a dead server as "Request
    timed out"."""
    import aiohttp
    import httpx2
    from openai._vendor.httpx_aiohttp.transport import AiohttpTransport

    class Transport(AiohttpTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            try:
                return await super().handle_async_request(request)
            except httpx2.ConnectTimeout as exc:
                cause = exc.__cause__
                if isinstance(cause, asyncio.TimeoutError) or cause is None:
                    raise
                detail = f"{type(cause).__name__}: {cause}"
                if isinstance(cause, aiohttp.ClientConnectorError):
                    raise httpx2.ConnectError(detail, request=request) from cause
                raise httpx2.ReadError(detail, request=request) from cause

    return Transport(limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100))


def api_key(settings: LLMSettings) -> str:
    env = settings.api_key_env
    if not env:
        return "not-needed"
    key = os.environ.get(env)
    if not key:
        raise MissingEndpointError(f"environment variable {env} (llm.api_key_env) is not set")
    return key


class LazyOpenAIClient:
    """``chat.completions.create`` (and ``post_chat``) on an ``openai.AsyncOpenAI`` per loop.

    ``endpoint`` is a base URL, a list of them (several servers of one model, spread by a
    ``hope.models.server_pool.ServerPool``, which then retries instead of the openai client) or a
    callable returning one, called only when a request has to be sent. ``transport`` replaces the
    network (test doubles).
    """

    def __init__(
        self,
        settings: LLMSettings,
        endpoint: str | Sequence[str] | Callable[[], str] | None = None,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
    ):
        self.settings = settings
        endpoint = endpoint if endpoint is not None else settings.base_url
        self.pool: ServerPool | None = None
        if isinstance(endpoint, (list, tuple)):
            if len(endpoint) == 1:
                endpoint = endpoint[0]
            else:
                self.pool = ServerPool(
                    endpoint,
                    concurrency=settings.concurrency,
                    settings=settings.pool,
                    classify=classify_error,
                )
        self._endpoint = endpoint
        self._transport = transport
        self._clients: dict[tuple[int, str | None], openai.AsyncOpenAI] = {}
        # Clients of finished event loops stay referenced: openai's finaliser would schedule their
        # aclose() on whatever loop runs at collection time, which fails with "Event loop is
        # closed" and prints a stray traceback. Each client is closed on its own loop instead, as
        # that loop shuts down (``_close_with_loop``).
        self._retired: list[openai.AsyncOpenAI] = []
        self._closers: list[Any] = []
        self._base_url: str | None = None if callable(self._endpoint) else self._endpoint
        if self.pool is not None:
            self._base_url = "[" + ", ".join(server.url for server in self.pool.servers) + "]"
        # The preflight of this client: one task, awaited by every first request of the run.
        self._preflight: tuple[int | None, asyncio.Future | None] = (None, None)
        self._preflight_passed = False
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    @property
    def base_url(self) -> str | None:
        """The address requests go to (None while an embedded server has not been asked)."""
        return self._base_url

    def backend_error(self, exc: BaseException) -> BackendError:
        """``exc`` (fatal, see ``classify_error``) as the error that stops the run."""
        if isinstance(exc, BackendError):
            return exc
        key = os.environ.get(self.settings.api_key_env) if self.settings.api_key_env else None
        return BackendError(
            "LLM", self._base_url, self.settings.model, redact(error_reason(exc), [key])
        )

    async def ensure_preflight(self) -> None:
        """Run the preflight once, before the first request this client sends (concurrent first
        requests wait for the same one; after a failure every request raises the same error)."""
        if self._preflight_passed:
            return
        from hope.models.preflight import preflight_enabled

        if not preflight_enabled():
            self._preflight_passed = True
            return
        loop_id = id(asyncio.get_running_loop())
        if self._preflight[0] != loop_id or self._preflight[1] is None:
            # In a context of its own: its retries are nobody's usage.
            task = asyncio.get_running_loop().create_task(self.preflight(), context=Context())
            self._preflight = (loop_id, task)
        await asyncio.shield(self._preflight[1])
        self._preflight_passed = True

    async def preflight(self) -> None:
        """One cheap request (a one-token completion) before the run: a backend that cannot
        answer (refused, DNS, 401, 403, 404, or 5xx/timeouts past the retries) raises
        BackendError. A content-bound refusal (400...) passes: the backend is there and answers.
        Builds the client, so an embedded server starts here.
        """
        request = {
            "model": self.settings.model,
            "messages": [{"role": "user", "content": "Reply with OK."}],
            "max_tokens": 1,
            "temperature": 0.0,
        }
        # At most two retries: a dead backend is reported in about a second, not after the
        # full backoff of a long run's requests.
        from hope.models.preflight import PREFLIGHT_HEADER

        async def probe(url: str | None) -> None:
            client = self.client(url).with_options(max_retries=min(self.settings.max_retries, 2))
            await client.post(
                "/chat/completions",
                body=request,
                cast_to=ChatCompletion,
                options={"headers": {PREFLIGHT_HEADER: "1"}},
            )

        if self.pool is None:
            try:
                await probe(None)
            except Exception as exc:
                if classify_error(exc) != "content":
                    raise self.backend_error(exc) from exc
            return
        # Several servers: each is asked; those that cannot answer are taken out (and probed
        # again after their cool-down); the run stops only when none can.
        urls = [server.url for server in self.pool.servers]
        outcomes = await asyncio.gather(*(probe(url) for url in urls), return_exceptions=True)
        failed = {
            url: outcome
            for url, outcome in zip(urls, outcomes, strict=True)
            if isinstance(outcome, Exception) and classify_error(outcome) != "content"
        }
        for url, exc in failed.items():
            self.pool.take_out(url, error_reason(exc))
        if len(failed) == len(urls):
            key = os.environ.get(self.settings.api_key_env) if self.settings.api_key_env else None
            reasons = "; ".join(f"{url}: {error_reason(exc)}" for url, exc in failed.items())
            raise BackendError("LLM", self._base_url, self.settings.model, redact(reasons, [key]))

    def client(self, url: str | None = None) -> openai.AsyncOpenAI:
        """The client of the running loop for ``url`` (one of the pool's; None: the endpoint)."""
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get((loop_id, url))
        if client is None:
            endpoint = url if url is not None else self._endpoint
            if callable(endpoint):
                endpoint = endpoint()
            if not endpoint:
                raise MissingEndpointError(f"no base_url configured for {self.settings.model}")
            if self.pool is None:
                self._base_url = endpoint
            client = openai.AsyncOpenAI(
                base_url=endpoint,
                api_key=api_key(self.settings),
                # A pool retries itself, on whichever server is healthy.
                max_retries=0 if self.pool is not None else self.settings.max_retries,
                timeout=self.settings.timeout_s,
                http_client=self._http_client(),
            )
            stale = [key for key in self._clients if key[0] != loop_id]
            self._retired.extend(self._clients.pop(key) for key in stale)
            self._clients[(loop_id, url)] = client
            self._close_with_loop(client)
        return client

    def _close_with_loop(self, client: openai.AsyncOpenAI) -> None:
        """Close ``client`` on the running loop when that loop shuts down.

        ``asyncio.run`` closes the async generators its loop started before closing the loop, so a
        generator parked at its ``yield`` closes the client there; otherwise aiohttp's session is
        collected unclosed and prints "Unclosed client session" when the process exits.
        """

        async def closer() -> Any:
            try:
                yield
            finally:
                await client.close()

        generator = closer()
        self._closers.append(generator)  # the loop holds its generators weakly
        asyncio.get_running_loop().create_task(anext(generator), context=Context())

    def _http_client(self) -> Any:
        """The openai client's HTTP client: httpx over aiohttp's connection pool.

        httpx's own pool scans every connection whenever a request starts or ends; at 64 requests
        in flight the client spent a median 2.04 ms of CPU per request over it against 1.31 ms
        over aiohttp (5 runs of 5,000 requests each, ``bench/results/transport.json``). The
        openai client's retries, timeouts and typed errors are the same over both. An injected
        ``transport`` (test doubles) keeps httpx's."""
        hooks = {"request": [_observe_attempt]}
        transport = self._transport if self._transport is not None else aiohttp_transport()
        return openai.DefaultAsyncHttpxClient(transport=transport, event_hooks=hooks)

    async def _through_pool(self, send: Callable[[openai.AsyncOpenAI], Any]) -> Any:
        if self.pool is None:
            return await send(self.client())
        return await self.pool.call(
            lambda url: send(self.client(url)),
            max_retries=self.settings.max_retries,
            on_retry=_report_retry,
        )

    async def _create(self, **request: Any) -> Any:
        await self.ensure_preflight()
        return await self._through_pool(lambda client: client.chat.completions.create(**request))

    async def post_chat(self, request: dict[str, Any]) -> ChatCompletion:
        """POST /chat/completions with ``request`` as it is (``extra_body`` merged into it).

        ``chat.completions.create`` first walks the whole request (JSON schema included) through
        the SDK's type-driven transform, about 4 ms of CPU per request (measured in
        bench/bench_engine.py); this request is already plain JSON, so the client's own ``post``
        sends it with the same auth, base URL, timeout, retries and typed response.
        """
        body = {k: v for k, v in request.items() if k != "extra_body"}
        body.update(request.get("extra_body", {}))
        await self.ensure_preflight()
        return await self._through_pool(
            lambda client: client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        )

    async def aclose(self) -> None:
        """Close the clients of the running event loop, if any were built."""
        loop_id = id(asyncio.get_running_loop())
        for key in [key for key in self._clients if key[0] == loop_id]:
            await self._clients.pop(key).close()
