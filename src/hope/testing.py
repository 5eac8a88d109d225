"""Test doubles for the LLM side: a schema-driven responder, an in-process fake client, and a
simulated OpenAI-compatible HTTP server with configurable latency and fault injection.

Answers are a pure function of the request (messages, schema, seed, temperature), like a real
seeded model: retrying a faulted request returns what the fault-free request would have.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import httpx2

from hope.models.openai_client import LazyOpenAIClient
from hope.models.preflight import PREFLIGHT_HEADER
from hope.models.schema_instances import schema_instance

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


# What a different x86 CPU changes in this project's numerics, forced through each library's own
# switch: torch's kernels at the ``default`` capability (no AVX), MKL limited to SSE4.2, OpenBLAS's
# Nehalem kernels, numpy's SIMD dispatch off above its x86-64-v2 baseline, and one thread, where a
# plain run uses every instruction set and core the machine has. Used by the two-clone test and
# bench/bench_repro.py and bench/bench_cpu_independence.py (issue #35).
OTHER_CPU_ENV = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
    "OPENBLAS_CORETYPE": "Nehalem",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


def request_rng(request: dict[str, Any]) -> random.Random:
    material = json.dumps(
        {
            "messages": request.get("messages"),
            "schema": request.get("response_format"),
            "seed": request.get("seed"),
            "temperature": request.get("temperature"),
        },
        sort_keys=True,
    )
    return random.Random(int(hashlib.sha256(material.encode()).hexdigest()[:16], 16))


def source_words(message: str) -> list[str]:
    """The words, in order, of the long blocks of a prompt: its passages and context.

    Blocks are the paragraphs between blank lines; the instructions around them are short, so
    the blocks at least half as long as the longest one are the text the prompt is about.
    """
    blocks = [b for b in re.split(r"\n\s*\n", message) if b.strip()]
    if not blocks:
        return []
    longest = max(len(b) for b in blocks)
    text = " ".join(b for b in blocks if len(b) * 2 >= longest)
    return [w.strip('"') for w in text.split() if _WORD.search(w) and w.strip('"')]


def word_responder(request: dict[str, Any]) -> str:
    """Schema-valid answers of random words of the user message (the responder before answers
    quoted their prompt): unrelated texts, for unit tests written against them."""
    return schema_responder(request, quote=False)


def schema_responder(request: dict[str, Any], *, quote: bool = True) -> str:
    """Default behaviour: a schema-valid answer quoting runs of the prompt's passage or context
    (plain "OK" to a request without a JSON schema, such as the preflight's).

    Answers and statements are then text-derived and overlap where their prompts share text, so
    a simulated run gives spread in the scores (semantic independence, the RAG indicators)
    rather than unrelated random words. ``quote=False``: random words of the prompt instead.
    """
    fmt = request.get("response_format")
    if not isinstance(fmt, dict) or "json_schema" not in fmt:
        return "OK"
    schema = fmt["json_schema"]["schema"]
    user = "\n\n".join(m["content"] for m in request["messages"] if m["role"] == "user")
    vocabulary = sorted(set(_WORD.findall(user)))
    source = source_words(user) if quote else None
    return json.dumps(schema_instance(schema, request_rng(request), vocabulary, source=source))


@dataclass
class FaultPlan:
    """Fails a share of requests with a transient status, decided by a seeded generator."""

    rate: float = 0.0
    seed: int = 0
    statuses: tuple[int, ...] = (500, 502, 503, 429)
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()

    def draw(self) -> int | None:
        with self._lock:
            if self._rng.random() < self.rate:
                return self._rng.choice(self.statuses)
        return None


def completion_body(
    content: str, request: dict[str, Any], number: int = 0, fingerprint: str | None = None
) -> dict[str, Any]:
    """The JSON of a chat completion answering ``request`` with ``content`` (with a
    ``system_fingerprint`` when given, as OpenAI's API and llama.cpp's server send one)."""
    prompt_tokens = sum(len(m["content"].split()) for m in request["messages"])
    body: dict[str, Any] = {
        "id": f"fake-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(content.split()),
            "total_tokens": prompt_tokens + len(content.split()),
        },
    }
    if fingerprint is not None:
        body["system_fingerprint"] = fingerprint
    return body


class FakeTransport(httpx2.AsyncBaseTransport):
    """The network under a real ``openai.AsyncOpenAI`` (``ChatLLM(..., transport=...)``).

    Each request body goes to ``responder(request) -> str``. An ``openai`` error the responder
    raises becomes what a server would have done: its HTTP status (with ``Retry-After`` of 1 ms
    unless the error's response sets one, so tests do not wait), a read timeout or a refused
    connection; the client's own retries then run as in production.
    """

    def __init__(self, responder: Callable[[dict[str, Any]], str] = schema_responder):
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.preflights: list[dict[str, Any]] = []  # answered "OK", not passed to the responder

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        import openai

        body = json.loads(await request.aread())
        if request.headers.get(PREFLIGHT_HEADER):
            self.preflights.append(body)
            return httpx2.Response(200, json=completion_body("OK", body))
        self.requests.append(body)
        await asyncio.sleep(0)
        try:
            content = self.responder(body)
        except openai.APIStatusError as exc:
            retry = {k: v for k, v in exc.response.headers.items() if k.startswith("retry-after")}
            headers = retry or {"retry-after-ms": "1"}
            # A plain-text body: the client's error message then ends with the injected one.
            return httpx2.Response(exc.status_code, headers=headers, text=exc.message)
        except openai.APITimeoutError as exc:
            raise httpx2.ReadTimeout("simulated timeout", request=request) from exc
        except openai.APIConnectionError as exc:
            raise httpx2.ConnectError("simulated refused connection", request=request) from exc
        return httpx2.Response(200, json=completion_body(content, body, len(self.requests)))


class FakeChatClient(LazyOpenAIClient):
    """A chat client (``chat.completions.create``) whose network is ``FakeTransport(responder)``."""

    def __init__(
        self, responder: Callable[[dict[str, Any]], str] = schema_responder, max_retries: int = 0
    ):
        from hope.models.llm_settings import LLMSettings

        self.transport = FakeTransport(responder)
        settings = LLMSettings(model="fake", max_retries=max_retries)
        super().__init__(settings, "http://fake.invalid/v1", transport=self.transport)

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.transport.requests


def api_status_error(
    status: int, message: str = "simulated", headers: dict[str, str] | None = None
) -> Exception:
    """An ``openai.APIStatusError`` subclass instance for ``status``, as the client raises it."""
    import httpx
    import openai

    request = httpx.Request("POST", "http://fake/v1/chat/completions")
    response = httpx.Response(
        status, request=request, headers=headers, json={"error": {"message": message}}
    )
    return openai.APIStatusError(message, response=response, body=None)


# What a backend answers for a status (OpenAI's wording where it has one); ``status_error_body``.
STATUS_MESSAGES = {
    400: "This model's maximum context length is 8192 tokens. However, your messages resulted "
    "in 9001 tokens. Please reduce the length of the messages.",
    401: "Incorrect API key provided: {key}. You can find your API key in your account settings.",
    403: "You are not allowed to sample from this model",
    404: "The model `{model}` does not exist or you do not have access to it.",
    500: "The server had an error while processing your request.",
}


def status_error_body(status: int, *, model: str = "", key: str = "") -> dict[str, Any]:
    """The JSON error body an OpenAI-compatible server sends with ``status``."""
    message = STATUS_MESSAGES.get(status, f"simulated status {status}")
    masked = key[:3] + "*" * max(len(key) - 7, 0) + key[-4:] if key else "(none)"
    code = "context_length_exceeded" if status == 400 else str(status)
    return {"error": {"message": message.format(model=model, key=masked), "code": code}}


def invalid_share(request: dict[str, Any], rate: float) -> bool:
    """Whether a request gets a non-JSON answer: a pure function of the request (the same request
    always gets the same verdict, as a seeded model would) with about ``rate`` of them chosen."""
    return rate > 0 and request_rng(request).random() < rate


class SimulatedServer:
    """An OpenAI-compatible chat (and embeddings) server on 127.0.0.1 with fixed latency and
    injected faults. Runs its own event loop in a daemon thread; use as a context manager.
    Only loopback.

    Misbehaviour, all changeable while it runs (a test "fixes" the backend by resetting them):
    ``status`` answers every request after the first ``fail_after`` with that HTTP status and the
    body a real server sends (400 is a context-length refusal); ``api_key`` answers 401 to any
    other bearer token; ``models`` answers 404 to a model not among them; ``invalid_rate``
    answers a share of schema requests with text that is not JSON; ``fingerprint`` is sent as
    every answer's ``system_fingerprint``.
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.2,
        fault_rate: float = 0.0,
        fault_seed: int = 0,
        responder: Callable[[dict[str, Any]], str] = schema_responder,
        status: int | None = None,
        fail_after: int = 0,
        api_key: str | None = None,
        models: Collection[str] | None = None,
        invalid_rate: float = 0.0,
        port: int = 0,
        fingerprint: str | None = None,
    ):
        self.port = port  # 0: any free port; a fixed one brings a stopped server back
        self.latency_s = latency_s
        self.faults = FaultPlan(rate=fault_rate, seed=fault_seed)
        self.responder = responder
        self.status = status
        self.fail_after = fail_after
        self.api_key = api_key
        self.models = set(models) if models is not None else None
        self.invalid_rate = invalid_rate
        self.fingerprint = fingerprint
        self.requests = 0  # chat requests, preflights not included
        self.preflights = 0
        self.faulted = 0
        self.completed = 0  # answers (of any status) written back to the client
        self.last_completed_at = 0.0  # time.monotonic() of the latest of them
        self.embedding_requests = 0
        self.max_in_flight = 0
        self._in_flight = 0
        self.base_url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._runner = None

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _refusal(self, request, body: dict[str, Any], number: int):
        """The error response this request (the ``number``-th; 0: a preflight) gets, or None."""
        from aiohttp import web

        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        model = str(body.get("model", ""))
        status = None
        if self.api_key is not None and given != self.api_key:
            status = 401
        elif self.models is not None and model not in self.models:
            status = 404
        elif self.status is not None and (number or self.requests + 1) > self.fail_after:
            status = self.status
        if status is None:
            return None
        self.faulted += 1
        return web.json_response(status_error_body(status, model=model, key=given), status=status)

    async def _chat(self, request):
        from aiohttp import web

        body = await request.json()
        if request.headers.get(PREFLIGHT_HEADER):
            self.preflights += 1
            refusal = self._refusal(request, body, 0)
            return refusal or web.json_response(completion_body("OK", body))
        self.requests += 1
        number = self.requests
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            await asyncio.sleep(self.latency_s)
            refusal = self._refusal(request, body, number)
            if refusal is not None:
                return refusal
            status = self.faults.draw()
            if status is not None:
                self.faulted += 1
                return web.json_response(
                    {"error": {"message": "injected fault", "code": status}}, status=status
                )
            if "response_format" in body and invalid_share(body, self.invalid_rate):
                content = "Sorry, I cannot answer in JSON."
            else:
                content = self.responder(body)
            return web.json_response(completion_body(content, body, number, self.fingerprint))
        finally:
            self._in_flight -= 1
            self.completed += 1
            self.last_completed_at = time.monotonic()

    async def _embeddings(self, request):
        """``/v1/embeddings``: a deterministic 8-dimensional vector per input text."""
        from aiohttp import web

        body = await request.json()
        if request.headers.get(PREFLIGHT_HEADER):
            self.preflights += 1
        self.embedding_requests += 1
        refusal = self._refusal(request, body, 0)
        if refusal is not None:
            return refusal
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        digests = [hashlib.sha256(str(text).encode("utf-8")).digest() for text in inputs]
        data = [
            {"object": "embedding", "index": index, "embedding": [b - 127.5 for b in digest[:8]]}
            for index, digest in enumerate(digests)
        ]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
            }
        )

    async def _health(self, _request):
        from aiohttp import web

        return web.json_response({"status": "ok"})

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/health", self._health)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        port = self.port = site._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._ready.set()

    def start(self) -> SimulatedServer:
        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._serve())
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="sim-llm-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("simulated server did not start")
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        future.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = None

    def __enter__(self) -> SimulatedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Stop(Exception):
    """Raised in the main thread by ``serve``'s handler of SIGINT and SIGTERM."""


def _stdin_is_a_pipe() -> bool:
    """Whether stdin is a pipe or socket, that is a parent process's handle. A terminal, a file,
    or the /dev/null that a shell gives a background job is not one: there the end of input says
    nothing (/dev/null ends at once) and only a signal stops the server."""
    import os
    import stat

    try:
        mode = os.fstat(0).st_mode
    except OSError:  # no stdin at all
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _until_eof(closed: threading.Event) -> None:
    import os

    # os.read on the descriptor, not sys.stdin: this daemon thread would otherwise hold
    # stdin's buffer lock while blocked, and the interpreter cannot close stdin at exit.
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    closed.set()


def serve(argv: list[str] | None = None) -> int:
    """Run a SimulatedServer in its own process (so it does not share the client's GIL).

    Prints ``{"base_url": ...}`` on the first stdout line, serves until SIGINT or SIGTERM (or,
    when stdin is a pipe, until it closes), then prints ``{"requests": ..., "preflights": ...,
    "faulted": ..., "max_in_flight": ...}``, says on stderr what stopped it, and exits 0. A
    second signal while it stops ends it at once.
    """
    import argparse
    import signal
    import sys

    parser = argparse.ArgumentParser(prog="python -m hope.testing")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--fault-seed", type=int, default=0)
    parser.add_argument("--status", type=int, default=None, help="answer every request with it")
    parser.add_argument("--invalid-rate", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)

    def on_signal(signum: int, _frame: Any) -> None:
        raise _Stop(signal.Signals(signum).name)

    # Set explicitly: a shell starts a background job with SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler; SIGTERM's default would end it without statistics.
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    closed = threading.Event()
    try:
        with SimulatedServer(
            latency_s=args.latency,
            fault_rate=args.fault_rate,
            fault_seed=args.fault_seed,
            status=args.status,
            invalid_rate=args.invalid_rate,
            port=args.port,
        ) as server:
            try:
                # The watcher starts before the URL is printed: a client that signals as soon as
                # it has the URL then never meets a server still starting its threads (a signal
                # during Thread.start() used to end it "before serving", without statistics).
                if _stdin_is_a_pipe():
                    threading.Thread(target=_until_eof, args=(closed,), daemon=True).start()
                print(json.dumps({"base_url": server.base_url}), flush=True)
                closed.wait()
                reason = "stdin closed"
            except _Stop as stop:
                reason = str(stop)
            # From here a signal ends the process at once (no second round of statistics).
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            counts = ("requests", "preflights", "faulted", "max_in_flight")
            stats = {name: getattr(server, name) for name in counts}
    except _Stop as stop:  # a signal before the server was up, or while it starts
        print(f"hope.testing: stopped by {stop} before serving", file=sys.stderr)
        return 0
    print(json.dumps(stats), flush=True)
    print(f"hope.testing: stopped ({reason})", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(serve())
