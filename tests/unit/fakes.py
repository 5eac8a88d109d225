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
