"""The response cache is keyed by the model, not by the address of its server (issue #35): a
finished cache moved to a server of the same model on another port, or to a list of servers in
any order, sends nothing; ``llm.cache_identity`` names the model for configurations known to serve
the same one; a fingerprint the server reports is kept with the answer, outside the key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hope
from hope.cli.hope_command import main
from hope.core.packaged_configs import compose_config
from hope.core.prompts.response_schemas import AnswerResponse
from hope.core.response_cache import ResponseCache
from hope.models.factory import build_llm, llm_endpoint
from hope.models.llm import CACHE_NAMESPACE
from hope.testing import SimulatedServer
from tests.unit.score_files import write_score_inputs

DOC = (
    "The ferry leaves the harbour at seven. It crosses the bay in forty minutes. "
    "Tickets cost four euros. Bicycles travel free on weekdays. The last boat returns at nine."
)
PASSAGES = [DOC[:80], DOC[80:]]
SCORES = ("hope", "concept_unity", "semantic_independence", "information_preservation")
MESSAGES = [{"role": "user", "content": "What?"}]


def openai_endpoint(base_url, model="sim", **config):
    return llm_endpoint(backend="openai", model=model, base_url=base_url, **config)


# --- the identity itself (no network) ----------------------------------------------------------


def test_the_identity_names_the_model_and_no_server():
    a, b, c = "http://gpu1:8000/v1", "http://127.0.0.1:9001/v1", "http://router/v1"
    identities = {
        openai_endpoint(a).identity,
        openai_endpoint(b).identity,
        openai_endpoint([a, b]).identity,
        openai_endpoint([b, a]).identity,
        openai_endpoint([c, b, a]).identity,
    }
    assert len(identities) == 1
    (identity,) = identities
    assert not any(part in identity for part in ("gpu1", "8000", "9001", "127.0.0.1", "http"))
    # Another model is another identity: its answers are never taken for this one's.
    assert openai_endpoint(a, model="other").identity != identity


def test_cache_identity_replaces_the_derived_one_verbatim():
    plain = openai_endpoint("http://a:1/v1", model="local-gguf")
    named = openai_endpoint("http://a:1/v1", model="local-gguf", cache_identity="qwen2.5-1.5b-q4")
    other_name = openai_endpoint("http://b:2/v1", model="Qwen", cache_identity="qwen2.5-1.5b-q4")
    assert named.identity == other_name.identity == "qwen2.5-1.5b-q4" != plain.identity
    # Verbatim: a cache written under the former URL-bearing identity stays readable by naming it.
    legacy = openai_endpoint("http://new:1/v1", cache_identity="openai:http://old:8000/v1|sim")
    assert legacy.identity == "openai:http://old:8000/v1|sim"
    # The identity is all that names the model in a request's key.
    key = {"messages": MESSAGES, "response_model": AnswerResponse, "temperature": 0.0}
    keys = {
        build_llm(backend="openai", model=m, base_url=u, cache_identity="same").request_key(
            {**key, "seed": 1, "max_tokens": None, "prompt_id": "answer@v1#x"}
        )
        for m, u in (("a", "http://a:1/v1"), ("b", "http://b:2/v1"))
    }
    assert len(keys) == 1


@pytest.mark.parametrize("bad", ["", "  ", 3])
def test_a_bad_cache_identity_is_a_named_error(bad):
    with pytest.raises(ValueError, match=r"llm\.cache_identity"):
        openai_endpoint("http://a:1/v1", cache_identity=bad)


def test_the_embedded_identity_is_its_gguf_file_and_cache_identity_replaces_it(tmp_path):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    endpoint = llm_endpoint(backend="embedded", model="Tiny", gguf_path=str(gguf))
    # Name and size of the weights: the port the server picks when it starts plays no part,
    # and nothing is started to know it.
    assert endpoint.identity == "embedded:gguf:tiny.gguf:64"
    named = llm_endpoint(backend="embedded", model="Tiny", gguf_path=str(gguf), cache_identity="t")
    assert named.identity == "t"


@pytest.mark.parametrize("preset", ["embedded", "llamacpp_server", "ollama", "openai", "vllm"])
def test_every_packaged_preset_takes_cache_identity_without_a_plus(preset):
    # Hydra's composed config is closed to new keys: each preset declares cache_identity (null).
    cfg = compose_config([f"llm={preset}", "llm.cache_identity=shared", "cache.path=off"])
    assert cfg.llm.cache_identity == "shared"
    assert compose_config([f"llm={preset}", "cache.path=off"]).llm.cache_identity is None


def test_a_hydra_list_of_servers_has_the_identity_of_one_server():
    from hydra.utils import instantiate

    cfg = compose_config(
        ["llm=vllm", "llm.base_url=[http://gpu1:8000/v1,http://gpu2:8000/v1]", "cache.path=off"]
    )
    llm = instantiate(cfg.llm, cache=None)
    elsewhere = openai_endpoint("http://elsewhere:1234/v1", model=cfg.llm.model)
    assert llm.identity == elsewhere.identity == f"openai:{cfg.llm.model}"


# --- real servers: the simulated OpenAI-compatible server, started on different ports ----------


@pytest.fixture
def files(tmp_path):
    doc, passages = write_score_inputs(tmp_path, DOC, PASSAGES)
    return ["--document", str(doc), "--passages", str(passages)]


def score_args(files, base_url, cache_path, *extra):
    return [
        "score",
        *files,
        "llm=llamacpp_server",
        f"llm.base_url={base_url}",
        "embedder=hashing",
        f"cache.path={cache_path}",
        "hope.progress=false",
        "hope.information_preservation.n_segments=2",
        *extra,
    ]


def score_here(args, capsys) -> dict:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_a_finished_cache_moved_to_a_server_on_another_port_sends_nothing(files, tmp_path, capsys):
    first_machine, second_machine = tmp_path / "first", tmp_path / "second"
    with SimulatedServer(latency_s=0.0) as first:
        # The finished run in a process of its own, as on the first machine: the cache file is
        # complete when that process has exited (the README's advice copies that one file).
        src = str(Path(hope.__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from hope.cli.hope_command import main; sys.exit(main())",
                *score_args(files, first.base_url, first_machine / "cache.sqlite"),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        cold = json.loads(done.stdout)
    assert first.requests > 0 and cold["usage"]["llm"]["requests"] == first.requests

    second_machine.mkdir()
    shutil.copy(first_machine / "cache.sqlite", second_machine / "cache.sqlite")
    moved = second_machine / "cache.sqlite"
    with SimulatedServer(latency_s=0.0) as second, SimulatedServer(latency_s=0.0) as third:
        assert len({first.port, second.port, third.port}) == 3
        # The kept (document, chunking) result, read back: its key holds the LLM's identity too.
        reused = score_here(score_args(files, second.base_url, moved), capsys)
        assert reused["usage"].get("reused_result") is True
        # Every answer looked up one by one, over a list of servers in another order.
        servers = f"[{third.base_url},{second.base_url}]"
        recomputed = score_here(
            score_args(files, servers, moved, "cache.reuse_results=false"), capsys
        )
        assert recomputed["usage"]["llm"]["cache_hits"] > 0
        assert recomputed["usage"]["llm"]["requests"] == 0
        # Nothing sent, not even the preflight.
        assert (second.requests, second.preflights, third.requests, third.preflights) == (
            0,
            0,
            0,
            0,
        )
    for result in (reused, recomputed):
        for name in SCORES:
            assert result[name] == cold[name], name
        assert result["passages"] == cold["passages"] and result["segments"] == cold["segments"]
        assert result["models"]["llm"] == cold["models"]["llm"]


def test_cache_identity_lets_another_name_of_the_model_reuse_the_answers(files, tmp_path, capsys):
    cache = tmp_path / "cache.sqlite"
    fresh = "cache.reuse_results=false"
    with SimulatedServer(latency_s=0.0) as a, SimulatedServer(latency_s=0.0) as b:
        shared = "llm.cache_identity=smollm2-135m-q4_1"
        cold = score_here(score_args(files, a.base_url, cache, "llm.model=sim-a", shared), capsys)
        assert a.requests > 0
        # The same model under another name on another server: named alike, nothing is sent.
        same = score_here(
            score_args(files, b.base_url, cache, "llm.model=sim-b", shared, fresh), capsys
        )
        assert b.requests == 0 and b.preflights == 0
        assert same["usage"]["llm"]["cache_hits"] > 0
        # Without the override the other name is another model: every request goes out.
        other = score_here(score_args(files, b.base_url, cache, "llm.model=sim-b", fresh), capsys)
        assert b.requests == other["usage"]["llm"]["requests"] == cold["usage"]["llm"]["requests"]
    for name in SCORES:
        assert same[name] == cold[name], name


def test_a_reported_fingerprint_is_kept_with_the_answer_and_is_not_in_the_key(tmp_path):
    import asyncio

    cache = ResponseCache(tmp_path / "cache.sqlite")

    def request(seed):
        return {
            "messages": MESSAGES,
            "response_model": AnswerResponse,
            "schema_name": "answer",
            "prompt_id": "answer@v1#x",
            "temperature": 0.0,
            "seed": seed,
        }

    def ask(base_url, seed):
        llm = build_llm(backend="openai", model="sim", base_url=base_url, cache=cache)

        async def once():
            try:
                return await llm.structured(**request(seed))
            finally:
                await llm.aclose()

        answer = asyncio.run(once())
        return answer, cache.get_json(CACHE_NAMESPACE, llm.request_key(request(seed)))

    with SimulatedServer(latency_s=0.0, fingerprint="fp_build_1") as one:
        answer, entry = ask(one.base_url, 5)
    assert one.requests == 1 and not answer.cached
    assert entry["fingerprint"] == "fp_build_1"
    # A server of another build (another fingerprint) on another port: the cached answer serves.
    with SimulatedServer(latency_s=0.0, fingerprint="fp_build_2") as two:
        again, entry = ask(two.base_url, 5)
        assert two.requests == 0 and two.preflights == 0
        assert again.cached and again.raw == answer.raw
        assert entry["fingerprint"] == "fp_build_1"
        # A new answer from it carries its own.
        _, entry = ask(two.base_url, 6)
        assert two.requests == 1 and entry["fingerprint"] == "fp_build_2"
    # A server that reports none leaves the entry as it always was.
    with SimulatedServer(latency_s=0.0) as plain:
        _, entry = ask(plain.base_url, 7)
    assert plain.requests == 1 and set(entry) == {"content", "seed", "temperature"}
