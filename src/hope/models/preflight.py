"""Preflight: before the first request a run actually sends to a backend, one cheap request checks
that the backend can answer at all.

The LLM gets a one-token chat completion (``LazyOpenAIClient.preflight``), a remote embedder one
short text (``OpenAIEmbedder.preflight``), each with at most two retries. Connection refused, DNS
failure, 401, 403, 404 (and, for the preflight only, 5xx or timeouts past those retries) raise
``hope.models.model_errors.BackendError``, whose message names the base URL and the model (never
the key); ``hope score``, ``hope-run`` and the DVC stages turn it into exit status
``BACKEND_EXIT_CODE`` with nothing written. The check is lazy: a fully cached run sends nothing,
not even the preflight, so it still runs with the backend offline. ``HOPE_PREFLIGHT=0`` skips it.
Preflight requests carry the header ``X-Hope-Preflight: 1`` (the simulated server counts them
apart).
"""

from __future__ import annotations

import os

# The exit status of a run stopped by a backend that cannot answer (2: bad input or config).
BACKEND_EXIT_CODE = 3
PREFLIGHT_HEADER = "X-Hope-Preflight"


def preflight_enabled() -> bool:
    return os.environ.get("HOPE_PREFLIGHT", "1").strip().lower() not in {"0", "false", "no", "off"}
