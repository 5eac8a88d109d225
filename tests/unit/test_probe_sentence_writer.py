"""The sentence-number LLM writer with a scripted ChatModel double: the numbers it is given map
to exact corpus spans, invalid numbers are dropped, and what names no valid sentence or was not
answered is a question not written."""

from __future__ import annotations

import re

import pytest

from hope.core.model_interface import ChatModel
from hope.probe import LLM_WRITERS, SentenceWriter, write_probe_questions
from hope.probe.question_shape import QuestionShape
from hope.probe.salience import Salience
from hope.probe.sentence_writer import PROMPT_ID, SCHEMA_NAME, SentenceAnswer
from hope.probe.writing import WritingTask

from .fakes import ScriptedProbeModel

# Four sentences, one space between each (offsets counted by hand):
#   S1 "The lighthouse ... Stevenson."  69 chars:  [0, 69)
#   S2 "Its lamp ... in 1871."           57 chars:  [70, 127)
#   S3 "Keepers lived ... generations." 70 chars:  [128, 198)
#   S4 "The light ... the island."       64 chars:  [199, 263)   (the corpus is 263 chars)
CORPUS = (
    "The lighthouse at Corran Point was built in 1860 by Thomas Stevenson. "
    "Its lamp burned whale oil until paraffin arrived in 1871. "
    "Keepers lived on the island with their families for three generations. "
    "The light was automated in 1980 and the keepers left the island."
)
S2, S3, S4 = (70, 127), (128, 198), (199, 263)
ONE_SENTENCE = QuestionShape(((1, 1.0),), (60,) * 11, 1.0, (0,) * 11)


def ScriptedModel(script) -> ScriptedProbeModel:
    """Answers each request from ``script(lines) -> (question, numbers) | None``, ``lines`` the
    numbered sentences shown."""
    return ScriptedProbeModel(script, "sentences", lines=True)


def write_one(answer, region=(70, 263), gold=((128, 198),)):
    model = ScriptedModel(lambda lines: answer)
    task = WritingTask(gold=gold, region=region, seed=5)
    [draft] = SentenceWriter(model).write(CORPUS, Salience([CORPUS]), [task])
    return draft, model


def test_the_double_is_a_chat_model():
    assert isinstance(ScriptedModel(lambda lines: None), ChatModel)


def test_the_region_is_shown_as_numbered_sentences_and_asked_for_by_count():
    draft, model = write_one(("When did paraffin arrive?", [1]), gold=(S2, S4))
    [request] = model.requests
    assert request["prompt_id"] == PROMPT_ID and request["schema_name"] == SCHEMA_NAME
    assert request["seed"] == 5 and request["temperature"] == 0.0
    user = request["messages"][-1]["content"]
    assert user.split('"""')[1].strip().splitlines() == [
        "[1] Its lamp burned whale oil until paraffin arrived in 1871.",
        "[2] Keepers lived on the island with their families for three generations.",
        "[3] The light was automated in 1980 and the keepers left the island.",
    ]
    assert "name the 2 sentence(s)" in user
    assert draft is not None and draft.spans == (S2,)


def test_numbers_map_to_exact_corpus_spans():
    draft, _ = write_one(("What happened to the keepers?", [3]))
    assert draft.question == "What happened to the keepers?"
    assert draft.spans == (S4,)
    assert draft.excerpts == ("The light was automated in 1980 and the keepers left the island.",)
    # two sentences apart are two excerpts, in corpus order whatever the answer's order
    draft, _ = write_one(("Lamp and automation?", [3, 1]))
    assert draft.spans == (S2, S4)
    assert draft.excerpts == tuple(CORPUS[s:e] for s, e in (S2, S4))
    # consecutive sentences are one excerpt: a run of whole sentences, the space between kept
    draft, _ = write_one(("Keepers and automation?", [2, 3]))
    assert draft.spans == ((128, 263),)
    assert draft.excerpts == (CORPUS[128:263],)
    assert draft.excerpts[0].startswith("Keepers") and draft.excerpts[0].endswith("island.")


def test_out_of_range_and_repeated_numbers_are_dropped():
    draft, _ = write_one(("What happened to the keepers?", [0, 3, -1, 3, 4, 99]))
    assert draft.spans == (S4,)


@pytest.mark.parametrize("numbers", [[], [0], [4, 5, -2], [0, 0]])
def test_no_valid_number_is_no_question(numbers):
    draft, _ = write_one(("What happened to the keepers?", numbers))
    assert draft is None


def test_a_blank_question_or_a_failed_answer_is_no_question():
    assert write_one(("   ", [1]))[0] is None
    assert write_one(None)[0] is None


def test_drafts_pass_the_filters_end_to_end():
    def script(lines: list[str]):
        first = lines[0].split("] ", 1)[1]
        return (f"What does the record say about {first.split()[1]}?", [1])

    model = ScriptedModel(script)
    probe = write_probe_questions(CORPUS, SentenceWriter(model), 2, seed=1, shape=ONE_SENTENCE)
    assert probe.questions
    assert all(r["prompt_id"] == PROMPT_ID for r in model.requests)
    sentence_spans = {(0, 69), S2, S3, S4}
    for question in probe.questions:
        assert question.writer == "llm_sentences"
        for ref in question.references:
            assert CORPUS[ref.start : ref.end] == ref.text
            assert (ref.start, ref.end) in sentence_spans
        assert all(question.filters.values())
        assert set(question.filters) == {
            "located",
            "relevant",
            "not_verbatim",
            "distinct_gold",
            "distinct_query",
        }


def test_invalid_and_failed_answers_are_counted_as_not_written():
    invalid = ScriptedModel(lambda lines: ("Who built the lighthouse?", [len(lines) + 1]))
    probe = write_probe_questions(CORPUS, SentenceWriter(invalid), 2, seed=1, shape=ONE_SENTENCE)
    assert probe.questions == [] and probe.rejected["written"] >= 2
    assert "located" not in probe.rejected
    silent = ScriptedModel(lambda lines: None)
    probe = write_probe_questions(CORPUS, SentenceWriter(silent), 2, seed=1, shape=ONE_SENTENCE)
    assert probe.questions == [] and probe.rejected["written"] >= 2


def test_the_schema_wants_a_question_and_sentence_numbers():
    schema = SentenceAnswer.model_json_schema()
    assert set(schema["required"]) == {"question", "sentences"}
    assert schema["properties"]["sentences"]["items"]["type"] == "integer"


def test_it_is_selectable_by_name(monkeypatch):
    import hope.models.factory
    from hope.pipeline.probe_step import probe_writer

    monkeypatch.setattr(hope.models.factory, "llm_preset", lambda name, cache=None: ScriptedModel)
    assert LLM_WRITERS["llm_sentences"] is SentenceWriter
    writer = probe_writer("llm_sentences")
    assert isinstance(writer, SentenceWriter) and writer.name == "llm_sentences"
    assert writer.kind == "llm"
    assert re.fullmatch(r"probe_question_sentences_v\d+", PROMPT_ID)


def test_a_round_of_requests_shows_a_progress_bar_that_can_be_turned_off(capsys):
    tasks = [WritingTask(gold=(S3,), region=(70, 263), seed=s) for s in (1, 2, 3)]
    model = ScriptedModel(lambda lines: ("Who lived on the island?", [2]))
    SentenceWriter(model).write(CORPUS, Salience([CORPUS]), tasks)
    shown = capsys.readouterr().err
    assert "probe questions (llm_sentences)" in shown and "3/3" in shown
    SentenceWriter(model, progress=False).write(CORPUS, Salience([CORPUS]), tasks)
    assert capsys.readouterr().err == ""
