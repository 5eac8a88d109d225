"""Several OpenAI-compatible servers of one model used as one: ``llm.base_url: [url, url, ...]``.

Each request goes to the healthy server with the fewest requests in flight, never more than
``llm.concurrency`` on one server. Faults are retried here rather than by the openai client (whose
own retries would keep knocking at a dead server): a refused connection takes the server out at
once and the request moves to another server without costing one of its ``max_retries``; a
transient fault (5xx, 408/409/425/429, a timeout) is retried with exponential backoff (honouring
``Retry-After``) on the least loaded server, and ``pool.failures_to_eject`` of them in a row take
the server out. A server that is out gets one probing request after ``pool.cooldown_s``; success
brings it back, failure doubles its cool-down (up to ``pool.max_cooldown_s``).

Which server answered never matters to a result: every server of the list serves the same model,
the request sent is the same whichever server gets it, and the response-cache key names the model,
not any URL (``hope.models.factory.llm_identity``), so ``[A, B, C]`` shares its cache with ``A``
alone, with ``[C, B, A]`` and with a server of the model anywhere else.

Every pool decision is taken here; what a failed request means is ``classify_error``'s call
(``hope.models.openai_client``, the project's one classification): *fatal* for a backend (refused
connection, DNS, 401, 403, 404) takes that server out, and the run stops (``BackendError``) only
when no server is left; *transient* (5xx, 408/409/425/429, timeouts) is retried here; *content*
(400, ...) is the request's own fault and goes back to the caller, the server stays in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from hope.models.model_errors import ErrorKind, classify_error

log = logging.getLogger(__name__)

T = TypeVar("T")
Failure = Literal["server_down", "transient", "content"]

_INITIAL_DELAY_S = 0.5
_MAX_DELAY_S = 8.0
_MAX_RETRY_AFTER_S = 60.0


class ServerPoolSettings(BaseModel):
    """``llm.pool``: how a list of servers treats a failing one (ignored for a single URL)."""

    model_config = ConfigDict(extra="forbid")

    cooldown_s: float = Field(
        default=30.0, gt=0, description="how long a failed server stays out before a probe"
    )
    max_cooldown_s: float = Field(
        default=300.0, gt=0, description="the cool-down doubles per failed probe up to this"
    )
    failures_to_eject: int = Field(
        default=3,
        ge=1,
        description="transient faults (5xx, 429, timeouts) in a row that take a server out; a "
        "refused connection takes it out at once",
    )


class NoServerError(RuntimeError):
    """The pool was built without a server."""


@dataclass
class ServerState:
    url: str
    cooldown_s: float
    down: bool = False
    down_until: float = 0.0
    probing: bool = False
    consecutive_failures: int = 0
    requests: int = 0
    failures: int = 0
    ejections: int = 0

    def stats(self) -> dict[str, Any]:
        fields = ("url", "requests", "failures", "ejections", "down")
        return {name: getattr(self, name) for name in fields}


@dataclass
class _LoopState:
    in_flight: dict[str, int]
    condition: asyncio.Condition = field(default_factory=asyncio.Condition)


class ServerPool:
    """Spreads requests over ``urls``, ``concurrency`` in flight per server at most.

    Health is shared by every event loop using the pool; the in-flight counts and the condition
    that waiting requests sleep on belong to one loop (as asyncio primitives must): each loop has
    ``concurrency`` per server of its own.
    """

    def __init__(
        self,
        urls: Sequence[str],
        *,
        concurrency: int,
        settings: ServerPoolSettings | None = None,
        classify: Callable[[BaseException], ErrorKind] = classify_error,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not urls:
            raise NoServerError("llm.base_url: an empty list of servers")
        if len(set(urls)) != len(urls):
            raise ValueError(f"llm.base_url lists a server twice: {list(urls)}")
        self.settings = settings or ServerPoolSettings()
        self.concurrency = concurrency
        self.servers = [ServerState(url, self.settings.cooldown_s) for url in urls]
        self._clock = clock
        self._classify = classify
        self._next = 0  # round-robin start among equally loaded servers
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )
        self._wakers: set[asyncio.Task] = set()

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = self._loops[loop] = _LoopState({s.url: 0 for s in self.servers})
        return state

    def stats(self) -> list[dict[str, Any]]:
        return [s.stats() for s in self.servers]

    @property
    def healthy(self) -> list[str]:
        return [s.url for s in self.servers if not s.down]

    def failure_of(self, exc: BaseException) -> Failure:
        """What ``exc`` (its ``classify_error`` kind) says about the server that gave it."""
        return {"fatal": "server_down", "transient": "transient"}.get(
            self._classify(exc), "content"
        )

    def take_out(self, url: str, reason: str) -> None:
        """Take ``url`` out now (e.g. it failed the preflight); it is probed after its cool-down."""
        server = next(s for s in self.servers if s.url == url)
        server.failures += 1
        log.warning("server %s failed: %s", url, reason)
        self._eject(server, "server_down")

    # -- choosing and releasing a server ------------------------------------------------------

    def _pick(self, state: _LoopState, avoid: ServerState | None) -> ServerState | None:
        now = self._clock()
        free = [
            s
            for s in self.servers
            if state.in_flight[s.url] < self.concurrency
            and (not s.down or (not s.probing and now >= s.down_until))
        ]
        if not free:
            return None
        if avoid is not None and len(free) > 1:
            free = [s for s in free if s is not avoid] or free
        count = len(self.servers)
        order = {s.url: (i - self._next) % count for i, s in enumerate(self.servers)}
        # A server whose cool-down is over goes first: one request finds out whether it is back.
        chosen = min(free, key=lambda s: (not s.down, state.in_flight[s.url], order[s.url]))
        self._next = (self.servers.index(chosen) + 1) % count
        if chosen.down:
            chosen.probing = True
            log.info("probing server %s after its cool-down", chosen.url)
        return chosen

    async def acquire(self, avoid: ServerState | None = None) -> ServerState:
        """A server with a free slot: a healthy one, or one whose cool-down has ended (probe)."""
        state = self._state()
        async with state.condition:
            while True:
                chosen = self._pick(state, avoid)
                if chosen is not None:
                    state.in_flight[chosen.url] += 1
                    chosen.requests += 1
                    return chosen
                now = self._clock()
                waits = [s.down_until - now for s in self.servers if s.down and not s.probing]
                timeout = max(min(waits), 0.001) if waits else None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(state.condition.wait(), timeout)

    async def release(self, server: ServerState, failure: Failure | None) -> None:
        """Free ``server``'s slot and record the outcome (None: it answered)."""
        state = self._state()
        async with state.condition:
            state.in_flight[server.url] -= 1
            self._record(server, failure)
            state.condition.notify_all()

    def _abandon(self, server: ServerState) -> None:
        state = self._state()
        state.in_flight[server.url] -= 1
        server.probing = False  # a cancelled probe: the next request probes again

        async def wake() -> None:
            async with state.condition:
                state.condition.notify_all()

        task = asyncio.get_running_loop().create_task(wake())
        self._wakers.add(task)
        task.add_done_callback(self._wakers.discard)

    def _record(self, server: ServerState, failure: Failure | None) -> None:
        if failure is None or failure == "content":
            # The server answered (a 400 is the request's fault, not the server's).
            server.consecutive_failures = 0
            if server.down:
                log.warning("server %s is back", server.url)
            server.down = server.probing = False
            server.cooldown_s = self.settings.cooldown_s
            return
        server.failures += 1
        server.consecutive_failures += 1
        if (
            failure == "server_down"
            or server.probing
            or server.consecutive_failures >= self.settings.failures_to_eject
        ):
            self._eject(server, failure)

    def _eject(self, server: ServerState, failure: Failure) -> None:
        if server.down and not server.probing:
            return  # already out (several requests in flight saw the same fault)
        server.down = True
        server.probing = False
        server.down_until = self._clock() + server.cooldown_s
        server.ejections += 1
        log.warning(
            "server %s taken out for %.0f s (%s); %d of %d healthy",
            server.url,
            server.cooldown_s,
            failure,
            len(self.healthy),
            len(self.servers),
        )
        server.cooldown_s = min(server.cooldown_s * 2, self.settings.max_cooldown_s)

    # -- one request ---------------------------------------------------------------------------

    async def call(
        self,
        send: Callable[[str], Awaitable[T]],
        *,
        max_retries: int,
        on_retry: Callable[[int], None] | None = None,
    ) -> T:
        """``await send(url)`` on a chosen server, retried and moved as the module doc says.

        ``on_retry(n)`` is called before the n-th retry is sent (n >= 1). The last error is raised
        when the retries are spent, when it is ``content``-bound, or when no server is left.
        """
        retries = 0
        free_moves = len(self.servers) - 1  # servers found down, moved off without a retry
        last: ServerState | None = None
        while True:
            server = await self.acquire(avoid=last)
            try:
                result = await send(server.url)
            except Exception as exc:
                failure = self.failure_of(exc)
                await self.release(server, failure)
                if failure == "content":
                    raise
                last = server
                if failure == "server_down":
                    if not self.healthy:
                        raise  # every server is out: the backend is gone (the run stops)
                    if free_moves > 0:
                        free_moves -= 1
                        continue
                if retries >= max_retries:
                    raise
                retries += 1
                await asyncio.sleep(_retry_delay(exc, retries))
                if on_retry is not None:
                    on_retry(retries)
                continue
            except BaseException:
                self._abandon(server)  # cancelled: says nothing about the server
                raise
            await self.release(server, None)
            return result


def _retry_delay(exc: BaseException, retries: int) -> float:
    """Retry-After of the response if it has one (at most a minute), else 0.5 s doubling up to
    8 s with up to 25 % jitter, as the openai client waits."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if 0 <= seconds <= _MAX_RETRY_AFTER_S:
            return seconds
    delay = min(_INITIAL_DELAY_S * 2 ** (retries - 1), _MAX_DELAY_S)
    return delay * (1 - 0.25 * random.random())
