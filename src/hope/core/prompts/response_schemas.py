"""Response schemas of the prompts, sent as JSON schema and validated with pydantic.

Array lengths are fixed by the schema (minItems = maxItems) and strings are bounded, so a
grammar-constrained backend such as llama.cpp cannot ramble past max_tokens. A string that is empty
after stripping whitespace fails validation: the client then regenerates with a derived seed, and
an answer that stays empty is a recorded failure instead of an empty statement, question or answer
being scored.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

MAX_STATEMENT_CHARS = 200
MAX_ANSWER_CHARS = 300

Statement = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_STATEMENT_CHARS)
]
Answer = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ANSWER_CHARS)
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


@lru_cache(maxsize=32)
def statements_model(n: int) -> type[BaseModel]:
    return create_model(
        f"Statements{n}",
        __base__=_Strict,
        statements=(list[Statement], Field(min_length=n, max_length=n)),
    )


@lru_cache(maxsize=32)
def questions_model(n: int) -> type[BaseModel]:
    return create_model(
        f"Questions{n}",
        __base__=_Strict,
        questions=(list[Statement], Field(min_length=n, max_length=n)),
    )


class AnswerResponse(_Strict):
    answer: Answer


class QuadrupleResponse(_Strict):
    true_statement: Statement
    false_statements: list[Statement] = Field(min_length=3, max_length=3)


class ChoiceResponse(_Strict):
    choice: Literal["A", "B", "C", "D"]


class SupportResponse(_Strict):
    verdict: Literal["yes", "no"]


class QAPair(_Strict):
    question: Statement
    answer: Answer


@lru_cache(maxsize=32)
def qa_pairs_model(n: int) -> type[BaseModel]:
    return create_model(
        f"QAPairs{n}",
        __base__=_Strict,
        pairs=(list[QAPair], Field(min_length=n, max_length=n)),
    )


@lru_cache(maxsize=32)
def critic_model(n: int) -> type[BaseModel]:
    return create_model(
        f"Critic{n}",
        __base__=_Strict,
        keep=(list[bool], Field(min_length=n, max_length=n)),
    )
