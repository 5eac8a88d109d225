"""The openai client every chat model of the project talks through.

Built at the first request, so a fully cached run never starts the embedded server; one per event
loop, because httpx pools belong to the loop that created them (``evaluate()`` and ragas' test-set
generator each run their own). Network faults are the client's to retry: ``max_retries`` more
attempts on connection errors, timeouts, 408, 409, 429 and 5xx, with exponential backoff and
jitter, honouring ``Retry-After``. Every attempt is reported to the ``attempt_observer`` of the
task that sends it, which is how the callers count retries in their usage.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from contextvars import ContextVar
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion

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

    ``endpoint`` is a base URL or a callable returning one, called only when a request has to be
    sent. ``transport`` replaces the network (test doubles).
    """

    def __init__(
        self,
        settings: LLMSettings,
        endpoint: str | Callable[[], str] | None = None,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
    ):
        self.settings = settings
        self._endpoint = endpoint if endpoint is not None else settings.base_url
        self._transport = transport
        self._clients: dict[int, openai.AsyncOpenAI] = {}
        # Clients of finished event loops stay referenced: openai's finaliser would schedule their
        # aclose() on whatever loop runs at collection time, which fails with "Event loop is
        # closed" and prints a stray traceback. At interpreter exit the finaliser does nothing.
        self._retired: list[openai.AsyncOpenAI] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def client(self) -> openai.AsyncOpenAI:
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get(loop_id)
        if client is None:
            endpoint = self._endpoint() if callable(self._endpoint) else self._endpoint
            if not endpoint:
                raise MissingEndpointError(f"no base_url configured for {self.settings.model}")
            client = openai.AsyncOpenAI(
                base_url=endpoint,
                api_key=api_key(self.settings),
                max_retries=self.settings.max_retries,
                timeout=self.settings.timeout_s,
                http_client=openai.DefaultAsyncHttpxClient(
                    transport=self._transport, event_hooks={"request": [_observe_attempt]}
                ),
            )
            self._retired.extend(self._clients.values())
            self._clients = {loop_id: client}
        return client

    async def _create(self, **request: Any) -> Any:
        return await self.client().chat.completions.create(**request)

    async def post_chat(self, request: dict[str, Any]) -> ChatCompletion:
        """POST /chat/completions with ``request`` as it is (``extra_body`` merged into it).

        ``chat.completions.create`` first walks the whole request (JSON schema included) through
        the SDK's type-driven transform, about 4 ms of CPU per request (measured in
        bench/bench_engine.py); this request is already plain JSON, so the client's own ``post``
        sends it with the same auth, base URL, timeout, retries and typed response.
        """
        body = {k: v for k, v in request.items() if k != "extra_body"}
        body.update(request.get("extra_body", {}))
        return await self.client().post("/chat/completions", body=body, cast_to=ChatCompletion)

    async def aclose(self) -> None:
        """Close the client of the running event loop, if one was built."""
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.close()
