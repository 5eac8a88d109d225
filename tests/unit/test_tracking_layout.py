"""The pieces of the MLflow layout that need no store: the chunker runs' uniform metric keys, the
call observer of ChatLLM, trace sampling, the tracking knobs, prompt templates."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from hope.analysis.paper import INDICATORS
from hope.core.prompts.response_schemas import AnswerResponse
from hope.core.response_cache import ResponseCache
from hope.models.llm import ChatLLM, LLMCallError
from hope.models.llm_settings import LLMSettings
from hope.testing import FakeTransport, api_status_error
from hope.tracking.layout import CHILD_SCORES, CHILD_USAGE, RAG_INDICATORS, chunker_metrics
from hope.tracking.prompt_registry import mlflow_template
from hope.tracking.traces import TraceRecorder, sampled
from hope.tracking.tracking_settings import TrackingSettings

MESSAGES = [{"role": "user", "content": "What?"}]


def test_rag_indicators_are_the_analysis_ones():
    assert tuple(INDICATORS) == RAG_INDICATORS


def test_every_chunker_gets_the_same_keys_with_nan_where_nothing_was_measured():
    from hope.tracking.layout import HEADLINE_SCORES, domain_table

    rows = [
        {"doc_id": "a", "domain": "news", "chunker": "c1", "hope": 0.2, "bleu": 0.5},
        {"doc_id": "b", "domain": "wiki", "chunker": "c1", "hope": None, "bleu": 0.1},
        {"doc_id": "a", "domain": "news", "chunker": "c2", "hope": 0.6},
    ]
    c1 = chunker_metrics(
        rows[:2], usage={"requests": 4, "prompt_tokens": 10}, failures={"concept_unity": 2}
    )
    c2 = chunker_metrics(rows[2:])
    assert c1.keys() == c2.keys()
    usage = {f"usage/{k}" for k in CHILD_USAGE}
    assert {*HEADLINE_SCORES, *usage, "failures/total", "n_documents"} == c1.keys() - {
        "failures/concept_unity",
        "failures/semantic_independence",
        "failures/information_preservation",
    }
    assert set(CHILD_SCORES) <= c1.keys() and "budget_recall" in c1
    assert not any("." in k or "news" in k for k in c1)  # one separator; no domain in a key
    assert c1["hope"] == pytest.approx(0.2) and c1["bleu"] == pytest.approx(0.3)
    assert math.isnan(c2["bleu"]) and math.isnan(c1["answer_correctness"])
    assert c1["usage/requests"] == 4 and math.isnan(c1["usage/completion_tokens"])
    assert math.isnan(c2["usage/requests"])
    assert c1["failures/total"] == 2 and c1["failures/concept_unity"] == 2
    assert c2["failures/total"] == 0
    # A kind's own scores after the headline ones.
    assert list(chunker_metrics(rows, scores=["recall"]))[1 : len(HEADLINE_SCORES) + 2] == [
        *HEADLINE_SCORES,
        "recall",
    ]
    # Per domain: a table, with the undefined rows counted.
    table = domain_table(rows[:2], ["hope", "bleu"])
    assert table["domain"] == ["news", "wiki", "all"] and table["n_documents"] == [1, 1, 2]
    assert table["hope"] == [pytest.approx(0.2), None, pytest.approx(0.2)]
    assert table["undefined_hope"] == [0, 1, 1] and table["bleu"][1] == pytest.approx(0.1)


def _llm(script, cache=None):
    transport = FakeTransport(script)
    settings = LLMSettings(model="m", base_url="http://fake/v1", max_retries=0)
    return ChatLLM(settings, identity="fake", transport=transport, cache=cache)


def _ask(llm, seed=1):
    return asyncio.run(
        llm.structured(
            messages=MESSAGES,
            response_model=AnswerResponse,
            schema_name="answer",
            prompt_id="answer@v1#x",
            temperature=0.0,
            seed=seed,
        )
    )


def test_on_call_sees_each_finished_call_with_prompt_answer_seed_latency_and_cache_hit(tmp_path):
    llm = _llm(lambda request: json.dumps({"answer": "ok"}), ResponseCache(tmp_path / "c.sqlite"))
    calls = []
    llm.on_call = calls.append
    _ask(llm, seed=7)
    _ask(llm, seed=7)  # the same request: a cache hit
    first, second = calls
    assert first.messages == MESSAGES and first.prompt_id == "answer@v1#x"
    assert json.loads(first.response) == {"answer": "ok"} and first.error is None
    assert first.seed == 7 and first.cached is False and first.attempts == 1
    assert first.latency_s >= 0 and first.started_ns > 0
    assert second.cached is True and second.key == first.key
    assert first.key == llm.cache_key(
        messages=MESSAGES,
        response_model=AnswerResponse,
        temperature=0.0,
        seed=7,
        max_tokens=None,
        prompt_id="answer@v1#x",
    )


def test_on_call_sees_a_failed_call_and_a_broken_observer_fails_nothing():
    llm = _llm(lambda request: (_ for _ in ()).throw(api_status_error(400, "too long")))
    calls = []
    llm.on_call = calls.append
    with pytest.raises(LLMCallError):
        _ask(llm)
    assert calls[0].response is None and "too long" in calls[0].error

    llm = _llm(lambda request: json.dumps({"answer": "ok"}))

    def broken(call):
        raise RuntimeError("observer bug")

    llm.on_call = broken
    assert _ask(llm).value.answer == "ok"


def test_trace_sampling_is_a_deterministic_share_of_the_requests():
    keys = [f"request-{i}" for i in range(2000)]
    assert all(sampled(k, 1.0) for k in keys) and not any(sampled(k, 0.0) for k in keys)
    chosen = {k for k in keys if sampled(k, 0.1)}
    assert 140 <= len(chosen) <= 260  # 10 % of 2000, within sampling noise
    assert chosen == {k for k in keys if sampled(k, 0.1)}  # the same calls every time
    assert chosen <= {k for k in keys if sampled(k, 0.5)}  # a larger share keeps these

    class Call:
        def __init__(self, key):
            self.key = key

    recorder = TraceRecorder(share=1.0, limit=3)
    for key in keys[:5]:
        recorder(Call(key))
    assert [c.key for c in recorder.calls] == keys[:3] and recorder.dropped == 2


def test_tracking_knobs_are_checked_and_name_the_setting():
    settings = TrackingSettings.from_mapping({"uri": "sqlite:///x.db"})
    assert settings.trace_share == 1.0 and settings.trace_limit == 2000
    assert settings.trace_recorder() is not None
    off = TrackingSettings.from_mapping({"uri": "sqlite:///x.db", "trace_share": 0})
    assert off.trace_recorder() is None
    assert TrackingSettings.from_mapping({"enabled": False}).trace_recorder() is None
    with pytest.raises(ValueError, match=r"tracking\.trace_share"):
        TrackingSettings.from_mapping({"uri": "sqlite:///x.db", "trace_share": 1.5})
    with pytest.raises(ValueError, match=r"tracking\.trace_share"):
        TrackingSettings.from_mapping({"uri": "sqlite:///x.db", "trace_share": "most"})
    with pytest.raises(ValueError, match=r"tracking\.trace_limit"):
        TrackingSettings.from_mapping({"uri": "sqlite:///x.db", "trace_limit": -1})


def test_prompt_slots_become_mlflow_variables():
    assert mlflow_template("Write {n} statements:\n{passage}") == (
        "Write {{n}} statements:\n{{passage}}"
    )
    assert mlflow_template('JSON like {{"a": 1}} for {x}') == 'JSON like {"a": 1} for {{x}}'


def test_a_prompt_a_parallel_job_registered_first_is_taken_not_registered_twice():
    from types import SimpleNamespace

    from mlflow.exceptions import MlflowException

    from hope.tracking.prompt_registry import register_prompt

    prompt = {"id": "p@v1#abc", "version": 1, "system": "S", "user": "Say {x}"}
    theirs = SimpleNamespace(name="p", version=1, tags={"hope.prompt_id": "p@v1#abc"})

    class Client:
        """No prompt at the lookup; created by someone else by the time we register."""

        def __init__(self):
            self.searches = 0
            self.registered = []

        def search_prompt_versions(self, name, max_results=None, page_token=None):
            self.searches += 1
            if self.searches == 1:
                raise MlflowException(f"Prompt (name={name}) not found")
            return [theirs]

        def register_prompt(self, name, template, commit_message=None, tags=None):
            self.registered.append((name, template, tags))
            raise MlflowException(f"Prompt (name={name}) already exists.")

    client = Client()
    assert register_prompt(client, "p", prompt) is theirs
    ((name, template, tags),) = client.registered
    assert name == "p"
    assert template[1] == {"role": "user", "content": "Say {{x}}"}
    assert tags == {"hope.prompt_id": "p@v1#abc", "hope.version": "1"}


def test_a_tag_another_writer_inserted_first_is_read_again_not_a_failure():
    from types import SimpleNamespace

    from mlflow.exceptions import MlflowException

    from hope.tracking.prompt_registry import EXPERIMENTS_TAG, link_to_experiment

    class Client:
        """MLflow's own link thread inserts the tag between our read and our write."""

        def __init__(self, theirs: str):
            self.tags: dict[str, str] = {}
            self.theirs = theirs
            self.writes = 0

        def get_prompt(self, name):
            return SimpleNamespace(name=name, tags=dict(self.tags))

        def set_prompt_tag(self, name, key, value):
            self.writes += 1
            if self.writes == 1:
                self.tags[key] = self.theirs
                raise MlflowException("UNIQUE constraint failed: registered_model_tags.key")
            self.tags[key] = value

    same = Client(",1,")  # theirs already holds the experiment: nothing more to write
    link_to_experiment(same, "p", "1")
    assert (same.tags[EXPERIMENTS_TAG], same.writes) == (",1,", 1)
    other = Client(",4,")  # theirs holds another experiment: ours is added to it
    link_to_experiment(other, "p", "1")
    assert (other.tags[EXPERIMENTS_TAG], other.writes) == (",4,1,", 2)

    class Broken(Client):
        def set_prompt_tag(self, name, key, value):
            raise MlflowException("the store refuses")

    with pytest.raises(MlflowException, match="refuses"):
        link_to_experiment(Broken(""), "p", "1")


def test_a_dataset_a_parallel_job_inserted_first_is_linked_not_a_failure(tmp_path: Path):
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    from hope.tracking.datasets import DataFile, log_datasets

    corpus = tmp_path / "documents.jsonl"
    corpus.write_text("{}\n", encoding="utf-8")
    data = [DataFile("corpus", corpus, "b88b50b09096fd7275f5a1de3f6befdb")]
    store = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = store.create_experiment("e", artifact_location=(tmp_path / "a").as_uri())
    ours, theirs = (store.create_run(experiment).info.run_id for _ in range(2))

    class Racing:
        """The other job's write lands between MLflow's lookup and its insert: our first write
        fails on the unique key, as it did in CI, and is rolled back."""

        def __init__(self):
            self.calls = 0

        def log_inputs(self, run_id, datasets):
            self.calls += 1
            if self.calls == 1:
                store.log_inputs(theirs, datasets=datasets)
                raise MlflowException(
                    "(sqlite3.IntegrityError) UNIQUE constraint failed: datasets.experiment_id, "
                    "datasets.name, datasets.digest"
                )
            return store.log_inputs(run_id, datasets=datasets)

    racing = Racing()
    log_datasets(racing, ours, data)
    assert racing.calls == 2
    inputs = {r: store.get_run(r).inputs.dataset_inputs for r in (ours, theirs)}
    assert [d.dataset.name for d in inputs[ours]] == ["corpus-b88b50b09096fd7275f5a1de3f6befdb"]
    # one dataset in the experiment, shared by both runs
    assert inputs[ours][0].dataset.digest == inputs[theirs][0].dataset.digest

    class Refusing:
        def log_inputs(self, run_id, datasets):
            raise MlflowException("the store refuses")

    with pytest.raises(MlflowException, match="refuses"):
        log_datasets(Refusing(), ours, data)
