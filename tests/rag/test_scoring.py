from __future__ import annotations

import asyncio
import math

import pytest

from hope.pipeline.ragas_step import per_question_lines, table_csv
from hope.rag.ragas_scoring import aggregate, failure_summary, score_all


class Result:
    def __init__(self, value):
        self.value = value


class FixedMetric:
    allowed_values = (0.0, 1.0)

    def __init__(self, value):
        self.value = value
        self.calls = []

    async def ascore(self, **kwargs):
        self.calls.append(kwargs)
        return Result(self.value)


class RaisingMetric(FixedMetric):
    async def ascore(self, **kwargs):
        raise ValueError("could not parse the judge's JSON")


class SlowMetric(FixedMetric):
    async def ascore(self, **kwargs):
        await asyncio.sleep(5)
        return Result(0.9)


class ByQuestion(FixedMetric):
    """Fails on the questions listed, scores the others."""

    def __init__(self, values, failing=()):
        super().__init__(None)
        self.values = values
        self.failing = set(failing)

    async def ascore(self, **kwargs):
        question = kwargs["user_input"]
        if question in self.failing:
            raise RuntimeError("instructor gave up")
        return Result(self.values[question])


QUESTIONS = {
    "q1": {
        "question_id": "q1",
        "doc_id": "d1",
        "domain": "news",
        "question": "Q1?",
        "reference": "R1",
        "generator": "fallback",
    },
    "q2": {
        "question_id": "q2",
        "doc_id": "d1",
        "domain": "news",
        "question": "Q2?",
        "reference": "R2",
        "generator": "fallback",
    },
    "q3": {
        "question_id": "q3",
        "doc_id": "d2",
        "domain": "wiki",
        "question": "Q3?",
        "reference": "R3",
        "generator": "ragas",
    },
}


def item(qid, chunker, answer="an answer", contexts=("ctx",), error=None):
    return {
        "question_id": qid,
        "chunker": chunker,
        "answer": answer,
        "error": error,
        "retrieved_contexts": list(contexts),
    }


def run(items, metrics, timeout_s=1.0):
    return asyncio.run(score_all(items, QUESTIONS, metrics, timeout_s=timeout_s, concurrency=3))


def test_failures_are_nan_with_reason_and_never_zero():
    metrics = {
        "answer_correctness": RaisingMetric(None),
        "factual_correctness": SlowMetric(None),
        "context_recall": FixedMetric(float("nan")),
        "response_relevancy": FixedMetric(78.5),
    }
    (row,) = run([item("q1", "c1")], metrics, timeout_s=0.05)
    for name in metrics:
        assert math.isnan(row[name]), name
        assert row[f"{name}_error"]
    assert row["answer_correctness_error"].startswith("ValueError: could not parse")
    assert row["factual_correctness_error"] == "timeout after 0.05s"
    assert row["context_recall_error"].startswith("ragas returned NaN")
    assert row["response_relevancy_error"].startswith("out of range: 78.5")


def test_inputs_follow_each_metric_signature():
    metrics = {
        name: FixedMetric(0.5)
        for name in (
            "answer_correctness",
            "factual_correctness",
            "context_recall",
            "response_relevancy",
        )
    }
    (row,) = run([item("q3", "c1", answer="A3", contexts=["x", "y"])], metrics)
    assert row["answer_correctness"] == 0.5 and row["answer_correctness_error"] is None
    assert metrics["answer_correctness"].calls == [
        {"user_input": "Q3?", "response": "A3", "reference": "R3"}
    ]
    assert metrics["factual_correctness"].calls == [{"response": "A3", "reference": "R3"}]
    assert metrics["context_recall"].calls == [
        {"user_input": "Q3?", "retrieved_contexts": ["x", "y"], "reference": "R3"}
    ]
    assert metrics["response_relevancy"].calls == [{"user_input": "Q3?", "response": "A3"}]


def test_missing_answer_fails_answer_metrics_but_not_context_recall():
    metrics = {"answer_correctness": FixedMetric(0.7), "context_recall": FixedMetric(0.4)}
    (row,) = run([item("q1", "c1", answer=None, error="invalid response: cut off")], metrics)
    assert math.isnan(row["answer_correctness"])
    assert row["answer_correctness_error"] == "no answer: invalid response: cut off"
    assert metrics["answer_correctness"].calls == []
    assert row["context_recall"] == 0.4


def test_counts_aggregation_and_outputs():
    values = {"Q1?": 0.2, "Q2?": 0.6, "Q3?": 1.0}
    metrics = {
        "answer_correctness": ByQuestion(values, failing={"Q2?"}),
        "context_recall": ByQuestion(values, failing={"Q3?"}),
    }
    items = [item(q, c) for c in ("c1", "c2") for q in ("q1", "q2", "q3")]
    rows = run(items, metrics)
    summary = failure_summary(rows)
    assert summary["failed_per_metric"] == {"answer_correctness": 2, "context_recall": 2}
    assert summary["attempted_per_metric"] == {"answer_correctness": 6, "context_recall": 6}
    assert summary["scored_per_metric"] == {"answer_correctness": 4, "context_recall": 4}
    assert summary["failed_per_chunker"] == {
        "c1": {"answer_correctness": 1, "context_recall": 1},
        "c2": {"answer_correctness": 1, "context_recall": 1},
    }
    assert summary["reasons_per_metric"]["answer_correctness"] == {"RuntimeError": 2}

    table = {(r["doc_id"], r["chunker"]): r for r in aggregate(rows)}
    assert sorted(table) == [("d1", "c1"), ("d1", "c2"), ("d2", "c1"), ("d2", "c2")]
    d1 = table[("d1", "c1")]
    # q2 failed answer correctness: the mean is over q1 only, and the failure is counted.
    assert d1["answer_correctness"] == pytest.approx(0.2)
    assert (d1["answer_correctness_n"], d1["answer_correctness_n_failed"]) == (2, 1)
    assert d1["context_recall"] == pytest.approx(0.4)
    assert d1["n_questions"] == 2 and d1["domain"] == "news"
    d2 = table[("d2", "c2")]
    assert math.isnan(d2["context_recall"])  # its only question failed: NaN, not 0
    assert (d2["context_recall_n"], d2["context_recall_n_failed"]) == (1, 1)

    lines = list(per_question_lines(rows))
    assert '"context_recall": null' in lines[2] and "NaN" not in "".join(lines)
    csv_text = table_csv(aggregate(rows))
    assert csv_text.splitlines()[0].startswith("doc_id,chunker,domain,n_questions")
    assert "NaN" in csv_text


def test_one_bad_item_does_not_stop_the_others():
    metrics = {"answer_correctness": ByQuestion({"Q1?": 0.3, "Q3?": 0.9}, failing={"Q2?"})}
    rows = run([item("q1", "c"), item("q2", "c"), item("q3", "c")], metrics)
    assert [r["answer_correctness"] for r in rows][0::2] == [0.3, 0.9]
    assert math.isnan(rows[1]["answer_correctness"])
