"""Deterministic doubles: an embedder with a fixed vector table and a scripted chat responder."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from hope.models.embeddings import Embedder
from hope.models.llm import ChatLLM
from hope.models.llm_settings import LLMSettings
from hope.testing import FakeTransport, api_status_error, schema_responder


class TableEmbedder(Embedder):
    identity = "table"

    def __init__(self, table: dict[str, list[float]]):
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        missing = [t for t in texts if t not in self.table]
        if missing:
            raise KeyError(f"no vector for {missing}")
        return np.stack([self.table[t] for t in texts])


def prompt_of(request: dict[str, Any]) -> str:
    return request["response_format"]["json_schema"]["name"]


def user_text(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


def context_passages(request: dict[str, Any]) -> list[str]:
    """The passage texts inside a rendered context block, in order."""
    text = user_text(request)
    return [
        m.strip() for m in re.findall(r"\[Passage \d+\]\n(.*?)(?=\n\n\[Passage|\n\n)", text, re.S)
    ]


def scripted(handlers: dict[str, Callable[[dict[str, Any]], Any]]) -> Callable[[dict], str]:
    def respond(request: dict[str, Any]) -> str:
        return json.dumps(handlers[prompt_of(request)](request))

    return respond


def make_llm(responder, *, cache=None, **settings) -> tuple[ChatLLM, FakeTransport]:
    """A ChatLLM over a real openai client whose network is ``responder`` (retries included)."""
    transport = FakeTransport(responder)
    llm = ChatLLM(
        LLMSettings(model="fake", base_url="http://fake/v1", **settings),
        identity="fake",
        transport=transport,
        cache=cache,
    )
    return llm, transport


def dies_after(served_ok: int) -> Callable[[dict[str, Any]], str]:
    """A responder that answers ``served_ok`` requests, then fails every one with a 503 (a
    server gone away: a transient fault, never cached)."""
    served = 0

    def respond(request: dict[str, Any]) -> str:
        nonlocal served
        served += 1
        if served > served_ok:
            raise api_status_error(503, "server went away")
        return schema_responder(request)

    return respond


class ScriptedProbeModel:
    """A ``ChatModel`` for the probe's LLM writers. Each request's passage (the text between the
    prompt's triple quotes) goes to ``script``, whose answer ``(question, items)`` fills the
    response model's ``question`` and ``items_field`` (built without validation, so that a writer
    sees what a lenient client would pass on); ``None`` is an answer that failed
    (``LLMCallError``). ``lines=True`` hands the script the passage's lines (numbered sentences)."""

    identity = "scripted"

    def __init__(self, script, items_field: str, *, lines: bool = False):
        self.script = script
        self.items_field = items_field
        self.lines = lines
        self.requests: list[dict[str, Any]] = []

    async def structured(
        self,
        *,
        messages,
        response_model,
        schema_name,
        prompt_id,
        temperature,
        seed,
        max_tokens=None,
        invalid_retry_temperatures=None,
        validate=None,
    ):
        from hope.core.model_interface import LLMCallError, StructuredResponse

        self.requests.append(
            {
                "messages": messages,
                "schema_name": schema_name,
                "prompt_id": prompt_id,
                "seed": seed,
                "temperature": temperature,
            }
        )
        passage = messages[-1]["content"].split('"""')[1].strip()
        answer = self.script(passage.splitlines() if self.lines else passage)
        if answer is None:
            raise LLMCallError("no valid answer", attempts=3)
        value = response_model.model_construct(
            **{"question": answer[0], self.items_field: answer[1]}
        )
        return StructuredResponse(value, value.model_dump_json(), False, 1, seed, temperature)

    async def aclose(self) -> None:
        pass
