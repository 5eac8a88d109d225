"""What the DVC stages (``hope.stages.*``) share, so that no stage imports another: the paths
they hand each other, parsers, checked reading, and ``run_stage``, every stage's ``main``."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hope.core.io import json_text, read_jsonl, without_run_timings, write_atomic
from hope.core.response_cache import ResponseCache

# The files one stage writes and the next reads (dvc.yaml names the same paths).
DEFAULT_DOCUMENTS = Path("data/prepared/documents.jsonl")
DEFAULT_PASSAGES = Path("data/chunks/passages.jsonl")
DEFAULT_QUESTIONS = Path("data/questions/questions.jsonl")
DEFAULT_ANSWERS = Path("data/rag/answers.jsonl")

if TYPE_CHECKING:
    from hope.rag.clients import CachingChatClient
    from hope.rag.rag_config import ModelEndpoint, RagConfig


def stage_parser(doc: str, **paths: Path) -> argparse.ArgumentParser:
    """A parser described by the first paragraph of ``doc`` with one ``--<name>`` path option
    per keyword (``out_dir`` becomes ``--out-dir``), defaulting to its value."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    for name, default in paths.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=Path, default=default)
    return parser


def read_records(
    path: Path,
    what: str,
    check: Callable[[list[dict[str, Any]], str], None] | None = None,
    *,
    required: bool = True,
) -> list[dict[str, Any]]:
    """The records of a JSON-lines input, checked with ``check``; ``required``: none is an error."""
    records = read_jsonl(path, f"{what} file")
    if required and not records:
        raise ValueError(f"{what} file {path}: no {what}")
    if check is not None:
        check(records, str(path))
    return records


@dataclass
class StageOutput:
    """What a stage computed: files to write (text or text pieces), the line to print, and a
    summary that gets the wall time and goes to ``summary.json`` beside the first file."""

    files: Mapping[Path, str | Iterable[str]]
    message: str
    summary: dict[str, Any] | None = None


def run_stage(
    name: str,
    compute: Callable[[], StageOutput],
    errors: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError),
) -> int:
    """A stage's ``main``: a bad input (one of ``errors``) is one line on stderr and exit 1 with
    nothing written; otherwise every file is written atomically and the message printed."""
    from hope.models.model_errors import BackendError
    from hope.models.preflight import BACKEND_EXIT_CODE

    started = time.perf_counter()
    try:
        result = compute()
    except BackendError as exc:  # a backend that cannot answer: nothing written
        print(f"{name}: error: {exc}", file=sys.stderr)
        return BACKEND_EXIT_CODE
    except errors as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 1
    for path, content in result.files.items():
        write_atomic(path, content)
    if result.summary is not None:
        # The wall time goes to the log, not into the DVC output (hope.core.io.RUN_DEPENDENT_KEYS).
        summary = without_run_timings(result.summary)
        write_atomic(next(iter(result.files)).parent / "summary.json", json_text(summary))
    wall_s = time.perf_counter() - started
    print(f"{name}: {result.message} ({wall_s:.1f} s)", file=sys.stderr)
    return 0


# --- the RAG stages (questions, rag, ragas) ------------------------------------------------------


def run_rag_stage(
    name: str,
    doc: str,
    argv: Sequence[str] | None,
    paths: Mapping[str, Path],
    compute: Callable[[argparse.Namespace, RagConfig, str, ResponseCache], StageOutput],
    errors: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError),
) -> int:
    """A RAG stage's ``main``: options ``paths`` and the shared ones (params, response cache,
    progress), then ``compute(args, config, profile, cache)`` under run_stage."""
    from hope.models.factory import open_cache
    from hope.rag.rag_config import load_rag_config

    parser = stage_parser(doc, **paths)
    parser.add_argument(
        "--params",
        type=Path,
        default=Path("params.yaml"),
        help="its 'rag' section (composed by Hydra, see conf/dvc_params.yaml) and corpora.profile",
    )
    parser.add_argument(
        "--cache", help="response cache file (default $HOPE_CACHE or .cache/hope/cache.sqlite)"
    )
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    def run() -> StageOutput:
        config, profile = load_rag_config(args.params)
        return compute(args, config, profile, open_cache(args.cache))

    return run_stage(name, run, errors)


def ragas_models(
    config: RagConfig,
    endpoint: ModelEndpoint,
    cache: ResponseCache | None,
    *,
    purpose: str,
    client: Any | None = None,
    embedder: Any | None = None,
) -> tuple[Any, CachingChatClient, Any]:
    """``(ragas LLM, its caching client, ragas embeddings)`` for ``endpoint``; ``client`` replaces
    the LLM's transport and ``embedder`` the configured embedder (tests)."""
    from hope.rag import rag_models as models

    temperature = config.ragas.temperature
    llm, caching = models.judge_llm(
        config, endpoint, cache, purpose=purpose, temperature=temperature, client=client
    )
    embeddings = models.ragas_embeddings(embedder or models.build_embedder(config, cache))
    return llm, caching, embeddings
