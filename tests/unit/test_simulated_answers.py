"""The simulated server's answers (hope.testing) are schema-valid: they stand for a model that
follows the schema, so the benchmarks built on them measure orchestration, not invalid answers."""

import json
import random

import pytest

from hope.core.prompts import response_schemas as schemas
from hope.testing import schema_instance, schema_responder

LONG_RUN = ("Supercalifragilistic " * 40).split()


@pytest.mark.parametrize("limit", [2, 5, 20, schemas.MAX_STATEMENT_CHARS])
@pytest.mark.parametrize("seed", range(50))
def test_strings_keep_within_max_length_full_stop_included(limit, seed):
    schema = {"type": "string", "maxLength": limit}
    quoted = schema_instance(schema, random.Random(seed), [], source=LONG_RUN)
    drawn = schema_instance(schema, random.Random(seed), ["Pneumonoultramicroscopic"])
    for text in (quoted, drawn):
        assert 1 <= len(text) <= limit
        assert text.endswith(".")


def test_answers_to_long_passages_validate_against_the_response_models():
    model = schemas.statements_model(5)
    passage = " ".join(["averyveryverylongtechnicaltermfromamanual"] * 200)
    request = {
        "messages": [{"role": "user", "content": f"Passage:\n\n{passage}\n\nWrite statements."}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "s", "schema": model.model_json_schema()},
        },
        "seed": 3,
    }
    model.model_validate(json.loads(schema_responder(request)))
