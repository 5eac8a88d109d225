"""The stages wired together with test doubles: ragas metrics over instructor over the caching
client, warm reruns, NaN accounting of real ragas metric objects, and the stage entry points."""

from __future__ import annotations

import csv
import json
import math

import pytest
import yaml

from hope.core.response_cache import ResponseCache
from hope.models.embeddings import CachingEmbedder, HashingEmbedder
from hope.stages import questions_stage, rag_stage
from hope.stages import ragas_stage as ragas_eval
from hope.testing import (
    FakeChatClient,
    SimulatedServer,
    api_status_error,
    word_responder,
)

from .helpers import DOCS, fake_config, passages_for, question_writer, read_jsonl, write_jsonl

CHUNKERS = {"one": 1, "two": 2}
QUESTION_SCHEMAS = {"generated_question", "written_question", "support_verdict"}


def unit_responder(request):
    """Schema-valid answers of random words whose 0/1 fields stay in range (attributed,
    verdict); test questions that pass the quality gates (helpers.question_writer). Random
    words, not the quoting schema_responder: with the 64-dimension hashing embedder, quoted
    texts can have a negative cosine, which response relevancy rejects."""
    if request["response_format"]["json_schema"]["name"] in QUESTION_SCHEMAS:
        return question_writer(request)
    data = json.loads(word_responder(request))

    def clamp(value):
        if isinstance(value, dict):
            return {
                k: (v % 2 if k in {"attributed", "verdict"} and isinstance(v, int) else clamp(v))
                for k, v in value.items()
            } | {
                # Noncommittal: response relevancy is 0, never a negative cosine of the hashing
                # embedder's random questions (out of range).
                k: 1
                for k, v in value.items()
                if k == "noncommittal"
            }
        if isinstance(value, list):
            return [clamp(v) for v in value]
        return value

    return json.dumps(clamp(data))


def pipeline(cache, client, config=None, embedder=None):
    config = config or fake_config()
    embedder = embedder or CachingEmbedder(HashingEmbedder(64), cache)
    questions, _ = questions_stage.make_questions(
        DOCS, config, "sample", cache, questions_client=client
    )
    passages = passages_for(DOCS, CHUNKERS)
    answers, rag_summary = rag_stage.run_rag(
        questions, passages, config, cache, embedder=embedder, answer_client=client
    )
    answers = json.loads(json.dumps(answers))  # as the next stage reads them from disk
    rows, table, summary = ragas_eval.evaluate_answers(
        questions, answers, passages, config, cache, judge_client=client, embedder=embedder
    )
    return questions, answers, rows, table, summary, rag_summary


@pytest.mark.slow
def test_end_to_end_with_doubles_and_warm_rerun_makes_zero_calls():
    cache = ResponseCache(None)
    client = FakeChatClient(unit_responder)
    questions, answers, rows, table, summary, rag_summary = pipeline(cache, client)
    assert len(questions) == 4 and len(answers) == 8 and len(rows) == 8
    assert all(a["answer"] and len(a["retrieved_passage_ids"]) == 2 for a in answers)
    assert all(a["usage"]["requests"] == 1 for a in answers)
    assert rag_summary["failed_answers_per_chunker"] == {"one": 0, "two": 0}
    # Every question retrieves from its own domain's passages of the right chunker.
    for a in answers:
        assert all(
            pid.startswith(a["doc_id"] + ":" + a["chunker"]) for pid in a["retrieved_passage_ids"]
        )
    sent = len(client.requests)
    judge_requests = [r for r in client.requests if "max_retries" not in r]
    assert summary["usage"]["requests"] > 0
    assert all(r.get("seed") is not None for r in judge_requests)
    assert sorted((r["doc_id"], r["chunker"]) for r in table) == sorted(
        (d["doc_id"], c) for d in DOCS for c in CHUNKERS
    )
    for row in rows:
        for metric in (
            "answer_correctness",
            "factual_correctness",
            "context_recall",
            "response_relevancy",
        ):
            value, error = row[metric], row[f"{metric}_error"]
            assert (error is None) != math.isnan(value), (metric, error)

    again = pipeline(cache, client)
    assert len(client.requests) == sent  # nothing sent: every response came from the cache
    assert again[0] == questions
    assert [a["answer"] for a in again[1]] == [a["answer"] for a in answers]
    assert json.dumps(again[2], default=str) == json.dumps(rows, default=str)
    assert again[4]["usage"]["requests"] == 0 and again[4]["usage"]["cache_hits"] > 0


def test_real_ragas_metrics_turn_judge_failures_into_counted_nan():
    cache = ResponseCache(None)
    good = FakeChatClient(unit_responder)
    questions, _ = questions_stage.make_questions(
        DOCS, fake_config(), "sample", cache, questions_client=good
    )
    passages = passages_for(DOCS, CHUNKERS)
    embedder = CachingEmbedder(HashingEmbedder(64), cache)
    answers, _ = rag_stage.run_rag(
        questions, passages, fake_config(), cache, embedder=embedder, answer_client=good
    )

    def broken_judge(request):
        name = request["response_format"]["json_schema"]["name"]
        if name == "ContextRecallOutput":
            raise api_status_error(400, "grammar error")
        if name == "ClaimDecompositionOutput":
            return "{not json"
        return unit_responder(request)

    rows, _, summary = ragas_eval.evaluate_answers(
        questions,
        answers,
        passages,
        fake_config(),
        ResponseCache(None),
        judge_client=FakeChatClient(broken_judge),
        embedder=embedder,
    )
    assert summary["failed_per_metric"]["context_recall"] == 8
    assert summary["failed_per_metric"]["factual_correctness"] == 8
    assert summary["failed_per_chunker"]["one"]["context_recall"] == 4
    assert summary["failed_per_metric"]["answer_correctness"] == 0
    assert all(math.isnan(r["context_recall"]) for r in rows)
    assert all(r["context_recall_error"].endswith("grammar error") for r in rows)
    assert all(0.0 <= r["answer_correctness"] <= 1.0 for r in rows)


@pytest.mark.slow
def test_stage_entry_points_against_a_simulated_server(tmp_path, repo_root):
    """The three ``main()``s on files, with the LLM roles pointed at a local simulated server."""
    docs = write_jsonl(tmp_path / "documents.jsonl", DOCS)
    passages = write_jsonl(tmp_path / "passages.jsonl", passages_for(DOCS, CHUNKERS))
    with SimulatedServer(latency_s=0.0, responder=unit_responder) as server:
        role = {
            "preset": None,
            "overrides": {
                "backend": "openai",
                "base_url": server.base_url,
                "model": "sim",
                "max_retries": 1,
            },
        }
        params = tmp_path / "params.yaml"
        params.write_text(
            yaml.safe_dump(
                {
                    "corpora": {"profile": "sample"},
                    "rag": {
                        "questions": {"generator": "fallback", "context_chars": 200},
                        "embedder": {"backend": "hashing", "dim": 64, "model": "x"},
                        "llm": {"questions": role, "answer": role, "judge": role},
                    },
                }
            )
        )
        common = [
            "--params",
            str(params),
            "--cache",
            str(tmp_path / "cache.sqlite"),
            "--no-progress",
        ]
        out = tmp_path / "out"
        assert (
            questions_stage.main(
                ["--documents", str(docs), "--output", str(out / "questions.jsonl"), *common]
            )
            == 0
        )
        assert (
            rag_stage.main(
                [
                    "--questions",
                    str(out / "questions.jsonl"),
                    "--passages",
                    str(passages),
                    "--output",
                    str(out / "answers.jsonl"),
                    *common,
                ]
            )
            == 0
        )
        assert (
            ragas_eval.main(
                [
                    "--questions",
                    str(out / "questions.jsonl"),
                    "--answers",
                    str(out / "answers.jsonl"),
                    "--passages",
                    str(passages),
                    "--out-dir",
                    str(out / "ragas"),
                    *common,
                ]
            )
            == 0
        )
        served = server.requests
        assert (
            ragas_eval.main(
                [
                    "--questions",
                    str(out / "questions.jsonl"),
                    "--answers",
                    str(out / "answers.jsonl"),
                    "--passages",
                    str(passages),
                    "--out-dir",
                    str(out / "ragas2"),
                    *common,
                ]
            )
            == 0
        )
        assert server.requests == served
    questions = read_jsonl(out / "questions.jsonl")
    assert len(questions) == 4 and {q["generator"] for q in questions} == {"fallback"}
    assert len(read_jsonl(out / "answers.jsonl")) == 8
    with (out / "ragas" / "per_doc_chunker.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert {(r["doc_id"], r["chunker"]) for r in table} == {
        (d["doc_id"], c) for d in DOCS for c in CHUNKERS
    }
    summary = json.loads((out / "ragas" / "summary.json").read_text())
    assert set(summary["failed_per_chunker"]) == set(CHUNKERS)
    assert (out / "ragas" / "per_question.jsonl").read_text() == (
        out / "ragas2" / "per_question.jsonl"
    ).read_text()


def test_stage_reports_bad_input_by_name(tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    assert rag_stage.main(["--questions", str(missing), "--no-progress"]) == 1
    assert str(missing) in capsys.readouterr().err
