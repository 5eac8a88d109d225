"""The openai client every chat model of the project talks through.

Built at the first request, so a fully cached run never starts the embedded server; one per event
loop, because httpx pools belong to the loop that created them (``evaluate()`` and ragas' test-set
generator each run their own). Network faults are the client's to retry: ``max_retries`` more
attempts on connection errors, timeouts, 408, 409, 429 and 5xx, with exponential backoff and
jitter, honouring ``Retry-After`` (with a list of servers ``hope.models.server_pool`` retries
instead, moving requests off a failed server). Every attempt is reported to the
``attempt_observer`` of the task that sends it, which is how the callers count retries in their
usage.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion

from hope.models.server_pool import ServerPool

if TYPE_CHECKING:
    import httpx2

    from hope.models.llm import LLMSettings

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


class MissingEndpointError(ValueError):
    """No base URL or no API key: nothing to send the request to."""


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
                    endpoint, concurrency=settings.concurrency, settings=settings.pool
                )
        self._endpoint = endpoint
        self._transport = transport
        self._clients: dict[tuple[int, str | None], openai.AsyncOpenAI] = {}
        # Clients of finished event loops stay referenced: openai's finaliser would schedule their
        # aclose() on whatever loop runs at collection time, which fails with "Event loop is
        # closed" and prints a stray traceback. At interpreter exit the finaliser does nothing.
        self._retired: list[openai.AsyncOpenAI] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def client(self, url: str | None = None) -> openai.AsyncOpenAI:
        """The client of the running loop for ``url`` (one of the pool's; None: the endpoint)."""
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get((loop_id, url))
        if client is None:
            if url is not None:
                endpoint = url
            else:
                endpoint = self._endpoint() if callable(self._endpoint) else self._endpoint
            if not endpoint:
                raise MissingEndpointError(f"no base_url configured for {self.settings.model}")
            client = openai.AsyncOpenAI(
                base_url=endpoint,
                api_key=api_key(self.settings),
                # A pool retries itself, on whichever server is healthy.
                max_retries=0 if self.pool is not None else self.settings.max_retries,
                timeout=self.settings.timeout_s,
                http_client=openai.DefaultAsyncHttpxClient(
                    transport=self._transport, event_hooks={"request": [_observe_attempt]}
                ),
            )
            stale = [key for key in self._clients if key[0] != loop_id]
            self._retired.extend(self._clients.pop(key) for key in stale)
            self._clients[(loop_id, url)] = client
        return client

    async def _through_pool(self, send: Callable[[openai.AsyncOpenAI], Any]) -> Any:
        if self.pool is None:
            return await send(self.client())
        return await self.pool.call(
            lambda url: send(self.client(url)),
            max_retries=self.settings.max_retries,
            on_retry=_report_retry,
        )

    async def _create(self, **request: Any) -> Any:
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
        return await self._through_pool(
            lambda client: client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        )

    async def aclose(self) -> None:
        """Close the clients of the running event loop, if any were built."""
        loop_id = id(asyncio.get_running_loop())
        for key in [key for key in self._clients if key[0] == loop_id]:
            await self._clients.pop(key).close()
