"""Joining scores, BLEU and RAGAS on (doc_id, chunker), and its errors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hope.analysis.pair_table import JoinError, join_pairs
from hope.analysis.paper import HOPE_METRICS, INDICATORS


def test_join_keeps_every_pair_with_all_columns(tables):
    pairs, report = join_pairs(tables["scores"], tables["bleu"], tables["ragas"])
    assert len(pairs) == 56 and report.n_pairs == 56
    assert report.missing == {"bleu": [], "ragas": []}
    assert list(pairs.columns) == [
        "doc_id",
        "chunker",
        "domain",
        *HOPE_METRICS,
        "bleu",
        *INDICATORS,
    ]
    row = pairs[(pairs["doc_id"] == "wiki-000") & (pairs["chunker"] == "recursive_500")].iloc[0]
    source = tables["ragas"].set_index(["doc_id", "chunker"]).loc[("wiki-000", "recursive_500")]
    assert row["factual_correctness"] == source["factual_correctness"]


def test_shuffled_inputs_join_by_key_not_position(tables):
    shuffled = tables["ragas"].sample(frac=1, random_state=1)
    a, _ = join_pairs(tables["scores"], tables["bleu"], tables["ragas"])
    b, _ = join_pairs(tables["scores"], tables["bleu"], shuffled)
    pd.testing.assert_frame_equal(a, b)


def test_duplicate_pair_is_an_error(tables):
    bleu = pd.concat([tables["bleu"], tables["bleu"].iloc[[3]]])
    with pytest.raises(JoinError, match=r"bleu table: duplicate .*\('news-000', 'fixed_500_o0'\)"):
        join_pairs(tables["scores"], bleu, tables["ragas"])


def test_missing_bleu_pair_is_an_error(tables):
    with pytest.raises(JoinError, match=r"bleu table lacks 1 of 56 pair\(s\)"):
        join_pairs(tables["scores"], tables["bleu"].iloc[1:], tables["ragas"])


def test_missing_ragas_pair_is_nan_and_reported(tables):
    ragas = tables["ragas"].iloc[2:]
    pairs, report = join_pairs(tables["scores"], tables["bleu"], ragas)
    assert len(pairs) == 56
    assert len(report.missing["ragas"]) == 2
    assert report.as_dict() == {
        "pairs": 56,
        "missing": {"bleu": 0, "ragas": 2},
        "indicators_not_run": [],
    }
    first = tables["ragas"].iloc[0]
    row = pairs[(pairs["doc_id"] == first["doc_id"]) & (pairs["chunker"] == first["chunker"])]
    assert math.isnan(row["answer_correctness"].iloc[0])
    with pytest.raises(JoinError, match="ragas table lacks 2"):
        join_pairs(tables["scores"], tables["bleu"], ragas, allow_missing=())


def test_pair_unknown_to_scores_is_an_error(tables):
    extra = tables["ragas"].iloc[[0]].assign(doc_id="ghost")
    ragas = pd.concat([tables["ragas"], extra])
    with pytest.raises(JoinError, match="pair\\(s\\) that the scores table lacks: \\('ghost'"):
        join_pairs(tables["scores"], tables["bleu"], ragas)


def test_missing_column_is_named(tables):
    with pytest.raises(JoinError, match="bleu table lacks column\\(s\\) \\['bleu'\\]"):
        join_pairs(tables["scores"], tables["ragas"], tables["ragas"])


def test_domain_disagreement_is_an_error(tables):
    ragas = tables["ragas"].copy()
    ragas.loc[0, "domain"] = "wiki"
    with pytest.raises(JoinError, match="disagree on the domain"):
        join_pairs(tables["scores"], tables["bleu"], ragas)


def test_non_numeric_metric_is_an_error(tables):
    scores = tables["scores"].astype({"hope": object})
    scores.loc[5, "hope"] = "n/a"
    with pytest.raises(JoinError, match="column 'hope' is not numeric"):
        join_pairs(scores, tables["bleu"], tables["ragas"])


def test_empty_key_and_empty_scores_are_errors(tables):
    bleu = tables["bleu"].copy()
    bleu.loc[0, "chunker"] = None
    with pytest.raises(JoinError, match="empty 'chunker'"):
        join_pairs(tables["scores"], bleu, tables["ragas"])
    with pytest.raises(JoinError, match="no rows"):
        join_pairs(tables["scores"].iloc[0:0], tables["bleu"].iloc[0:0], tables["ragas"].iloc[0:0])


def test_indicators_not_run_are_nan_and_named(tables):
    ragas = tables["ragas"].drop(columns=["answer_correctness", "factual_correctness"])
    pairs, report = join_pairs(tables["scores"], tables["bleu"], ragas)
    assert report.not_run == ("answer_correctness", "factual_correctness")
    assert report.as_dict()["indicators_not_run"] == list(report.not_run)
    assert pairs["answer_correctness"].isna().all() and pairs["context_recall"].notna().all()
    with pytest.raises(JoinError, match="none of the columns"):
        join_pairs(tables["scores"], tables["bleu"], ragas.drop(columns=list(INDICATORS)[2:]))


def test_table2_marks_indicators_that_were_not_run(tables):
    from hope.analysis.report import build_outputs

    ragas = tables["ragas"].drop(columns=["factual_correctness"])
    result = build_outputs(tables["scores"], tables["bleu"], ragas)
    fc = result.table2[result.table2["indicator"] == "FC"]
    assert len(fc) == 5 and set(fc["reason"]) == {"not run (ragas.metrics)"}
    assert result.table2[result.table2["indicator"] == "AC"]["pearson_r"].notna().all()
