"""The workloads and setups that several benchmarks share, so that no bench script imports another.

- the simulated OpenAI-compatible server in a child process and the paper-profile evaluator
  against it, and the synthetic document of distinct sentences (bench_engine, bench_servers,
  bench_transport, bench_scale, bench_passage_scale);
- the scale benchmark's chunkers, the prepared offline mirror and its seeded document selection,
  and the resident-memory sampler (bench_scale, bench_chunking, bench_passage_scale);
- the validity benchmark's document selection, quality ladders, reduced settings and ζ_inf
  controls (bench_validity, bench_ip_ladder, bench_choice_probs, validity_models);
- the embedded llama.cpp server asked directly for letter and verdict probabilities
  (bench_choice_probs, bench_support_probs);
- the RAG stages' config with a benchmark's overrides (bench_questions, bench_rag_control).

Heavy imports stay inside the functions: every script's ``--help`` stays fast.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness import REPO

# --- the simulated server and the engine's workload --------------------------------------------

TOPICS = ["harbour", "orchard", "railway", "library", "glacier", "market", "observatory", "mill"]


def workload(n_passages: int) -> tuple[str, list[str]]:
    """A synthetic document of distinct factual sentences, cut into equal passages."""
    sentences = []
    for i in range(n_passages * 4):
        topic = TOPICS[i % len(TOPICS)]
        sentences.append(
            f"The {topic} number {i} was built in {1800 + i} and measures {10 + i * 7} metres."
        )
    passages = [" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
    return " ".join(sentences), passages


@contextmanager
def simulated_server(latency: float, fault_rate: float = 0.0, wait_s: float = 30.0):
    """The simulated server in a child process, as a real server would be."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hope.testing",
            "--latency",
            str(latency),
            "--fault-rate",
            str(fault_rate),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        info = json.loads(proc.stdout.readline())
        stats: dict = {}
        yield info["base_url"], stats
        proc.stdin.close()
        stats.update(json.loads(proc.stdout.readline()))
    finally:
        proc.wait(wait_s)


def simulated_llm(base_url: str | list[str], concurrency: int, cache: Any):
    """The chat client of every benchmark against the simulated server(s): model ``simulated``,
    ``concurrency`` requests in flight, 8 retries, answers in ``cache``."""
    from hope.models.factory import build_llm

    return build_llm(
        backend="openai",
        model="simulated",
        base_url=base_url,
        concurrency=concurrency,
        cache=cache,
        max_retries=8,
    )


def simulated_evaluator(base_url: str | list[str], cache_path: Path, concurrency: int):
    """The paper profile against the simulated server(s), hashing embeddings, one cache file."""
    from hope.core.evaluator import HopeEvaluator
    from hope.core.hope_settings import load_profile
    from hope.core.response_cache import ResponseCache
    from hope.models.embeddings import CachingEmbedder, HashingEmbedder

    llm = simulated_llm(base_url, concurrency, ResponseCache(cache_path))
    embedder = CachingEmbedder(HashingEmbedder(), ResponseCache(cache_path))
    return llm, HopeEvaluator(llm, embedder, load_profile("paper", progress=False))


# --- the scale benchmark's chunkers and mirror documents ---------------------------------------

PAPER_CHUNKERS = [
    "fixed_2000_o500",
    "fixed_2000_o0",
    "fixed_500_o125",
    "fixed_500_o0",
    "recursive_2000",
    "recursive_500",
]
STAND_INS = {  # in place of semantic_minilm and semantic_mpnet
    "fixed_1000_o0": {
        "_target_": "hope.chunking.FixedSizeChunker",
        "chunk_size": 1000,
        "chunk_overlap": 0,
        "strip_whitespace": False,
    },
    "recursive_1000": {
        "_target_": "hope.chunking.RecursiveChunker",
        "chunk_size": 1000,
        "chunk_overlap": 0,
        "separators": ["\n\n", "\n", " ", ""],
        "strip_whitespace": True,
    },
}


def chunkers() -> list[Any]:
    """The paper's six fixed-size and recursive chunkers and the two semantic stand-ins."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from hope.chunking.registry import Chunker, load_chunkers

    found = load_chunkers(PAPER_CHUNKERS, REPO / "conf" / "chunker")
    for name, config in STAND_INS.items():
        fn = instantiate(OmegaConf.create(config), _convert_="all")
        found.append(Chunker(name=name, fn=fn, config={"name": name, **config}))
    return found


def mirror_documents(work_dir: Path) -> Path:
    """The mirror prepared as the pipeline prepares it (``experiment=mirror``), once."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from hope.pipeline.config_schema import validate_run_config
    from hope.pipeline.run import locate_documents

    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=mirror"])
    # locate_documents takes the validated config, as hope-run passes it.
    config = validate_run_config(OmegaConf.to_container(cfg, resolve=True))
    path, _ = locate_documents(config, work_dir)
    return path


def select(documents_path: Path, n: int, seed: int = 15) -> list[dict[str, Any]]:
    """The first ``n`` documents of a seeded shuffle: each size contains the smaller ones."""
    from hope.core.io import read_jsonl

    documents = read_jsonl(documents_path, "documents file")
    if n > len(documents):
        raise ValueError(f"{n} documents asked, the mirror has {len(documents)}")
    order = sorted(documents, key=lambda d: d["doc_id"])
    random.Random(seed).shuffle(order)
    return order[:n]


class RssSampler:
    """Resident memory of this process every 50 ms while the scoring runs (``ru_maxrss`` alone
    would also count the imports and the chunking before it)."""

    def __init__(self, interval_s: float = 0.05):
        import threading

        self.interval_s = interval_s
        self.first_mib = self.peak_mib = self._rss_mib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _rss_mib() -> float:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak_mib = max(self.peak_mib, self._rss_mib())

    def start(self) -> RssSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mib = max(self.peak_mib, self._rss_mib())


# --- the validity benchmark's documents, ladders and controls ----------------------------------

CANDIDATES = 200  # documents drawn per domain (seeded order) before the length filter
METRICS = ("hope", "concept_unity", "semantic_independence", "information_preservation")
# Sized for 2 shared CPU cores and SmolLM2-135M (3-10 s a request); stated in the JSON.
REDUCED = [
    "hope.progress=false",
    "hope.focus_passages=1",
    "hope.concept_unity.n_items=3",
    "hope.semantic_independence.n_questions=1",
    "hope.information_preservation.n_segments=4",
]


def names(value: str) -> list[str]:
    """A comma-separated command-line list (an ``argparse`` type)."""
    return [v for v in value.split(",") if v]


def load_documents(domains: list[str], per_domain: int, max_chars: int, seed: int, scratch: Path):
    """``per_domain`` documents of each domain from the mirror, cut to whole paragraphs within
    ``max_chars``, keeping only those with at least 3 aligned passages; interleaved by domain."""
    from hope.corpora import get_adapter
    from hope.corpora.corpus_config import load_params, resolve_source
    from hope.pipeline.download_step import run_download
    from hope.pipeline.prepare_step import select_documents
    from hope.validity.ladder import aligned_passages, truncate_to_paragraphs

    cfg = load_params(REPO / "params.yaml")
    cfg["profile"] = "mirror"
    by_domain: dict[str, list[dict[str, Any]]] = {}
    for domain in domains:
        manifest = run_download(cfg, domain, scratch / domain)
        spec = resolve_source(cfg, domain)
        items = get_adapter(spec.adapter).candidates(spec, scratch / domain, manifest)
        docs, _ = select_documents(
            spec, items, count=CANDIDATES, seed=seed, min_chars=500, strict=False, seen={}
        )
        chosen = []
        for doc in docs:
            text = truncate_to_paragraphs(doc.text, max_chars)
            if len(aligned_passages(text)) >= 3:
                chosen.append(
                    {
                        "doc_id": doc.doc_id,
                        "domain": domain,
                        "title": doc.title,
                        "text": text,
                        "n_chars_full": doc.n_chars,
                    }
                )
            if len(chosen) == per_domain:
                break
        if len(chosen) < per_domain:
            raise SystemExit(
                f"{domain}: {len(chosen)} documents with 3 or more aligned passages within "
                f"{max_chars} characters, {per_domain} wanted"
            )
        by_domain[domain] = chosen
    return [doc for group in zip(*by_domain.values(), strict=True) for doc in group]


def build_ladders(docs: list[dict[str, Any]], seed: int) -> list[dict[str, list[str]]]:
    """Each document's quality ladder; its foreign passages come from the next document in the
    list, which the interleaving by domain makes another domain's."""
    from hope.chunking.registry import load_chunker
    from hope.validity.ladder import build_ladder

    recursive = load_chunker("recursive_500", REPO / "conf" / "chunker")
    return [
        build_ladder(
            doc["text"],
            docs[(i + 1) % len(docs)]["text"],
            recursive=lambda t, d=doc: [p.text for p in recursive.chunk(t, d["doc_id"])],
            seed=seed,
        )
        for i, doc in enumerate(docs)
    ]


async def controls(ip: Any, document: str) -> dict[str, Any]:
    """ζ_inf's two controls on the document's own quadruples (shared with scoring by the cache):
    ``ip`` an ``InformationPreservation``."""
    from hope.models.llm import LLMCallError

    out: dict[str, Any] = {"oracle": [], "no_context": [], "failed": []}
    for segment in ip.segments(document):
        try:
            quad = await ip.quadruple(document, segment)
            out["oracle"].append(await ip.judge(quad, [segment.text]))
            out["no_context"].append(await ip.judge(quad, []))
        except LLMCallError as exc:
            out["failed"].append({"draw": segment.draw, "reason": exc.reason})
    return out


# --- the embedded llama.cpp server, asked directly ---------------------------------------------

CHOICE_PROBS_RESULT = REPO / "bench/results/choice_probs.json"


class Server:
    """The embedded llama.cpp server (one slot), asked with a JSON schema and any extra fields
    (``logprobs``); counts its requests."""

    def __init__(self, gguf: str | None):
        import httpx

        from hope.models.embedded_server import EmbeddedServer

        self.embedded = EmbeddedServer(
            gguf, n_parallel=1, ctx_per_slot=8192, n_threads=1, n_threads_batch=2
        )
        self.base = self.embedded.ensure_started()
        self.client = httpx.Client(timeout=600)
        self.requests = 0

    def chat(self, messages, model, seed: int, **extra) -> dict[str, Any]:
        body = {
            "model": "embedded",
            "messages": messages,
            "temperature": 0.0,
            "seed": seed,
            "dry_multiplier": 0.8,
            "max_tokens": 512,
            "cache_prompt": False,
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": model.__name__,
                    "schema": model.model_json_schema(),
                    "strict": True,
                },
            },
            **extra,
        }
        self.requests += 1
        response = self.client.post(f"{self.base}/chat/completions", json=body)
        response.raise_for_status()
        return response.json()["choices"][0]


# --- the RAG stages' config --------------------------------------------------------------------


def rag_config(params: Path, overrides: Mapping[str, Any] | None = None):
    """``(config, corpora profile)`` as the stages read them (``load_rag_config``), with
    ``overrides`` merged in and the result validated again."""
    from omegaconf import OmegaConf

    from hope.core.hope_settings import validated
    from hope.rag.rag_config import RagConfig, load_rag_config

    config, profile = load_rag_config(params)
    if overrides:
        merged = OmegaConf.merge(config.model_dump(mode="json"), dict(overrides))
        merged = OmegaConf.to_container(merged)
        config = validated(RagConfig, merged, f"params file {params}", "rag")
    return config, profile
