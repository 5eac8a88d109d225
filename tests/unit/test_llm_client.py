"""Retries (the openai client's for faults, ours for invalid answers), caching and accounting of
the structured-output client."""

import asyncio
import json

import httpx
import openai
import pytest

from hope.core.prompts.response_schemas import AnswerResponse
from hope.core.response_cache import ResponseCache
from hope.models.llm import ChatLLM, LLMCallError
from hope.models.llm_settings import LLMSettings
from hope.models.model_errors import BackendError
from hope.testing import FakeTransport, api_status_error

MESSAGES = [{"role": "user", "content": "What?"}]


def ask(llm, seed=1, **kwargs):
    return asyncio.run(
        llm.structured(
            messages=MESSAGES,
            response_model=AnswerResponse,
            schema_name="answer",
            prompt_id="answer@v1#x",
            temperature=0.0,
            seed=seed,
            **kwargs,
        )
    )


class Script:
    """Plays a list of outcomes: an exception is raised, a dict is answered as JSON."""

    def __init__(self, *outcomes):
        self.outcomes = list(outcomes)
        self.seeds = []

    def __call__(self, request):
        self.seeds.append(request.get("seed"))
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome if isinstance(outcome, str) else json.dumps(outcome)


@pytest.fixture(autouse=True)
def retry_delays(monkeypatch):
    """The pauses the openai client chose between attempts, recorded instead of slept."""
    delays = []
    choose = openai._base_client.BaseClient._calculate_retry_timeout

    def record(client, *args, **kwargs):
        delays.append(choose(client, *args, **kwargs))
        return 0.0

    monkeypatch.setattr(openai._base_client.BaseClient, "_calculate_retry_timeout", record)
    return delays


def make(script, cache=None, **settings):
    transport = FakeTransport(script)
    llm = ChatLLM(
        LLMSettings(model="m", base_url="http://fake/v1", **settings),
        identity="fake",
        transport=transport,
        cache=cache,
    )
    return llm, transport


def timeout_error():
    return openai.APITimeoutError(request=httpx.Request("POST", "http://x"))


def connection_error():
    return openai.APIConnectionError(request=httpx.Request("POST", "http://x"))


def test_transient_faults_are_retried_by_the_client_with_the_same_seed(retry_delays):
    script = Script(
        api_status_error(429, headers={"retry-after": "2"}),
        api_status_error(503),
        timeout_error(),
        connection_error(),
        {"answer": "ok"},
    )
    llm, _ = make(script, max_retries=4)
    response = ask(llm, seed=42)
    assert response.value.answer == "ok"
    assert script.seeds == [42] * 5
    # Retry-After honoured (2 s; the fake server's 1 ms), then the client's exponential backoff:
    # 2 and 4 seconds for the third and fourth retry, each with jitter in [75 %, 100 %].
    assert retry_delays[:2] == [2.0, 0.001]
    for delay, base in zip(retry_delays[2:], [2, 4], strict=True):
        assert 0.75 * base <= delay <= base
    assert llm.usage.retries == 4 and llm.usage.requests == 5 and llm.usage.failures == 0


def test_retries_are_bounded(retry_delays):
    llm, _ = make(Script(api_status_error(500)), max_retries=2)
    with pytest.raises(LLMCallError, match=r"HTTP 500.*after 3 attempts"):
        ask(llm)
    assert llm.usage.requests == 3 and llm.usage.failures == 1 and len(retry_delays) == 2


def test_client_errors_are_not_retried(retry_delays):
    llm, _ = make(Script(api_status_error(400, "context length exceeded")))
    with pytest.raises(LLMCallError, match="context length exceeded"):
        ask(llm)
    assert llm.usage.requests == 1 and retry_delays == []


def test_invalid_json_is_retried_at_once_with_a_derived_seed(retry_delays):
    script = Script("not json", {"wrong": 1}, {"answer": "fine"})
    llm, _ = make(script)
    response = ask(llm, seed=5)
    assert response.value.answer == "fine"
    assert script.seeds[0] == 5 and len(set(script.seeds)) == 3
    assert retry_delays == []
    assert llm.usage.invalid_responses == 2


def test_invalid_answers_can_switch_temperature_like_the_reference_code():
    temps = []

    def respond(request):
        temps.append(request["temperature"])
        return "{" if len(temps) < 3 else json.dumps({"answer": "x"})

    llm, _ = make(respond)
    ask(llm, invalid_retry_temperatures=[0.1, 0.2])
    assert temps == [0.0, 0.1, 0.2]


def test_semantic_validation_rejects_and_retries():
    script = Script({"answer": "bad"}, {"answer": "good"})
    llm, _ = make(script)

    def validate(value):
        if value.answer == "bad":
            raise ValueError("bad answer")

    assert ask(llm, validate=validate).value.answer == "good"


def test_cache_serves_a_warm_rerun_without_requests(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm, _ = make(Script({"answer": "cached"}), cache=cache)
    ask(llm)
    warm, _ = make(Script(api_status_error(500)), cache=ResponseCache(tmp_path / "c.sqlite"))
    response = ask(warm)
    assert response.cached and response.value.answer == "cached"
    assert warm.usage.requests == 0 and warm.usage.cache_hits == 1


def test_cache_key_covers_seed_temperature_prompt_and_model(tmp_path):
    cache = ResponseCache(None)
    llm, _ = make(Script({"answer": "a"}), cache=cache)
    base = dict(
        messages=MESSAGES,
        response_model=AnswerResponse,
        temperature=0.0,
        seed=1,
        max_tokens=None,
        prompt_id="p@v1",
    )
    key = llm.cache_key(**base)
    for change in ({"seed": 2}, {"temperature": 0.5}, {"prompt_id": "p@v2"}, {"max_tokens": 9}):
        assert llm.cache_key(**{**base, **change}) != key
    other, _ = make(Script({"answer": "a"}), cache=cache)
    other.identity = "another-model"
    assert other.cache_key(**base) != key
    sampled, _ = make(Script({"answer": "a"}), cache=cache, extra_body={"dry_multiplier": 0.8})
    assert sampled.cache_key(**base) != key  # backend sampling fields change the answer
    resampled, _ = make(Script({"answer": "a"}), cache=cache, extra_body={"dry_multiplier": 0.5})
    assert resampled.cache_key(**base) != sampled.cache_key(**base)


def test_deterministic_failures_are_cached_transient_ones_are_not(tmp_path):
    cache = ResponseCache(None)
    llm, _ = make(Script(api_status_error(400)), cache=cache)
    with pytest.raises(LLMCallError):
        ask(llm, seed=1)
    with pytest.raises(LLMCallError):
        ask(llm, seed=1)
    assert llm.usage.requests == 1  # the second answer came from the cache
    flaky, _ = make(Script(api_status_error(503)), cache=cache, max_retries=0)
    with pytest.raises(LLMCallError):
        ask(flaky, seed=2)
    assert (
        cache.get_json(
            "chat",
            flaky.cache_key(
                messages=MESSAGES,
                response_model=AnswerResponse,
                temperature=0.0,
                seed=2,
                max_tokens=None,
                prompt_id="answer@v1#x",
            ),
        )
        is None
    )


def test_concurrency_is_bounded():
    in_flight = 0
    peak = 0

    class SlowClient:
        def __init__(self):
            from types import SimpleNamespace

            self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

        async def create(self, **request):
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            from openai.types.chat import ChatCompletion

            from hope.testing import completion_body

            body = completion_body(json.dumps({"answer": "x"}), request)
            return ChatCompletion.model_validate(body)

    llm = ChatLLM(LLMSettings(model="m", concurrency=3), identity="f", client=SlowClient())

    async def many():
        await asyncio.gather(
            *(
                llm.structured(
                    messages=MESSAGES,
                    response_model=AnswerResponse,
                    schema_name="a",
                    prompt_id="a",
                    temperature=0,
                    seed=i,
                )
                for i in range(12)
            )
        )

    asyncio.run(many())
    assert peak == 3


def _gather_same_request(llm, copies):
    async def many():
        return await asyncio.gather(
            *(
                llm.structured(
                    messages=MESSAGES,
                    response_model=AnswerResponse,
                    schema_name="a",
                    prompt_id="a",
                    temperature=0,
                    seed=5,
                )
                for _ in range(copies)
            ),
            return_exceptions=True,
        )

    return asyncio.run(many())


def test_identical_concurrent_requests_are_sent_once_and_shared():
    script = Script({"answer": "shared"})
    llm, _ = make(script)
    results = _gather_same_request(llm, 4)
    assert len(script.seeds) == 1
    assert [r.value.answer for r in results] == ["shared"] * 4
    assert [r.cached for r in results] == [False, True, True, True]
    assert llm.usage.requests == 1 and llm.usage.cache_hits == 3


def test_a_shared_request_that_fails_fails_every_caller_once():
    script = Script(api_status_error(400))
    llm, _ = make(script)
    results = _gather_same_request(llm, 3)
    assert len(script.seeds) == 1
    assert all(isinstance(r, LLMCallError) for r in results)
    assert llm.usage.failures == 3  # each caller records its own failed item
    assert llm.usage.requests == 1


def test_missing_api_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("HOPE_TEST_KEY", raising=False)
    llm = ChatLLM(
        LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", api_key_env="HOPE_TEST_KEY"),
        identity="x",
    )
    # fatal for the backend (issue #13): the run stops instead of failing every item
    with pytest.raises(BackendError, match="HOPE_TEST_KEY"):
        ask(llm)


def test_http_faults_leave_the_answers_unchanged_and_every_retry_is_counted(retry_delays):
    from hope.testing import SimulatedServer

    def answers(server):
        llm = ChatLLM(
            LLMSettings(model="sim", base_url=server.base_url, max_retries=10), identity="sim"
        )

        async def many():
            try:
                return await asyncio.gather(*(ask_async(llm, seed) for seed in range(12)))
            finally:
                await llm.aclose()

        return [r.raw for r in asyncio.run(many())], llm.usage

    with (
        SimulatedServer(latency_s=0.0) as clean,
        SimulatedServer(latency_s=0.0, fault_rate=0.3, fault_seed=3) as faulty,
    ):
        expected, _ = answers(clean)
        got, usage = answers(faulty)
    assert got == expected
    assert faulty.faulted > 0 and len(retry_delays) == faulty.faulted
    assert usage.retries == faulty.faulted
    assert usage.requests == faulty.requests == 12 + faulty.faulted
    assert usage.failures == 0


async def ask_async(llm, seed):
    return await llm.structured(
        messages=MESSAGES,
        response_model=AnswerResponse,
        schema_name="answer",
        prompt_id="answer@v1#x",
        temperature=0.0,
        seed=seed,
    )
