"""The LLM writer with a scripted ChatModel double: its excerpts are located exactly, and what
cannot be located or was not answered is filtered and counted."""

from __future__ import annotations

from hope.core.model_interface import ChatModel
from hope.probe import write_probe_questions
from hope.probe.llm_writer import PROMPT_ID, LLMWriter, ProbeAnswer
from hope.probe.question_shape import QuestionShape

from .fakes import ScriptedProbeModel

CORPUS = (
    "The lighthouse at Corran Point was built in 1860 by Thomas Stevenson. "
    "Its lamp burned whale oil until paraffin arrived in 1871. "
    "Keepers lived on the island with their families for three generations. "
    "The light was automated in 1980 and the keepers left the island."
)
ONE_SENTENCE = QuestionShape(((1, 1.0),), (60,) * 11, 1.0, (0,) * 11)


def ScriptedModel(script) -> ScriptedProbeModel:
    """Answers each request from ``script(passage) -> (question, excerpts) | None``."""
    return ScriptedProbeModel(script, "excerpts")


def test_the_double_is_a_chat_model():
    assert isinstance(ScriptedModel(lambda p: None), ChatModel)


def test_excerpts_are_located_exactly_and_questions_recorded():
    def script(passage: str):
        first = passage.split(". ")[0].rstrip(".") + "."
        return (f"What does the record say about {first.split()[1]}?", [first])

    model = ScriptedModel(script)
    probe = write_probe_questions(CORPUS, LLMWriter(model), 2, seed=1, shape=ONE_SENTENCE)
    assert probe.questions
    assert all(r["prompt_id"] == PROMPT_ID for r in model.requests)
    for question in probe.questions:
        assert question.writer == "llm"
        for ref in question.references:
            assert CORPUS[ref.start : ref.end] == ref.text
        assert question.filters["located"] and question.filters["relevant"]


def test_unlocatable_excerpts_and_failed_answers_are_counted():
    invented = ScriptedModel(lambda p: ("Who built the lighthouse?", ["A sentence not in it."]))
    probe = write_probe_questions(CORPUS, LLMWriter(invented), 2, seed=1, shape=ONE_SENTENCE)
    assert probe.questions == [] and probe.rejected["located"] >= 2
    silent = ScriptedModel(lambda p: None)
    probe = write_probe_questions(CORPUS, LLMWriter(silent), 2, seed=1, shape=ONE_SENTENCE)
    assert probe.questions == [] and probe.rejected["written"] >= 2


def test_the_schema_wants_a_question_and_excerpts():
    schema = ProbeAnswer.model_json_schema()
    assert set(schema["required"]) == {"question", "excerpts"}
