"""Batch engines: pending LLM requests out as OpenAI batch JSONL, result files back into the cache.

The paper's experiment is ~684 k requests; OpenAI's Batch API or ``vllm run-batch`` on a cluster
answer such a volume cheaply, but they answer a file, not a conversation. HOPE's requests come in
rounds: statements, questions and quadruples need only the document and passages; answers and
choices need those answers first. So:

* ``export_round`` runs the real evaluator over every (document, chunker) pair against
  ``BatchExportLLM``, a ``DryRunLLM`` that answers from the response cache and, for a request not
  in it, writes the exact body ``ChatLLM`` would send (``custom_id`` = its cache key) and returns a
  placeholder answer marked ``PENDING``. A request whose prompt contains the marker depends on an
  answer not yet imported: it is counted as *waiting*, never exported. The round's files are
  ``requests-0001.jsonl`` ... (at most ``max_per_file`` lines each, OpenAI's limit is 50,000),
  ``manifest.jsonl`` (per request: attempt, seed, temperature, schema) and ``summary.json``.
* ``import_results`` reads output files (OpenAI batch output and ``vllm run-batch`` output share
  the envelope ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``)
  and stores each answer under its cache key exactly as ``ChatLLM`` stores a live one. A line is
  accepted when its ``custom_id`` is in the round's manifest, its status is 200 and its content is
  JSON valid under the request's schema; anything else is counted by reason and left out of the
  cache, so the next export asks again. An answer that is not valid is ``ChatLLM``'s "invalid
  response": the next round asks with the derived seed (and retry temperature) the live client
  would use, and after ``llm.max_retries`` such answers the failure is cached as the live client
  caches it.

Export, answer, import, export again ... until a round is empty; the scoring (``hope score``, the
pipeline) then completes from the cache without sending a request. Answers are the same as a
live run's as long as the engine answers a request as the live server would (same model, seed).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hope.core.io import iter_json_objects, write_json_atomic
from hope.core.model_interface import placeholder_answers
from hope.core.response_cache import ResponseCache
from hope.models.dry_run_llm import DryRunLLM, RecordedRequest, synthetic_answer
from hope.models.llm import (
    CACHE_NAMESPACE,
    ChatLLM,
    LLMCallError,
    StructuredResponse,
    attempt_seed,
    attempt_temperature,
    chat_request,
    response_format,
    schema_digest,
)

# Marks every string of a placeholder answer; a prompt that contains it waits for a later round.
PENDING = "\u27e6pending\u27e7"
# Per cache key: how many invalid answers the batch engine gave so far ({"invalid": n}).
BATCH_NAMESPACE = "batch"
CHAT_URL = "/v1/chat/completions"
MANIFEST = "manifest.jsonl"
SCHEMAS = "schemas.json"
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


class BatchFileError(ValueError):
    """A batch file that cannot be read as what it claims to be."""


def _mark(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """``value`` (an instance of ``schema``) with ``PENDING`` before each free-text string."""
    root = root or schema
    if "$ref" in schema:
        return _mark(value, root["$defs"][schema["$ref"].split("/")[-1]], root)
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _mark(v, props.get(k, {}), root) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark(v, schema.get("items", {}), root) for v in value]
    if isinstance(value, str) and "enum" not in schema and "const" not in schema:
        text = f"{PENDING} {value}"
        return text[: int(schema.get("maxLength", len(text)))]
    return value


@dataclass
class RoundFiles:
    """Streams a round's request lines into numbered files, then renames them into place."""

    directory: Path
    max_per_file: int
    written: int = 0
    files: list[str] = field(default_factory=list)
    _handle: Any = None
    _manifest: Any = None
    _schemas: dict[str, Any] = field(default_factory=dict)
    _in_file: int = 0

    def __post_init__(self) -> None:
        if self.max_per_file < 1:
            raise ValueError(f"max_per_file must be at least 1, got {self.max_per_file}")
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in [*self.directory.glob("requests-*.jsonl"), self.directory / MANIFEST]:
            stale.unlink(missing_ok=True)  # a previous export into the same folder
        self._manifest = (self.directory / f".{MANIFEST}.tmp").open("w", encoding="utf-8")

    def add(self, key: str, body: dict[str, Any], entry: dict[str, Any]) -> None:
        if self._handle is None or self._in_file >= self.max_per_file:
            self._close_part()
            self.files.append(f"requests-{len(self.files) + 1:04d}.jsonl")
            self._handle = (self.directory / f".{self.files[-1]}.tmp").open("w", encoding="utf-8")
            self._in_file = 0
        line = {"custom_id": key, "method": "POST", "url": CHAT_URL, "body": body}
        self._handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._schemas.setdefault(entry["schema"], body["response_format"]["json_schema"]["schema"])
        self._manifest.write(json.dumps({"custom_id": key, "file": self.files[-1], **entry}) + "\n")
        self._in_file += 1
        self.written += 1

    def _close_part(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def finish(self) -> None:
        self._close_part()
        self._manifest.close()
        for name in self.files:
            (self.directory / f".{name}.tmp").replace(self.directory / name)
        (self.directory / f".{MANIFEST}.tmp").replace(self.directory / MANIFEST)
        write_json_atomic(self.directory / SCHEMAS, self._schemas)

    def abort(self) -> None:
        self._close_part()
        self._manifest.close()
        for tmp in self.directory.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)


class BatchExportLLM(DryRunLLM):
    """``ChatLLM.structured`` over ``real``'s cache that never sends: a request not answered in
    the cache goes to ``files`` (once per key) when its inputs are known, and gets a placeholder."""

    def __init__(self, real: ChatLLM, files: RoundFiles, chars_per_token: float = 4.0):
        super().__init__(real, chars_per_token)
        if real._cache is None:
            raise ValueError("batch export needs the LLM's response cache (cache is None)")
        self.cache: ResponseCache = real._cache
        self.files = files
        self.exported: set[str] = set()
        self.waiting: set[str] = set()
        self.exported_kinds: Counter[str] = Counter()
        self.failed: set[str] = set()

    async def structured(self, **request: Any) -> StructuredResponse:
        key = self.real.request_key(request)
        messages, model = request["messages"], request["response_model"]
        validate, seed = request.get("validate"), request.get("seed")
        temperature = request["temperature"]
        record = RecordedRequest(request["schema_name"], key, True, 0, 0)
        self.requests.append(record)
        waiting = any(PENDING in m["content"] for m in messages)
        try:
            hit = None if waiting else self.real.lookup(key, model, validate)
        except LLMCallError:
            self.failed.add(key)
            raise
        if hit is not None:
            return hit
        record.cached = False
        if waiting:
            self.waiting.add(key)
        elif key not in self.exported:
            retry_temperatures = request.get("invalid_retry_temperatures")
            attempt = self._attempt(key, seed, temperature, retry_temperatures)
            call_seed = attempt_seed(seed, attempt)
            call_temperature = attempt_temperature(temperature, retry_temperatures, attempt)
            fmt = response_format(request["schema_name"], model, self.settings.strict_schema)
            body = chat_request(
                self.settings, messages, fmt, call_temperature, call_seed, request.get("max_tokens")
            )
            # The JSON ChatLLM POSTs: extra_body merged in, as LazyOpenAIClient.post_chat does.
            body.update(body.pop("extra_body", {}))
            entry = {
                "attempt": attempt,
                "seed": call_seed,
                "temperature": call_temperature,
                "schema": schema_digest(model),
                "kind": request["schema_name"],
            }
            self.files.add(key, body, entry)
            self.exported.add(key)
            self.exported_kinds[request["schema_name"]] += 1
        if (placeholders := placeholder_answers.get()) is not None:
            placeholders.append(key)
        # A schema-valid placeholder whose every string carries PENDING.
        value, raw = synthetic_answer(
            model, messages, seed, validate, words=_WORD.findall, mark=_mark, purpose="batch export"
        )
        return StructuredResponse(value, raw, False, 0, seed, temperature)

    def _attempt(
        self,
        key: str,
        seed: int | None,
        temperature: float,
        retry_temperatures: Sequence[float] | None,
    ) -> int:
        """Which attempt the next request of ``key`` is; raise the cached failure past the last.

        A cached answer that ``lookup`` rejected (its pydantic model or ``validate`` refused it)
        was the answer to the current attempt: as ``ChatLLM`` would, ask the next one.
        """
        attempt = int((self.cache.get_json(BATCH_NAMESPACE, key) or {}).get("invalid", 0))
        entry = self.cache.get_json(CACHE_NAMESPACE, key)
        if (
            entry is not None
            and "content" in entry
            and entry.get("seed") == attempt_seed(seed, attempt)
            and entry.get("temperature")
            == attempt_temperature(temperature, retry_temperatures, attempt)
        ):
            attempt += 1
            self.cache.put_json(BATCH_NAMESPACE, key, {"invalid": attempt})
        max_retries = self.real.settings.max_retries
        if attempt > max_retries:
            final = f"invalid response: batch answers failed validation (after {attempt} attempts)"
            self.cache.put_json(CACHE_NAMESPACE, key, {"error": final})
            self.failed.add(key)
            raise LLMCallError(final, attempts=attempt)
        return attempt


@dataclass
class RoundSummary:
    directory: str
    files: list[str]
    exported: int
    exported_by_kind: dict[str, int]
    waiting: int  # distinct requests whose inputs wait for an answer of this round
    cached: int  # distinct requests answered in the cache
    failed: int  # distinct requests whose failure is cached
    pairs: int

    @property
    def done(self) -> bool:
        return self.exported == 0 and self.waiting == 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "done": self.done}


def export_round(
    documents: Sequence[Mapping[str, Any]],
    passages: Sequence[Mapping[str, Any]],
    llm: ChatLLM,
    embedder: Any,
    settings: Any,
    directory: str | Path,
    *,
    max_per_file: int = 50_000,
) -> RoundSummary:
    """Write the requests of the next round for every (document, chunker) pair to ``directory``.

    ``documents`` and ``passages`` are pipeline records (``hope.core.stage_records``). ``embedder``
    should
    not write to the response cache: placeholder texts get embedded too.
    """
    from hope.core.evaluator import HopeEvaluator
    from hope.pipeline.score_step import score_pairs

    directory = Path(directory)
    files = RoundFiles(directory, max_per_file)
    exporter = BatchExportLLM(llm, files)
    quiet = settings.model_copy(update={"progress": False})
    try:
        # Placeholder results are of no use: keep nothing of a pair but its having finished.
        scored = asyncio.run(
            score_pairs(
                HopeEvaluator(exporter, embedder, quiet),
                documents,
                passages,
                progress=False,
                on_result=lambda *_: None,
            )
        )
    except BaseException:
        files.abort()
        raise
    files.finish()
    keys = {r.key for r in exporter.requests}
    cached = {r.key for r in exporter.requests if r.cached} - exporter.failed
    summary = RoundSummary(
        directory=str(directory),
        files=files.files,
        exported=files.written,
        exported_by_kind=dict(sorted(exporter.exported_kinds.items())),
        waiting=len(exporter.waiting),
        cached=len(cached),
        failed=len(exporter.failed & keys),
        pairs=len(scored),
    )
    write_json_atomic(directory / "summary.json", summary.to_dict())
    return summary


# --- import ------------------------------------------------------------------------------------


@dataclass
class ImportSummary:
    lines: int = 0
    imported: int = 0
    invalid: int = 0  # answered, but not valid under the schema: the next round asks again
    errors: dict[str, int] = field(default_factory=dict)  # not imported, by reason
    failures_cached: int = 0  # invalid past llm.max_retries: cached as failed, as ChatLLM does
    examples: list[str] = field(default_factory=list)

    def error(self, reason: str, detail: str) -> None:
        self.errors[reason] = self.errors.get(reason, 0) + 1
        if len(self.examples) < 10:
            self.examples.append(detail)

    @property
    def rejected(self) -> int:
        return sum(self.errors.values()) + self.invalid

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rejected": self.rejected}


def read_manifest(directory: str | Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The round's requests by custom_id, and its schemas by digest."""
    directory = Path(directory)
    manifest_path, schemas_path = directory / MANIFEST, directory / SCHEMAS
    for path in (manifest_path, schemas_path):
        if not path.is_file():
            raise BatchFileError(f"{path}: not found; is {directory} a `hope batch export` folder?")
    entries = {
        record["custom_id"]: record
        for _, record in iter_json_objects(manifest_path, "batch manifest")
    }
    schemas = json.loads(schemas_path.read_text(encoding="utf-8"))
    return entries, schemas


def _content(body: Any) -> str:
    """The answer text of a chat completion body; ValueError says why there is none."""
    if not isinstance(body, Mapping):
        raise ValueError("response has no body")
    choices = body.get("choices") or []
    if not choices:
        raise ValueError("no choices in response")
    choice = choices[0]
    content = (choice.get("message") or {}).get("content")
    if not content:
        raise ValueError("empty message content")
    if choice.get("finish_reason") == "length":
        raise ValueError("answer cut off at max_tokens")
    return content


def import_results(
    cache: ResponseCache,
    round_dir: str | Path,
    results: Iterable[str | Path],
    *,
    max_retries: int,
) -> ImportSummary:
    """Store the valid answers of batch output files (OpenAI or vLLM) in the response cache."""
    import jsonschema

    entries, schemas = read_manifest(round_dir)
    validators = {d: jsonschema.Draft202012Validator(s) for d, s in schemas.items()}
    summary = ImportSummary()
    seen: set[str] = set()
    for path in results:
        for where, record in iter_json_objects(path, "batch output"):
            summary.lines += 1
            custom_id = record.get("custom_id")
            entry = entries.get(custom_id) if isinstance(custom_id, str) else None
            if entry is None:
                summary.error("unknown custom_id", f"{where}: custom_id {custom_id!r}")
                continue
            if custom_id in seen:
                summary.error("duplicate custom_id", f"{where}: {custom_id} answered twice")
                continue
            seen.add(custom_id)
            response = record.get("response") or {}
            status = response.get("status_code")
            if record.get("error") or status != 200:
                message = record.get("error") or (response.get("body") or {}).get("error")
                summary.error(f"status {status}", f"{where}: status {status}: {message}")
                continue
            try:
                content = _content(response.get("body"))
                validators[entry["schema"]].validate(json.loads(content))
            except (ValueError, jsonschema.ValidationError) as exc:
                summary.invalid += 1
                if len(summary.examples) < 10:
                    summary.examples.append(f"{where}: invalid answer: {str(exc)[:200]}")
                attempt = int(entry["attempt"]) + 1
                state = cache.get_json(BATCH_NAMESPACE, custom_id) or {}
                if int(state.get("invalid", 0)) < attempt:
                    cache.put_json(BATCH_NAMESPACE, custom_id, {"invalid": attempt})
                if attempt > max_retries:
                    reason = " ".join(str(exc).split())[:300]
                    final = f"invalid response: {reason} (after {attempt} attempts)"
                    cache.put_json(CACHE_NAMESPACE, custom_id, {"error": final})
                    summary.failures_cached += 1
                continue
            stored = {
                "content": content,
                "seed": entry["seed"],
                "temperature": entry["temperature"],
            }
            fingerprint = response["body"].get("system_fingerprint")
            if isinstance(fingerprint, str) and fingerprint:
                stored["fingerprint"] = fingerprint  # as the live client keeps it (ChatLLM)
            cache.put_json(CACHE_NAMESPACE, custom_id, stored)
            summary.imported += 1
    return summary


class ReadOnlyCache:
    """The reads of a ``ResponseCache`` without its writes: the export's embedder reuses cached
    vectors but keeps those of placeholder texts in its own memory only."""

    def __init__(self, cache: ResponseCache):
        self._cache = cache

    def get_many(self, namespace: str, keys: list[str]) -> dict[str, bytes]:
        return self._cache.get_many(namespace, keys)

    def get(self, namespace: str, key: str) -> bytes | None:
        return self._cache.get(namespace, key)

    def put(self, namespace: str, key: str, value: bytes) -> None:
        """Nothing is written."""
