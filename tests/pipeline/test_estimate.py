"""The dry run's call counts against hand counts, its cache lookups, the paper-scale estimate."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from hope.pipeline.config_schema import validate_run_config
from hope.pipeline.estimate import (
    analytic_estimate,
    estimate_for_config,
    format_estimate,
    max_output_chars,
)
from hope.pipeline.run import load_documents, run, select_chunkers

from .conftest import TEXT, compose, small_overrides

NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: a request there would fail the test


def _cfg(tmp_path: Path, documents: Path, chunk_size: int, base_url: str = NOWHERE, *changes: str):
    overrides = small_overrides(tmp_path, documents, base_url)
    overrides = [o for o in overrides if not o.startswith(("chunker.chunk_size", "tracking."))]
    # The counts below are worked out for these settings, pinned here rather than taken from
    # the sample experiment, which may change.
    pinned = [
        "hope.focus_passages=null",
        "hope.concept_unity.n_items=3",
        "hope.semantic_independence.n_questions=2",
        "hope.information_preservation.n_segments=3",
    ]
    composed = compose(
        [*overrides, *pinned, *changes, f"chunker.chunk_size={chunk_size}", "tracking=none"]
    )
    return validate_run_config(OmegaConf.to_container(composed, resolve=True))


def _counts(estimate) -> dict[str, tuple[int, int]]:
    return {name: (k.requests, k.unique) for name, k in estimate.kinds.items()}


# Every passage, 3 statements, 2 questions, 3 segments; 8 sentences -> 6 windows.
TWO_PASSAGES = {  # per document: 2 passages
    "concept_statements": (2, 2),
    "question_generation": (2, 2),
    "answer_question": (2 * 2 * 2, 2 * 2 * 2),  # passages x questions x (alone, with context)
    "quadruple_generation": (3, 3),
    "truth_choice": (3, 3),
}
ONE_PASSAGE = {  # with one passage, the with-context request is the alone request
    "concept_statements": (1, 1),
    "question_generation": (1, 1),
    "answer_question": (1 * 2 * 2, 1 * 2),
    "quadruple_generation": (3, 3),
    "truth_choice": (3, 3),
}


@pytest.mark.parametrize(
    ("chunk_size", "per_document"),
    [(math.ceil(len(TEXT) / 2) + 5, TWO_PASSAGES), (len(TEXT) + 10, ONE_PASSAGE)],
)
def test_exact_and_analytic_counts_equal_the_hand_count(
    tmp_path: Path, documents_file: Path, chunk_size: int, per_document: dict
):
    cfg = _cfg(tmp_path, documents_file, chunk_size)
    documents = load_documents(documents_file)
    chunkers = select_chunkers(cfg)
    assert len(chunkers[0].chunk(TEXT, "d")) == (2 if per_document is TWO_PASSAGES else 1)
    hand = {k: (2 * r, 2 * u) for k, (r, u) in per_document.items()}  # two documents

    exact = estimate_for_config(cfg, documents, chunkers)
    assert exact.method == "exact" and exact.pairs == 2
    assert _counts(exact) == hand
    assert exact.total("cached") == 0 and exact.total("to_send") == exact.total("unique")

    settings = cfg.hope
    analytic = analytic_estimate(
        {"news": (2, float(len(TEXT)))},
        chunkers,
        settings,
        max_tokens=512,
        sentence_chars=len(TEXT) / 8,
    )
    # Both documents share no text with each other, so only the quadruples' sharing across
    # chunkers could dedupe, and there is one chunker: analytic and exact agree exactly.
    assert _counts(analytic) == hand


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("hope.semantic_independence.n_questions=3", {"answer_question": (24, 24)}),
        ("hope.information_preservation.n_segments=2", {"truth_choice": (4, 4)}),
        ("hope.semantic_independence.top_k=0", {"answer_question": (16, 8)}),
        ("hope.concept_unity.n_items=4", {"concept_statements": (4, 4)}),
        ("hope=reference", {"qa_pairs": (4, 4), "qa_critic": (4, 4)}),
    ],
)
def test_the_estimate_follows_a_changed_profile(
    tmp_path: Path, documents_file: Path, change: str, expected: dict
):
    """Both methods follow a profile edit: the exact one runs the sub-metrics, the analytic one
    adds up what they declare (``planned_requests``); no request table is kept by hand."""
    chunk_size = math.ceil(len(TEXT) / 2) + 5  # two passages per document
    base = _cfg(tmp_path, documents_file, chunk_size)
    cfg = _cfg(tmp_path, documents_file, chunk_size, NOWHERE, change)
    documents = load_documents(documents_file)
    exact = estimate_for_config(cfg, documents, select_chunkers(cfg))
    settings = cfg.hope
    analytic = analytic_estimate(
        {"news": (2, float(len(TEXT)))},
        select_chunkers(cfg),
        settings,
        max_tokens=int(cfg.llm["max_tokens"]),
        sentence_chars=len(TEXT) / 8,
    )
    assert _counts(exact) == _counts(analytic)
    assert {k: _counts(exact)[k] for k in expected} == expected
    # The output bound follows the response schema, which follows the counts.
    outputs = {name: k.output_tokens for name, k in exact.kinds.items()}
    assert outputs == {name: k.output_tokens for name, k in analytic.kinds.items()}
    before = estimate_for_config(base, documents, select_chunkers(base))
    assert (_counts(before), before.total("output_tokens")) != (
        _counts(exact),
        exact.total("output_tokens"),
    )


def test_after_a_run_the_dry_run_finds_every_request_cached(
    tmp_path: Path, documents_file: Path, sim_server
):
    cfg = _cfg(tmp_path, documents_file, 150, base_url=sim_server.base_url)
    before = estimate_for_config(cfg, load_documents(documents_file), select_chunkers(cfg))
    assert before.total("cached") == 0
    run(cfg, output_dir=tmp_path / "job")
    summary = json.loads((tmp_path / "job" / "summary.json").read_text())
    usage = summary["usage"]
    # The dry run predicted exactly the requests the engine made (no retries against the server).
    assert usage["retries"] == 0 and usage["invalid_responses"] == 0
    assert usage["requests"] + usage["cache_hits"] == before.total("requests")
    after = estimate_for_config(cfg, load_documents(documents_file), select_chunkers(cfg))
    assert after.total("unique") == before.total("unique")
    assert after.total("cached") == after.total("unique") and after.total("to_send") == 0
    assert after.total("prompt_tokens") == 0


def test_paper_scale_dry_run_needs_no_corpus(tmp_path: Path, capsys):
    cfg = compose(
        [
            "experiment=paper",
            "dry_run=true",
            "tracking=none",
            f"cache.path={tmp_path / 'cache.sqlite'}",
            f"data.documents={tmp_path / 'absent.jsonl'}",
        ]
    )
    # data.documents must exist when given; the paper corpus itself is never fetched.
    with pytest.raises(FileNotFoundError):
        run(cfg, output_dir=tmp_path / "job")
    cfg = compose(["experiment=paper", "dry_run=true", "tracking=none"])
    to_send = run(cfg, output_dir=tmp_path / "job")
    estimate = json.loads((tmp_path / "job" / "estimate.json").read_text())
    if estimate["method"] != "analytic":
        pytest.skip("the paper corpus is prepared in this checkout")
    assert estimate["documents"] == 131 and estimate["pairs"] == 131 * 8
    kinds = estimate["kinds"]
    # 20 segments per document, shared by the 8 chunkers, except news: 2386 chars / 120 = 19
    # sentences give 17 three-sentence windows. One choice per segment and pair.
    segments = 111 * 20 + 20 * 17
    assert kinds["quadruple_generation"]["unique"] == segments
    assert kinds["truth_choice"]["requests"] == 8 * segments
    # 5 questions per passage, each asked alone and with context.
    assert kinds["answer_question"]["requests"] == 10 * kinds["question_generation"]["requests"]
    assert to_send == estimate["totals"]["to_send"] > 0
    printed = capsys.readouterr().out
    assert "Dry run (analytic): 131 documents, 1048" in printed and "truth_choice" in printed


def test_output_bound_follows_the_schema():
    from hope.core.prompts.response_schemas import ChoiceResponse, statements_model

    # {"choice": "A"}: 2 braces + key 6 + 4 quote/colon chars + 3 for the letter.
    assert max_output_chars(ChoiceResponse.model_json_schema()) == 2 + 6 + 4 + 3
    three = max_output_chars(statements_model(3).model_json_schema())
    four = max_output_chars(statements_model(4).model_json_schema())
    assert four - three == 200 + 2 + 2  # one more bounded statement, quoted, with a separator


def test_format_estimate_prints_every_kind_and_totals(tmp_path: Path, documents_file: Path):
    cfg = _cfg(tmp_path, documents_file, 200)
    text = format_estimate(
        estimate_for_config(cfg, load_documents(documents_file), select_chunkers(cfg)), "here"
    )
    assert text.splitlines()[0].startswith("Dry run (exact): 2 documents")
    assert text.splitlines()[-3].startswith("total")


def test_a_sequential_run_is_estimated_as_the_full_draw(tmp_path: Path, documents_file: Path):
    """A dry run has no real answers to stop on: with sequential sampling both methods count
    every item, the most a sequential run can send, and say so."""
    chunk_size = math.ceil(len(TEXT) / 2) + 5  # two passages per document
    sequential = (
        "hope.sampling.mode=sequential",
        "hope.sampling.epsilon=0.9",
        "hope.sampling.round_focus_passages=1",
        "hope.sampling.round_segments=1",
    )
    cfg = _cfg(tmp_path, documents_file, chunk_size, NOWHERE, *sequential)
    assert cfg.hope.sampling.mode == "sequential"
    documents = load_documents(documents_file)
    exact = estimate_for_config(cfg, documents, select_chunkers(cfg))
    hand = {k: (2 * r, 2 * u) for k, (r, u) in TWO_PASSAGES.items()}
    assert _counts(exact) == hand
    analytic = analytic_estimate(
        {"news": (2, float(len(TEXT)))},
        select_chunkers(cfg),
        cfg.hope,
        max_tokens=512,
        sentence_chars=len(TEXT) / 8,
    )
    assert _counts(analytic) == hand
    for estimate in (exact, analytic):
        assert any("upper bound" in note for note in estimate.notes)
    assert "upper bound" in format_estimate(exact)
    assert cfg.hope.sampling.mode == "sequential"  # the caller's settings are left as they were
