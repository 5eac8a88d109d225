"""LLM calls as MLflow traces, sampled: open a surprising score and read the calls behind it.

``TraceRecorder`` is a ``ChatLLM.on_call`` observer. It keeps the calls whose request hash falls in
the sampled share (``tracking.trace_share``: 1.0 records every call, the default for the sample
experiment; the paper experiment records a small share), at most ``tracking.trace_limit`` of them.
The choice depends on the request alone (its cache key), so that the same calls are sampled in
every rerun, and it draws no random number the scores could depend on.

``log_traces`` writes them after the run exists: one trace per call (span type ``LLM``) with the
prompt messages as inputs, the raw answer as output, and the seed, latency, cache hit, attempts and
prompt id as attributes, tagged with the prompt and with what the call was for (``hope.chunker``,
``hope.doc_id``, ``hope.domain``, ``hope.metric``: the ``call_labels`` the scoring set), and linked
(trace metadata ``mlflow.sourceRun``) to the chunker run whose evaluation made it, else to the
parent run (tag ``hope.parent_run``: the parent either way). The secret values of the environment
are scrubbed from all of it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from hope.tracking.secrets import scrub, secret_values

log = logging.getLogger(__name__)
_GLOBAL_URI_LOCK = threading.Lock()


def sampled(key: str, share: float) -> bool:
    """Whether the request ``key`` is in the sampled ``share`` (deterministic in the key)."""
    if share >= 1.0:
        return True
    if share <= 0.0:
        return False
    fraction = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16) / 16**12
    return fraction < share


class TraceRecorder:
    """Keeps the sampled calls (``ChatLLM.on_call``); thread-safe, bounded by ``limit``."""

    def __init__(self, share: float = 1.0, limit: int | None = None):
        if not 0.0 <= float(share) <= 1.0:
            raise ValueError(f"tracking.trace_share must be in [0, 1], got {share!r}")
        if limit is not None and int(limit) < 0:
            raise ValueError(f"tracking.trace_limit must be >= 0 or null, got {limit!r}")
        self.share = float(share)
        self.limit = None if limit is None else int(limit)
        self.calls: list[Any] = []
        self.seen = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def __call__(self, call: Any) -> None:
        with self._lock:
            self.seen += 1
            if not sampled(call.key, self.share):
                return
            if self.limit is not None and len(self.calls) >= self.limit:
                self.dropped += 1
                return
            self.calls.append(call)


@contextmanager
def _tracking_uri(uri: str):
    """MLflow's trace export goes to the process-global tracking URI: point it at ``uri`` for the
    duration (under a lock), then restore it."""
    import mlflow

    with _GLOBAL_URI_LOCK:
        previous = mlflow.get_tracking_uri()
        mlflow.set_tracking_uri(uri)
        try:
            yield
        finally:
            mlflow.flush_trace_async_logging()
            mlflow.set_tracking_uri(previous)


def log_traces(
    client: Any,
    uri: str,
    experiment_id: str,
    run_id: str,
    calls: Sequence[Any],
    *,
    chunker_runs: Mapping[str, str] | None = None,
) -> int:
    """Write ``calls`` (``LLMCall``) as traces of the parent run ``run_id``, each linked to its
    chunker's run (``chunker_runs``: chunker -> run id) where it has one; returns how many."""
    if not calls:
        return 0
    secrets = secret_values()

    def clean(text: Any) -> Any:
        return scrub(text, secrets) if isinstance(text, str) else text

    with _tracking_uri(uri):
        for call in calls:
            inputs = {
                "messages": [
                    {"role": m.get("role"), "content": clean(m.get("content"))}
                    for m in call.messages
                ]
            }
            attributes = {
                "hope.prompt_id": call.prompt_id,
                "hope.seed": call.seed,
                "hope.temperature": call.temperature,
                "hope.latency_s": round(float(call.latency_s), 6),
                "hope.cache_hit": bool(call.cached),
                "hope.attempts": int(call.attempts),
                "hope.request_key": call.key,
            }
            labels = dict(getattr(call, "labels", None) or {})
            tags = {"hope.prompt": str(call.prompt_id), "hope.parent_run": run_id}
            tags.update({f"hope.{k}": clean(str(v)) for k, v in sorted(labels.items())})
            source_run = (chunker_runs or {}).get(labels.get("chunker", ""), run_id)
            span = client.start_trace(
                name=str(call.prompt_id).split("@")[0] or "llm",
                span_type="LLM",
                inputs=inputs,
                attributes=attributes,
                tags=tags,
                experiment_id=experiment_id,
                start_time_ns=int(call.started_ns),
                run_id=source_run,
            )
            end_ns = int(call.started_ns + max(call.latency_s, 0.0) * 1e9)
            client.end_trace(
                span.trace_id,
                outputs={"response": clean(call.response)}
                if call.error is None
                else {"error": clean(call.error)},
                status="OK" if call.error is None else "ERROR",
                end_time_ns=max(end_ns, int(call.started_ns) + 1),
            )
    log.info("%d LLM call traces logged to run %s", len(calls), run_id)
    return len(calls)
