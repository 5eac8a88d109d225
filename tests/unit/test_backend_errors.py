"""Preflight and fatal backend errors (issue #13): a backend that cannot answer stops the run with a
message naming its URL and model (never the key), nothing of it is cached, what finished stays
cached, and a rerun after the fix completes. Content-bound failures are the only cached ones."""

from __future__ import annotations

import json
import socket

import httpx
import openai
import pytest
from pydantic import BaseModel

from hope.cli.hope_command import main
from hope.core.response_cache import ResponseCache
from hope.models.embeddings import OpenAIEmbedder
from hope.models.llm import ATTEMPT_NAMESPACE, CACHE_NAMESPACE, ChatLLM
from hope.models.llm_settings import LLMSettings
from hope.models.model_errors import BackendError, classify_error, redact
from hope.models.preflight import BACKEND_EXIT_CODE
from hope.testing import FakeTransport, SimulatedServer, api_status_error
from tests.unit.score_files import write_score_inputs

DOC = (
    "The ferry leaves the harbour at seven. It crosses the bay in forty minutes. "
    "Tickets cost four euros. Bicycles travel free on weekdays. The last boat returns at nine. "
    "Dogs travel free when on a lead. The kiosk on the pier sells coffee and maps."
)
PASSAGES = [DOC[:90], DOC[90:180], DOC[180:]]
KEY = "sk-test-0123456789abcdefSECRET"
MODEL = "served-model"


@pytest.fixture
def files(tmp_path):
    doc, passages = write_score_inputs(tmp_path, DOC, PASSAGES)
    return doc, passages, tmp_path


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run_score(files, base_url, *extra, key_env=None):
    doc, passages, tmp = files
    out = tmp / "out" / "result.json"
    args = [
        "score",
        "--document",
        str(doc),
        "--passages",
        str(passages),
        "--output",
        str(out),
        "llm=llamacpp_server",
        f"llm.base_url={base_url}",
        f"llm.model={MODEL}",
        "llm.max_retries=1",
        "llm.concurrency=4",
        "embedder=hashing",
        f"cache.path={tmp / 'cache.sqlite'}",
        "hope.progress=false",
        "hope.information_preservation.n_segments=3",
    ]
    if key_env:
        args.append(f"llm.api_key_env={key_env}")
    return main([*args, *extra]), out


def cached(tmp):
    cache = ResponseCache(tmp / "cache.sqlite")
    rows = cache._conn.execute(
        "SELECT value FROM entries WHERE namespace=?", (CACHE_NAMESPACE,)
    ).fetchall()
    cache.close()
    values = [json.loads(bytes(v)) for (v,) in rows]
    return [v for v in values if "content" in v], [v for v in values if "error" in v]


@pytest.fixture
def no_backoff(monkeypatch):
    """The openai client's retry backoff without the waiting (the retries still happen)."""
    monkeypatch.setattr(openai.AsyncOpenAI, "_calculate_retry_timeout", lambda *a, **k: 0.001)
    monkeypatch.setattr(openai.OpenAI, "_calculate_retry_timeout", lambda *a, **k: 0.001)


def status_error(status: int) -> Exception:
    return api_status_error(status)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (status_error(401), "fatal"),
        (status_error(403), "fatal"),
        (status_error(404), "fatal"),
        (openai.APIConnectionError(request=httpx.Request("POST", "http://x")), "fatal"),
        (status_error(400), "content"),
        (status_error(413), "content"),
        (status_error(422), "content"),
        (status_error(429), "transient"),
        (status_error(500), "transient"),
        (status_error(503), "transient"),
        (openai.APITimeoutError(request=httpx.Request("POST", "http://x")), "transient"),
    ],
)
def test_classify_error(error, kind):
    assert classify_error(error) == kind


def test_redact_removes_the_key_and_key_shaped_words():
    text = f"Incorrect API key provided: {KEY}; also sk-abc***wxyz here"
    clean = redact(text, [KEY])
    assert KEY not in clean and "sk-abc" not in clean and "[redacted]" in clean


def test_a_healthy_backend_passes_the_preflight(files):
    with SimulatedServer(latency_s=0.0) as server:
        code, out = run_score(files, server.base_url)
        assert code == 0 and out.is_file()
        assert server.preflights == 1 and server.requests > 0
        answers, errors = cached(files[2])
        assert errors == [] and len(answers) <= server.requests
        # a fully cached rerun sends nothing, not even the preflight
        code, _ = run_score(files, server.base_url)
        assert code == 0 and server.preflights == 1 and len(answers) == len(cached(files[2])[0])


@pytest.mark.parametrize("status", [401, 403, 404, 500])
def test_preflight_stops_the_run_naming_url_and_model(
    files, status, capsys, monkeypatch, no_backoff
):
    monkeypatch.setenv("HOPE_TEST_KEY", KEY)
    options = {401: {"api_key": "sk-the-right-one"}, 404: {"models": ["another-model"]}}
    with SimulatedServer(latency_s=0.0, status=None, **options.get(status, {})) as server:
        if status in (403, 500):
            server.status = status
        code, out = run_score(files, server.base_url, key_env="HOPE_TEST_KEY")
        sent = (server.preflights, server.requests)
        failed, written = cached(files[2]), out.exists()
        server.status, server.api_key, server.models = None, None, None  # the user fixes it
        fixed_code, _ = run_score(files, server.base_url, key_env="HOPE_TEST_KEY")
    err = capsys.readouterr().err
    assert code == BACKEND_EXIT_CODE
    assert server.base_url in err and MODEL in err and f"HTTP {status}" in err
    assert KEY not in err and "sk-tes" not in err
    assert not written
    assert sent == (2 if status == 500 else 1, 0)  # preflight only (500: retried once)
    assert failed == ([], [])
    assert fixed_code == 0 and json.loads(out.read_text())["failures"] == []


@pytest.mark.parametrize("where", ["closed port", "unknown host"])
def test_an_unreachable_backend_stops_the_run(files, where, capsys, no_backoff):
    url = closed_port_url() if where == "closed port" else "http://hope-no-such-host.invalid/v1"
    code, out = run_score(files, url)
    err = capsys.readouterr().err
    assert code == BACKEND_EXIT_CODE
    assert url in err and MODEL in err and "APIConnectionError" in err
    assert not out.exists()


@pytest.mark.parametrize("status", [401, 403, 404])
def test_fatal_mid_run_stops_keeps_what_finished_and_the_rerun_completes(
    files, status, capsys, no_backoff
):
    tmp = files[2]
    with SimulatedServer(latency_s=0.0) as server:
        clean_code, clean_out = run_score(
            files, server.base_url, f"cache.path={tmp / 'ref.sqlite'}"
        )
        assert clean_code == 0
        reference = json.loads(clean_out.read_text())
        clean_out.unlink()
        uninterrupted = server.requests

    # the backend breaks after 5 answers (one request at a time, so that no answer is in flight
    # when it breaks)
    with SimulatedServer(latency_s=0.0, status=status, fail_after=5) as server:
        code, out = run_score(files, server.base_url, "llm.concurrency=1")
        err = capsys.readouterr().err
        assert code == BACKEND_EXIT_CODE, err
        assert server.base_url in err and MODEL in err and f"HTTP {status}" in err
        assert not out.exists()
        answers, errors = cached(tmp)
        assert errors == []  # nothing of the dead backend is cached
        assert len(answers) == 5
        first = server.requests

        server.status = None  # the user fixes the backend
        code, out = run_score(files, server.base_url, "llm.concurrency=1")
        assert code == 0
        rerun = server.requests - first
    result = json.loads(out.read_text())
    for name in ("hope", "concept_unity", "semantic_independence", "information_preservation"):
        assert result[name] == reference[name]
    assert result["failures"] == []
    assert rerun == uninterrupted - 5


def test_content_bound_failures_are_cached(files, capsys, no_backoff):
    with SimulatedServer(latency_s=0.0, status=400) as server:
        code, out = run_score(files, server.base_url)
        # the preflight passed; every item failed for its content, so nothing was scored
        assert code == BACKEND_EXIT_CODE and not out.exists()
        err = capsys.readouterr().err
        assert "nothing could be scored" in err and "HTTP 400" in err
        answers, errors = cached(files[2])
        assert (
            answers == [] and errors and all("maximum context length" in e["error"] for e in errors)
        )
        first = server.requests
        server.status = None
        code, out = run_score(files, server.base_url)
        assert code == BACKEND_EXIT_CODE and not out.exists()
        assert "maximum context length" in capsys.readouterr().err
        assert server.requests == first  # the failures came from the cache
        assert server.preflights == 1  # nothing to send, so no preflight either


def test_transient_failures_fail_items_are_not_cached_and_are_asked_again(files, no_backoff):
    with SimulatedServer(latency_s=0.0, status=500, fail_after=5) as server:
        code, out = run_score(files, server.base_url)
        assert code == 0
        result = json.loads(out.read_text())
        assert any("HTTP 500" in f["reason"] for f in result["failures"])
        answers, errors = cached(files[2])
        assert errors == [] and len(answers) == 5
        server.status = None
        code, out = run_score(files, server.base_url)
        assert code == 0 and json.loads(out.read_text())["failures"] == []


def test_a_run_where_every_item_failed_exits_3_and_writes_nothing(files, capsys, monkeypatch):
    """Issue #35: with the preflight off and a server that answers 500 to everything, the run used
    to exit 0 with a result of nulls. Now it stops like any unusable backend, with the reason."""
    monkeypatch.setenv("HOPE_PREFLIGHT", "0")
    with SimulatedServer(latency_s=0.0, status=500) as server:
        code, out = run_score(files, server.base_url, "llm.max_retries=0")
        sent = server.requests
    err = capsys.readouterr().err
    assert code == BACKEND_EXIT_CODE, err
    assert not out.exists() and not out.parent.exists()
    assert "hope: error: nothing could be scored: all " in err
    assert "concept_unity" in err and "information_preservation" in err
    assert "HTTP 500" in err and "The server had an error" in err
    assert sent > 0 and server.preflights == 0
    assert cached(files[2]) == ([], [])  # transient: nothing cached, a rerun asks again


def test_a_partial_failure_is_recorded_and_excluded_not_fatal(files, no_backoff):
    """Only a run where nothing at all was scored stops: items that failed beside scored ones
    are recorded with their reason and the run exits 0."""
    with SimulatedServer(latency_s=0.0, status=400, fail_after=6) as server:
        code, out = run_score(files, server.base_url, "llm.concurrency=1")
        assert server.faulted > 0
    assert code == 0
    result = json.loads(out.read_text())
    assert any("HTTP 400" in f["reason"] for f in result["failures"])
    assert sum(c["scored"] for c in result["counts"].values()) > 0


class Answer(BaseModel):
    answer: str


def ask(llm, seed=1):
    import asyncio

    async def go():
        return await llm.structured(
            messages=[{"role": "user", "content": "q"}],
            response_model=Answer,
            schema_name="answer",
            prompt_id="p@1",
            temperature=0.0,
            seed=seed,
        )

    return asyncio.run(go())


class Script:
    def __init__(self, *steps):
        self.steps = list(steps)
        self.seeds = []

    def __call__(self, request):
        self.seeds.append(request.get("seed"))
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Exception):
            raise step
        return step if isinstance(step, str) else json.dumps(step)


def make(script, cache=None, **settings):
    transport = FakeTransport(script)
    llm = ChatLLM(
        LLMSettings(model="m", base_url="http://fake/v1", **settings),
        identity="fake",
        transport=transport,
        cache=cache,
    )
    return llm, transport


def test_a_fatal_status_raises_backend_error_and_caches_nothing(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm, transport = make(Script(api_status_error(401, f"bad key {KEY}")), cache=cache)
    with pytest.raises(BackendError) as info:
        ask(llm)
    assert "http://fake/v1" in str(info.value) and "'m'" in str(info.value)
    assert KEY not in str(info.value)
    assert cache.count() == 0 and len(transport.requests) == 1


def test_a_missing_key_is_fatal(monkeypatch):
    monkeypatch.delenv("HOPE_UNSET_KEY", raising=False)
    llm, transport = make(Script({"answer": "x"}), api_key_env="HOPE_UNSET_KEY")
    with pytest.raises(BackendError, match="HOPE_UNSET_KEY"):
        ask(llm)
    assert transport.requests == []


def test_fatal_statuses_cached_by_older_versions_are_not_believed(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm, _ = make(Script({"answer": "now fine"}), cache=cache)
    key = llm.cache_key(
        messages=[{"role": "user", "content": "q"}],
        response_model=Answer,
        temperature=0.0,
        seed=1,
        max_tokens=None,
        prompt_id="p@1",
    )
    cache.put_json(CACHE_NAMESPACE, key, {"error": "HTTP 401: wrong key (after 1 attempt)"})
    assert ask(llm).value.answer == "now fine"


def test_an_invalid_answer_is_durable_when_it_arrives(tmp_path):
    """Killed (here: the backend dies) after an invalid answer: the rerun replays it and only asks
    the retry, with the same derived seed as an uninterrupted run."""
    path = tmp_path / "c.sqlite"
    first = Script("not json", api_status_error(403))
    llm, _ = make(first, cache=ResponseCache(path))
    with pytest.raises(BackendError):
        ask(llm, seed=5)
    assert ResponseCache(path).count(ATTEMPT_NAMESPACE) == 1
    rerun = Script({"answer": "fine"})
    llm, transport = make(rerun, cache=ResponseCache(path))
    response = ask(llm, seed=5)
    assert response.value.answer == "fine"
    assert len(transport.requests) == 1 and rerun.seeds == [first.seeds[1]] != [5]
    assert llm.usage.invalid_responses == 1 and llm.usage.requests == 1


def test_openai_embedder_preflight_and_fatal_errors(monkeypatch, no_backoff):
    monkeypatch.setenv("HOPE_TEST_KEY", KEY)
    with SimulatedServer(latency_s=0.0, api_key="sk-the-right-one") as server:
        embedder = OpenAIEmbedder(
            "embed-model", base_url=server.base_url, api_key_env="HOPE_TEST_KEY"
        )
        with pytest.raises(BackendError) as info:
            embedder.preflight()
        message = str(info.value)
        assert server.base_url in message and "embed-model" in message and "HTTP 401" in message
        assert KEY not in message and "sk-tes" not in message
        with pytest.raises(BackendError):
            embedder.embed(["a text"])
        server.api_key = None
        assert embedder.embed(["a", "b"]).shape == (2, 8)
        assert server.preflights == 3 and server.embedding_requests == 4
    dead = OpenAIEmbedder("embed-model", base_url=closed_port_url(), max_retries=0)
    with pytest.raises(BackendError, match="APIConnectionError"):
        dead.embed(["a"])


def test_hope_score_stops_on_a_dead_remote_embedder(files, capsys, no_backoff):
    with SimulatedServer(latency_s=0.0) as server:
        dead = closed_port_url()
        code, out = run_score(
            files,
            server.base_url,
            "embedder=openai",
            f"embedder.base_url={dead}",
            "embedder.api_key_env=null",
        )
    err = capsys.readouterr().err
    assert code == BACKEND_EXIT_CODE and dead in err and "text-embedding-ada-002" in err
    assert not out.exists()


def test_preflight_can_be_switched_off(files, monkeypatch):
    monkeypatch.setenv("HOPE_PREFLIGHT", "0")
    with SimulatedServer(latency_s=0.0) as server:
        code, _ = run_score(files, server.base_url)
        assert code == 0 and server.requests > 0 and server.preflights == 0


@pytest.mark.parametrize("behaviour", ["silent", "hangs up"])
def test_a_server_that_never_answers_is_a_timeout_and_one_that_hangs_up_a_connection_error(
    behaviour,
):
    """Over the aiohttp transport: a silent server reads as a timeout, a dropped connection as a
    connection error (the transport's own map would call the second a timeout too)."""
    import asyncio

    from hope.models.openai_client import LazyOpenAIClient

    async def scenario() -> BaseException:
        async def handle(reader, writer):
            await reader.read(1)
            if behaviour == "hangs up":
                writer.close()
            else:
                await asyncio.sleep(5)

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        settings = LLMSettings(
            model=MODEL, base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout_s=0.3
        )
        client = LazyOpenAIClient(settings)
        try:
            await client.client().models.list()
        except Exception as exc:
            return exc
        finally:
            await client.aclose()
            server.close()
        raise AssertionError("the request succeeded")

    error = asyncio.run(scenario())
    expected = openai.APITimeoutError if behaviour == "silent" else openai.APIConnectionError
    assert type(error) is expected
    # classify_error's policy: a timeout may pass, a connection that breaks stops the run.
    assert classify_error(error) == ("transient" if behaviour == "silent" else "fatal")


def test_each_loops_client_is_closed_when_its_loop_shuts_down():
    """Without it aiohttp's sessions are collected open and the process prints "Unclosed client
    session" as it exits."""
    import asyncio

    from hope.models.openai_client import LazyOpenAIClient

    with SimulatedServer(latency_s=0.0) as server:
        client = LazyOpenAIClient(LLMSettings(model=MODEL, base_url=server.base_url))

        async def one_request() -> openai.AsyncOpenAI:
            used = client.client()
            with pytest.raises(openai.NotFoundError):  # the server has no /models: a round trip
                await used.models.list()
            assert not used.is_closed()
            return used

        first = asyncio.run(one_request())
        assert first.is_closed()
        second = asyncio.run(one_request())  # a new loop gets a new, open client, closed in turn
        assert second is not first and second.is_closed()
