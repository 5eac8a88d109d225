"""Each equation of section 3 against values computed by hand."""

import math

import numpy as np
import pytest

from hope.core.metrics import equations

R2 = 1 / math.sqrt(2)


def test_cosine_of_eq1_is_scale_free_and_handles_zero_vectors():
    sims = equations.cosine_matrix(np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([[5.0, 5.0]]))
    assert sims[0, 0] == pytest.approx(R2)
    assert sims[1, 0] == 0.0


def test_concept_unity_eq2_averages_all_ordered_pairs_including_the_diagonal():
    # θ matrix of (1,0), (0,1), (1,1): diagonal 1, θ12 = 0, θ13 = θ23 = 1/√2.
    # (3 + 2·(0 + 1/√2 + 1/√2)) / 9 = (3 + 2√2) / 9
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert equations.concept_unity_pairwise(vectors) == pytest.approx((3 + 2 * math.sqrt(2)) / 9)


def test_concept_unity_eq2_of_two_opposite_statements_is_zero():
    # (1 + 1 - 1 - 1) / 4: with the diagonal included eq. 2 equals |mean unit vector|², never < 0
    assert equations.concept_unity_pairwise(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(0)


def test_concept_unity_centroid_variant():
    # centroid of (1,0) and (0,1) is (.5,.5): each vector is at 45°, cos = 1/√2
    assert equations.concept_unity_centroid(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(R2)


def test_semantic_independence_eq5_pairs_answers_by_question():
    alone = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    with_context = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, -1.0]])
    sims = equations.paired_similarities(alone, with_context)
    assert sims.tolist() == pytest.approx([1.0, R2, -1.0])
    assert equations.semantic_independence_passage(sims) == pytest.approx((1 + R2 - 1) / 3)


def test_semantic_independence_negative_value_is_set_to_zero_as_written():
    raw = equations.semantic_independence_passage([-1.0, 0.2])
    assert raw == pytest.approx(-0.4)
    assert equations.clip_score(raw, "negative_to_zero") == 0.0
    assert equations.clip_score(1.2, "negative_to_zero") == 1.2
    assert equations.clip_score(1.2, "unit_interval") == 1.0
    assert equations.clip_score(-0.3, "unit_interval") == 0.0


def test_information_preservation_eq9_is_the_share_of_right_choices():
    assert equations.information_preservation([True, False, True, True]) == 0.75
    with pytest.raises(ValueError):
        equations.information_preservation([])


def test_corpus_means_eq3_eq6_exclude_failed_passages_never_count_them_as_zero():
    assert equations.corpus_mean([0.5, None, 0.7]) == pytest.approx((0.6, 2))
    mean, n = equations.corpus_mean([None, None])
    assert math.isnan(mean) and n == 0
    assert equations.corpus_mean([0.0, 0.5]) == pytest.approx((0.25, 2))
    assert equations.corpus_mean([0.0, 0.5], drop_zero=True) == pytest.approx((0.5, 1))


def test_hope_eq10_is_the_unweighted_mean_and_nan_when_a_submetric_is_missing():
    assert equations.hope_score(0.6, 0.3, 0.9) == pytest.approx(0.6)
    assert math.isnan(equations.hope_score(0.6, math.nan, 0.9))


def test_hope_reference_treats_zero_and_nan_as_missing_in_a_weighted_mean():
    assert equations.hope_score(0.6, 0.0, 0.9, zero_as_missing=True) == pytest.approx(0.75)
    assert equations.hope_score(
        0.6, 0.3, 0.9, weights=(2, 1, 1), zero_as_missing=True
    ) == pytest.approx((1.2 + 0.3 + 0.9) / 4)
    assert math.isnan(equations.hope_score(0.0, math.nan, 0.0, zero_as_missing=True))


def test_top_k_ranks_by_cosine_breaks_ties_by_index_and_can_exclude_the_focus():
    candidates = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    assert equations.top_k_indices(np.array([1.0, 0.0]), candidates, 3) == [0, 2, 3]
    assert equations.top_k_indices(np.array([1.0, 0.0]), candidates, 2, exclude=[0]) == [2, 3]
    assert equations.top_k_indices(np.array([1.0, 0.0]), candidates, 0) == []
