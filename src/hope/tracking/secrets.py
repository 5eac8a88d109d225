"""Secrets never reach the tracking store: config keys that hold one, and values of secret-looking
environment variables wherever they turn up (a config value resolved from ``${oc.env:...}``, an
error message, an artifact)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

REDACTED = "***REDACTED***"
# A config key whose last part is one of these holds a secret. `api_key_env` (the *name* of the
# variable holding a key) and counters such as `max_tokens` do not match.
_SECRET_KEY = re.compile(
    r"(?:^|[_.\-])(?:api_?key|token|access_token|password|passwd|secret|client_secret|"
    r"credentials?|authorization|auth)$",
    re.IGNORECASE,
)
_SECRET_ENV = re.compile(r"(?:KEY|TOKEN|PASSWORD|PASSWD|SECRET|CREDENTIALS?)(?:_|$)", re.IGNORECASE)
# A Hydra override: optional +/++/~ prefix, a dotted key, `=`, the value.
_OVERRIDE = re.compile(r"^(?P<key>[+~]{0,2}[A-Za-z_][\w.@/\-]*)=(?P<value>.*)$", re.DOTALL)
_MIN_SECRET_CHARS = 6  # shorter values ("1", "yes") would redact ordinary config values


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking environment variables, longest first (for substring scrubbing)."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_ENV.search(k) and len(v) >= _MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(str(key)))


def scrub(text: str, secrets: Sequence[str]) -> str:
    for value in secrets:
        text = text.replace(value, REDACTED)
    return text


def redact(config: Any, env: Mapping[str, str] | None = None) -> Any:
    """A copy of ``config`` (dicts, lists, scalars) without secrets.

    Values under secret-looking keys (api_key, token, password, secret, ...) are replaced, so are
    the values of Hydra override strings naming such a key (``llm.api_key=sk-...``, as params.yaml's
    ``hope.overrides`` holds them), and so is any string containing the value of a secret-looking
    environment variable.
    """
    secrets = secret_values(env)

    def walk(value: Any, key: str | None) -> Any:
        if key is not None and is_secret_key(key) and value not in (None, ""):
            return REDACTED
        if isinstance(value, Mapping):
            return {k: walk(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v, None) for v in value]
        if isinstance(value, str):
            override = _OVERRIDE.match(value)
            if override and is_secret_key(override["key"]) and override["value"]:
                return f"{override['key']}={REDACTED}"
            return scrub(value, secrets)
        return value

    return walk(config, None)
