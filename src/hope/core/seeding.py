"""Deterministic per-item seeds.

Every LLM request and every random draw gets a seed derived from the run seed and the identity of
the item it serves (metric, passage, question...). Results therefore do not depend on the order in
which concurrent requests happen to finish.
"""

from __future__ import annotations

import hashlib

_SEED_BITS = 31  # llama.cpp, vLLM and OpenAI all accept a non-negative 32-bit int


def derive_seed(base_seed: int, *parts: object) -> int:
    text = "\x1f".join([str(int(base_seed)), *(str(p) for p in parts)])
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % (1 << _SEED_BITS)
