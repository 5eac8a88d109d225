"""Shared test data and doubles for the RAG evaluation tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from hope.models.embeddings import Embedder, normalise_rows
from hope.rag.rag_config import RagConfig

DOCS = [
    {
        "doc_id": "d-news",
        "domain": "news",
        "title": "Harbour bridge",
        "text": (
            "The city council approved a new harbour bridge on Monday. The bridge will be 800 "
            "metres long and carry two tram lines. Construction starts in spring and should take "
            "three years. The council expects 40,000 crossings a day. Critics say the budget of "
            "120 million euros is too small for a bridge of this size."
        ),
    },
    {
        "doc_id": "d-wiki",
        "domain": "wiki",
        "title": "Honey bee",
        "text": (
            "The western honey bee lives in colonies of up to 60,000 workers. A colony has one "
            "queen, who lays up to 2,000 eggs a day. Workers collect nectar and pollen and turn "
            "nectar into honey. Drones are male bees whose only task is mating with a queen. Bees "
            "communicate the direction of food with a waggle dance."
        ),
    },
]


def passages_for(docs: list[dict[str, Any]], chunkers: dict[str, int]) -> list[dict[str, Any]]:
    """Sentence-count chunkers: ``{name: sentences per passage}``."""
    out = []
    for name, size in chunkers.items():
        for doc in docs:
            sentences = [s.strip() + "." for s in doc["text"].split(". ") if s.strip()]
            for index, start in enumerate(range(0, len(sentences), size)):
                text = " ".join(sentences[start : start + size]).replace("..", ".")
                out.append(
                    {
                        "passage_id": f"{doc['doc_id']}:{name}:{index}",
                        "doc_id": doc["doc_id"],
                        "chunker": name,
                        "index": index,
                        "text": text,
                        "domain": doc["domain"],
                    }
                )
    return out


class FixedEmbedder(Embedder):
    """Each text's vector is looked up by a keyword it contains: fully controlled geometry."""

    identity = "fixed"

    def __init__(self, table: dict[str, list[float]], default: list[float]):
        self.table = table
        self.default = np.asarray(default, dtype=np.float32)
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        rows = []
        for text in texts:
            vector = self.default
            for keyword, value in self.table.items():
                if keyword in text:
                    vector = np.asarray(value, dtype=np.float32)
                    break
            rows.append(vector)
        return normalise_rows(np.stack(rows))


def fake_config(**overrides: Any) -> RagConfig:
    """A config whose LLM roles point at an OpenAI-compatible address (never contacted when a
    test injects a client) and whose embedder is the hashing double."""
    llm = {
        "preset": None,
        "overrides": {
            "backend": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "fake",
            "max_retries": 1,
        },
    }
    data: dict[str, Any] = {
        "seed": 7,
        "questions": {"per_domain": {"sample": 2}, "generator": "fallback", "context_chars": 200},
        "retrieval": {"top_k": 2},
        "embedder": {"backend": "hashing", "dim": 64},
        "llm": {"questions": llm, "answer": llm, "judge": llm},
        "ragas": {"timeout_s": 30, "concurrency": 2},
    }
    for key, value in overrides.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    return RagConfig.model_validate(data)


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _quoted(text: str) -> str:
    parts = text.split('"""')
    return parts[1].strip() if len(parts) >= 3 else text


def question_writer(request: dict[str, Any]) -> str:
    """A responder that writes sensible questions: about the first sentence of the prompt's
    excerpt (its content words), answered by that sentence; the support judge says yes and
    quotes the context's first sentence."""
    import re

    from hope.core.text import split_sentences

    schema_name = request["response_format"]["json_schema"]["name"]
    user = " ".join(m["content"] for m in request["messages"] if m["role"] == "user")
    excerpt = _quoted(user)
    first = excerpt[: split_sentences(excerpt)[0].end]
    words = [w for w in re.findall(r"[A-Za-z]{4,}", first)][:3]
    question = f"What does the text report about {' and '.join(words)}?"
    if schema_name == "generated_question":
        return json.dumps({"question": question, "answer": first})
    if schema_name == "written_question":
        answer = re.search(r'Answer sentence: "(.*)"', user, re.S)
        words = re.findall(r"[A-Za-z]{5,}", answer.group(1) if answer else first)[:2]
        return json.dumps({"question": f"What is said about {' and '.join(words)}?"})
    if schema_name == "support_verdict":
        return json.dumps({"supported": True, "quote": first})
    raise AssertionError(f"unexpected schema {schema_name}")
