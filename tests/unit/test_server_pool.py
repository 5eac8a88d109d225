"""Several servers as one (``llm.base_url: [...]``): spreading, per-server bounds, taking a failed
server out and back, and answers and cache keys that do not depend on the server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import httpx
import httpx2
import openai
import pytest

from hope.core.prompts.response_schemas import AnswerResponse
from hope.core.response_cache import ResponseCache
from hope.models.factory import build_llm, llm_endpoint
from hope.models.llm import ChatLLM, response_format
from hope.models.llm_settings import LLMSettings
from hope.models.model_errors import BackendError
from hope.models.server_pool import ServerPool, ServerPoolSettings
from hope.testing import FakeTransport, SimulatedServer, api_status_error, schema_responder

MESSAGES = [{"role": "user", "content": "Which servers answered the question?"}]


@pytest.fixture(autouse=True)
def no_retry_pause(monkeypatch):
    """The pool's pauses between retries, recorded instead of slept."""
    delays = []

    def record(exc, retries):
        delays.append(retries)
        return 0.0

    monkeypatch.setattr("hope.models.server_pool._retry_delay", record)
    return delays


async def ask(llm, seed):
    return await llm.structured(
        messages=MESSAGES,
        response_model=AnswerResponse,
        schema_name="answer",
        prompt_id="answer@v1#pool",
        temperature=0.0,
        seed=seed,
    )


def answers(llm, seeds, during=None):
    """Raw answers to ``seeds`` (in order); ``during(llm)`` runs beside the requests."""

    async def run():
        try:
            tasks = [asyncio.ensure_future(ask(llm, seed)) for seed in seeds]
            if during is not None:
                await during(llm)
            return [r.raw for r in await asyncio.gather(*tasks)]
        finally:
            await llm.aclose()

    return asyncio.run(run())


def pooled(urls, cache=None, **settings):
    return build_llm(backend="openai", model="sim", base_url=list(urls), cache=cache, **settings)


# -- decisions, with a fake clock ---------------------------------------------------------------


def test_what_a_failure_says_about_its_server_follows_classify_error():
    pool = ServerPool(["http://a/v1", "http://b/v1"], concurrency=1)
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    assert pool.failure_of(openai.APIConnectionError(request=request)) == "server_down"
    assert pool.failure_of(openai.APITimeoutError(request=request)) == "transient"
    for status in (500, 502, 503, 429, 408):
        assert pool.failure_of(api_status_error(status)) == "transient"
    for status in (401, 403, 404):  # this server cannot serve the model: the others may
        assert pool.failure_of(api_status_error(status)) == "server_down"
    for status in (400, 413, 422):  # the request's own fault: the server stays in
        assert pool.failure_of(api_status_error(status)) == "content"
    assert pool.failure_of(ValueError("not a network error")) == "content"


def test_a_refused_server_is_out_until_its_cool_down_then_probed_with_doubling_cool_down():
    now = [0.0]
    pool = ServerPool(
        ["http://a/v1", "http://b/v1"],
        concurrency=1,
        settings=ServerPoolSettings(cooldown_s=10, max_cooldown_s=25),
        clock=lambda: now[0],
    )
    refused = openai.APIConnectionError(request=httpx.Request("POST", "http://a/v1"))
    a_up = [False]
    sent = []

    async def send(url):
        sent.append(url)
        if url == "http://a/v1" and not a_up[0]:
            raise refused
        return url

    async def one():
        return await pool.call(send, max_retries=0)

    # a refuses: the request moves to b without costing a retry (max_retries=0)
    assert asyncio.run(one()) == "http://b/v1"
    assert sent == ["http://a/v1", "http://b/v1"] and pool.healthy == ["http://b/v1"]
    sent.clear()
    now[0] = 9.9
    assert [asyncio.run(one()) for _ in range(3)] == ["http://b/v1"] * 3
    assert sent == ["http://b/v1"] * 3  # a is not tried during its cool-down
    sent.clear()
    now[0] = 10.0  # cool-down over: one probe, refused again -> out for 20 s
    assert asyncio.run(one()) == "http://b/v1"
    assert sent == ["http://a/v1", "http://b/v1"]
    now[0] = 29.0
    sent.clear()
    asyncio.run(one())
    assert sent == ["http://b/v1"]
    now[0] = 30.0  # 10 + 20: probed again; back now
    a_up[0] = True
    assert asyncio.run(one()) == "http://a/v1"
    assert pool.healthy == ["http://a/v1", "http://b/v1"]
    assert [s["ejections"] for s in pool.stats()] == [2, 0]
    assert pool.servers[0].cooldown_s == 10  # reset once it answered


def test_transient_faults_in_a_row_take_a_server_out_and_a_4xx_is_not_its_fault():
    pool = ServerPool(
        ["http://a/v1", "http://b/v1"],
        concurrency=4,
        settings=ServerPoolSettings(failures_to_eject=2),
    )

    async def flaky_a(url):
        if url == "http://a/v1":
            raise api_status_error(503)
        return url

    async def run(send, retries):
        return await pool.call(send, max_retries=retries)

    assert asyncio.run(run(flaky_a, 1)) == "http://b/v1"  # a failed once, retried on b
    assert pool.healthy == ["http://a/v1", "http://b/v1"]
    asyncio.run(run(flaky_a, 1))  # starts on a again (round robin): second 503 in a row
    assert pool.healthy == ["http://b/v1"]

    async def bad_request(url):
        raise api_status_error(400)

    with pytest.raises(openai.APIStatusError):
        asyncio.run(run(bad_request, 5))
    assert pool.healthy == ["http://b/v1"] and pool.servers[1].consecutive_failures == 0


def test_bad_server_lists_are_named_errors():
    with pytest.raises(ValueError, match=r"llm\.base_url"):
        LLMSettings(model="m", base_url=[])
    with pytest.raises(ValueError, match="twice"):
        LLMSettings(model="m", base_url=["http://a/v1", "http://a/v1"])


def test_a_list_from_hydra_has_the_cache_identity_of_one_server():
    from hydra.utils import instantiate

    from hope.core.packaged_configs import compose_config

    cfg = compose_config(
        ["llm=vllm", "llm.base_url=[http://gpu1:8000/v1,http://gpu2:8000/v1]", "cache.path=off"]
    )
    llm = instantiate(cfg.llm, cache=None)
    single = llm_endpoint(backend="openai", model=cfg.llm.model, base_url="http://gpu1:8000/v1")
    assert llm.identity == single.identity
    assert llm.settings.servers == ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
    assert llm.settings.total_concurrency == 2 * cfg.llm.concurrency
    assert llm._client.pool is not None


class Hosts(httpx2.AsyncBaseTransport):
    """One fake server per host name."""

    def __init__(self, **responders):
        self.by_host = {host: FakeTransport(r) for host, r in responders.items()}

    async def handle_async_request(self, request):
        return await self.by_host[request.url.host].handle_async_request(request)


def test_when_every_server_is_down_the_run_stops_with_a_backend_error_naming_them():
    def refused(request):
        raise openai.APIConnectionError(request=httpx.Request("POST", "http://x"))

    cache = ResponseCache(None)
    hosts = Hosts(a=refused, b=refused)  # the preflight passes (FakeTransport answers it)
    settings = LLMSettings(model="m", base_url=["http://a/v1", "http://b/v1"], max_retries=2)
    llm = ChatLLM(settings, identity="m", transport=hosts, cache=cache)
    with pytest.raises(BackendError, match=r"\[http://a/v1, http://b/v1\] \(model 'm'\)"):
        answers(llm, [1])
    sent = sum(len(t.requests) for t in hosts.by_host.values())
    assert sent == 2  # a, then b without a retry; then no server is left: stop
    assert llm.usage.retries == 0 and cache.count() == 0


def test_the_preflight_takes_a_dead_server_out_and_stops_only_when_all_are_dead():
    with SimulatedServer(latency_s=0.0) as live:
        dead = SimulatedServer(latency_s=0.0).start()
        dead_url = dead.base_url
        dead.stop()
        llm = pooled([dead_url, live.base_url], concurrency=2)
        assert len(answers(llm, range(6))) == 6
        pool = llm._client.pool
        assert pool.healthy == [live.base_url] and live.requests == 6
        assert pool.stats()[0]["ejections"] == 1 and pool.stats()[0]["requests"] == 0
    with pytest.raises(BackendError, match="unusable"):
        answers(pooled([dead_url, live.base_url]), [1])


# -- real servers --------------------------------------------------------------------------------


def test_requests_spread_over_servers_within_per_server_concurrency_with_one_servers_answers():
    seeds = list(range(36))
    with (
        SimulatedServer(latency_s=0.03) as a,
        SimulatedServer(latency_s=0.03) as b,
        SimulatedServer(latency_s=0.03) as c,
    ):
        cache = ResponseCache(None)
        got = answers(pooled([a.base_url, b.base_url, c.base_url], cache, concurrency=2), seeds)
        counts = [a.requests, b.requests, c.requests]
        assert sum(counts) == len(seeds) and min(counts) >= 8, counts
        assert max(a.max_in_flight, b.max_in_flight, c.max_in_flight) == 2
        # The same run against a alone: same answers, and every one from the pool's cache.
        alone = pooled([a.base_url], cache, concurrency=2)
        before = a.requests
        assert answers(alone, seeds) == got
        assert a.requests == before and alone.usage.cache_hits == len(seeds)
    with SimulatedServer(latency_s=0.0) as fresh:
        assert answers(pooled([fresh.base_url]), seeds) == got


def start_server_process(latency_s, port=0):
    proc = subprocess.Popen(
        [sys.executable, "-m", "hope.testing", "--latency", str(latency_s), "--port", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return proc, json.loads(proc.stdout.readline())["base_url"]


def test_a_server_killed_mid_run_is_taken_out_and_the_answers_do_not_change():
    seeds = list(range(60))
    with SimulatedServer(latency_s=0.0) as reference:
        expected = answers(pooled([reference.base_url]), seeds)
    proc, doomed = start_server_process(0.05)
    try:
        with SimulatedServer(latency_s=0.05) as a, SimulatedServer(latency_s=0.05) as b:
            llm = pooled([doomed, a.base_url, b.base_url], concurrency=3)

            async def kill_when_busy(llm):
                while llm.usage.requests < 15:
                    await asyncio.sleep(0.005)
                proc.kill()  # SIGKILL: requests in flight there break, new ones are refused

            got = answers(llm, seeds, during=kill_when_busy)
            pool = llm._client.pool
            assert got == expected
            assert llm.usage.failures == 0
            assert pool.healthy == [a.base_url, b.base_url]
            assert pool.stats()[0]["ejections"] == 1 and pool.stats()[0]["failures"] >= 1
            assert a.requests + b.requests >= len(seeds) - pool.stats()[0]["requests"]
    finally:
        proc.kill()
        proc.wait(10)


def test_a_server_that_comes_back_is_used_again_after_its_cool_down():
    with SimulatedServer(latency_s=0.01) as steady:
        first = SimulatedServer(latency_s=0.01).start()
        port, url = first.port, first.base_url
        first.stop()  # down before the run starts: refused
        llm = pooled(
            [url, steady.base_url], concurrency=2, pool={"cooldown_s": 0.3, "max_cooldown_s": 0.3}
        )
        pool = llm._client.pool

        async def run(seeds):
            return [r.raw for r in await asyncio.gather(*(ask(llm, s) for s in seeds))]

        async def scenario():
            try:
                await run(range(10))
                assert pool.healthy == [steady.base_url]
                with SimulatedServer(latency_s=0.01, port=port) as back:
                    await asyncio.sleep(0.35)
                    started = time.monotonic()
                    await run(range(10, 30))
                    assert time.monotonic() - started < 5
                    return back.requests
            finally:
                await llm.aclose()

        served_after_return = asyncio.run(scenario())
        assert served_after_return >= 5
        assert pool.healthy == [url, steady.base_url]


def test_a_server_answering_5xx_is_taken_out_and_every_retry_is_counted(no_retry_pause):
    seeds = list(range(20))
    with (
        SimulatedServer(latency_s=0.0) as good,
        SimulatedServer(latency_s=0.0, fault_rate=1.0) as broken,
    ):
        expected = answers(pooled([good.base_url]), seeds)
        llm = pooled([broken.base_url, good.base_url], concurrency=2, pool={"failures_to_eject": 2})
        got = answers(llm, seeds)
        assert got == expected
        assert llm._client.pool.healthy == [good.base_url]
        assert broken.faulted == broken.requests and 2 <= broken.requests <= 4
        assert llm.usage.retries == broken.faulted == len(no_retry_pause)
        assert llm.usage.requests == len(seeds) + broken.faulted


def test_schema_responder_is_what_the_servers_answer():
    # The answers compared above come from the servers' responder, not from the cache alone.
    request = {
        "messages": MESSAGES,
        "response_format": response_format("answer", AnswerResponse, True),
        "seed": 3,
        "temperature": 0.0,
    }
    with SimulatedServer(latency_s=0.0) as server:
        assert answers(pooled([server.base_url]), [3]) == [schema_responder(request)]


def test_the_rag_clients_spread_over_the_servers_too():
    from hope.rag.clients import CachingChatClient
    from hope.rag.rag_models import chat_llm_factory

    with SimulatedServer(latency_s=0.02) as a, SimulatedServer(latency_s=0.02) as b:
        endpoint = llm_endpoint(
            backend="openai", model="sim", base_url=[a.base_url, b.base_url], concurrency=2
        )
        shared = endpoint.client()
        assert shared.pool is not None
        caching = CachingChatClient(shared, identity=endpoint.identity, cache=None, concurrency=4)
        request = {
            "model": "sim",
            "messages": MESSAGES,
            "response_format": response_format("answer", AnswerResponse, True),
            "temperature": 0.0,
        }

        async def run():
            try:
                ragas = await asyncio.gather(
                    *(caching.chat.completions.create(**request, seed=s) for s in range(8))
                )
                make = chat_llm_factory(endpoint, None, shared)
                hope_side = await asyncio.gather(*(ask(make(), s) for s in range(8, 16)))
                return ragas, hope_side
            finally:
                await shared.aclose()

        ragas, hope_side = asyncio.run(run())
        assert len(ragas) == len(hope_side) == 8
        assert a.requests >= 4 and b.requests >= 4 and a.requests + b.requests == 16
        assert max(a.max_in_flight, b.max_in_flight) <= 2
