"""Random instances of a response model's JSON schema: the dry run's synthetic answers
(``hope.models.dry_run_llm``) and the test doubles' (``hope.testing``) are made here, so that
production code never imports the test doubles."""

from __future__ import annotations

import random
from typing import Any


def schema_instance(
    schema: dict[str, Any],
    rng: random.Random,
    vocabulary: list[str],
    root: dict | None = None,
    *,
    source: list[str] | None = None,
) -> Any:
    """A random instance of a JSON schema (the subset pydantic emits for our response models).

    Strings are random words of ``vocabulary``, or, with ``source`` (the words of a text in
    order), a contiguous run of that text: answers then quote what they were given, as a model
    reading the passage would, so answers to related prompts overlap.
    """
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return schema_instance(root["$defs"][name], rng, vocabulary, root, source=source)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {
            key: schema_instance(sub, rng, vocabulary, root, source=source)
            for key, sub in schema.get("properties", {}).items()
        }
    if kind == "array":
        low = schema.get("minItems", 1)
        high = schema.get("maxItems", low + 2)
        return [
            schema_instance(schema.get("items", {}), rng, vocabulary, root, source=source)
            for _ in range(rng.randint(low, high))
        ]
    if kind == "string" and source:
        length = min(len(source), rng.randint(6, 14))
        start = rng.randrange(len(source) - length + 1)
        return schema_sentence(" ".join(source[start : start + length]), schema, source[0])
    if kind == "string":
        words = vocabulary or ["lorem", "ipsum", "dolor", "sit", "amet"]
        text = " ".join(rng.choice(words) for _ in range(rng.randint(5, 12)))
        return schema_sentence(text.capitalize(), schema, words[0])
    if kind == "boolean":
        return rng.random() < 0.7
    if kind == "integer":
        # An unbounded integer in a judge's schema is a verdict (ragas: attributed, verdict,
        # noncommittal: 0 or 1); text-quoting answers keep to that range.
        high = schema.get("maximum", 1 if source is not None else 100)
        return rng.randint(schema.get("minimum", 0), high)
    if kind == "number":
        return rng.random()
    return None


def schema_sentence(text: str, schema: dict[str, Any], fallback: str) -> str:
    """``text`` as a sentence (capital, full stop) within the schema's ``maxLength``, full stop
    included: a schema-valid answer (a cut run of the prompt ended one character over the limit,
    and the answer failed validation as a model's would)."""
    limit = schema.get("maxLength")
    body = text.strip().rstrip(".,;:")
    if limit is not None:
        body = body[: max(1, limit - 1)].strip().rstrip(".,;:")
    body = body or fallback[: max(1, (limit or 2) - 1)]
    return body[0].upper() + body[1:] + "."
