"""Shared pieces of the pipeline tests: a tiny corpus, a simulated LLM server, composition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hope.pipeline import CONF_DIR

# Eight sentences of about 60 characters in two topics: any chunker cuts it into a few passages.
SENTENCES = [
    "The harbour crane lifts containers from the cargo ship deck.",
    "Each container is weighed before it reaches the storage yard.",
    "Dock workers record the weight and the destination of every box.",
    "Trucks leave the yard at night to avoid the city traffic jams.",
    "The library opens at nine and closes at six on every weekday.",
    "Visitors may borrow five books for three weeks with their card.",
    "Rare manuscripts stay in the reading room under careful watch.",
    "The staff digitise old maps so that scholars can study them.",
]
TEXT = " ".join(SENTENCES)


@pytest.fixture()
def documents_file(tmp_path: Path) -> Path:
    path = tmp_path / "documents.jsonl"
    docs = [
        {"doc_id": "tiny-news", "domain": "news", "text": TEXT},
        {"doc_id": "tiny-wiki", "domain": "wiki", "text": " ".join(reversed(SENTENCES))},
    ]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sim_server():
    from hope.testing import SimulatedServer

    with SimulatedServer(latency_s=0.0) as server:
        yield server


def compose(overrides: list[str]):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose("config", overrides=overrides)


def small_overrides(
    tmp_path: Path, documents: Path, base_url: str, *, chunker: str = "fixed_500_o0"
) -> list[str]:
    """A fast, fully local job: simulated LLM, lexical embedder, tmp cache and MLflow store."""
    return [
        f"chunker={chunker}",
        "chunker.chunk_size=200",
        "llm=llamacpp_server",
        f"llm.base_url={base_url}",
        "embedder=hashing",
        f"data.documents={documents}",
        f"cache.path={tmp_path / 'cache.sqlite'}",
        f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}",
        f"tracking.artifact_root={tmp_path / 'mlruns'}",
    ]
