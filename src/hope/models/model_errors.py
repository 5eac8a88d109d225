"""What a failed request to a model backend means, in one place: the errors the model clients
raise, ``classify_error`` (fatal for the backend, transient, or bound to the request's content),
and the redaction of secrets from the messages. Imported by the OpenAI client, the server pool and
``ChatLLM``, and by nothing they import, so the three never import each other in a circle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

import openai


class MissingEndpointError(ValueError):
    """No base URL or no API key: nothing to send the request to."""


# --- what a failed request means ----------------------------------------------------------------

ErrorKind = Literal["fatal", "transient", "content"]
# The backend cannot answer any request: wrong key (401), no permission (403), no such model or
# route (404), proxy authentication (407). Never a property of the request's content.
FATAL_STATUS = frozenset({401, 403, 404, 407})
# May pass on a later attempt (the openai client retries them, as it does 5xx).
TRANSIENT_STATUS = frozenset({408, 409, 425, 429})


def classify_error(exc: BaseException) -> ErrorKind:
    """Whether a request's failure (after the client's retries) is *fatal* for the backend (stop
    the run, cache nothing), *transient* (this item fails, nothing cached, a rerun asks again) or
    *content*-bound (the request itself is the problem, e.g. a prompt longer than the context:
    asking again gives the same answer, so the failure may be cached).

    Fatal: no endpoint or key configured, a connection that cannot be made (refused, DNS failure,
    reset) and HTTP 401, 403, 404, 407. Transient: timeouts, 408, 409, 425, 429, 5xx. Content:
    any other HTTP status (400, 413, 422...) and anything else raised while sending.
    """
    if isinstance(exc, BackendError | MissingEndpointError):
        return "fatal"
    if isinstance(exc, openai.APITimeoutError):
        return "transient"
    if isinstance(exc, openai.APIConnectionError):
        return "fatal"
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status in FATAL_STATUS:
            return "fatal"
        if status in TRANSIENT_STATUS or status >= 500:
            return "transient"
        return "content"
    return "content"


_KEY_LIKE = re.compile(r"\b(sk|pk|rk|hf|gsk|key)[-_][A-Za-z0-9*._-]{4,}", re.IGNORECASE)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the given secrets and without anything shaped like an API key
    (``sk-...``; servers echo a wrong key, partly masked, in their 401 message)."""
    for secret in secrets:
        if secret and secret != "not-needed" and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _KEY_LIKE.sub("[redacted]", text)


class BackendError(RuntimeError):
    """The backend at ``base_url`` cannot serve ``model`` (see ``classify_error``): the run stops.
    The message names both, never the API key."""

    def __init__(self, what: str, base_url: str | None, model: str, reason: str):
        self.what = what
        self.base_url = base_url
        self.model = model
        self.reason = reason
        super().__init__(
            f"{what} backend {base_url or '(no base_url)'} (model {model!r}) is unusable: {reason}"
        )


def backend_error_in(exc: BaseException | None) -> BackendError | None:
    """The BackendError behind ``exc`` (itself, or in its chain of causes), if any: libraries
    such as instructor and ragas wrap the errors of the client they call."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, BackendError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def error_reason(exc: BaseException, limit: int = 300) -> str:
    """A one-line description of a failed request: status or exception type, then the message."""
    status = getattr(exc, "status_code", None)
    head = f"HTTP {status}" if status is not None else type(exc).__name__
    text = " ".join(str(exc).split())
    cause = exc.__cause__ or exc.__context__
    if cause is not None and type(exc).__name__ == "APIConnectionError":
        text = f"{text} ({type(cause).__name__}: {' '.join(str(cause).split())})"
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"{head}: {text}"
