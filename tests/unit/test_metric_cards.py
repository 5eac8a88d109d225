"""The metric cards' examples (module docstrings of hope.core.metrics.*) run as tests."""

from __future__ import annotations

import doctest

import pytest

from hope.core.metrics import concept_unity, information_preservation, semantic_independence


@pytest.mark.parametrize(
    "module",
    [concept_unity, semantic_independence, information_preservation],
    ids=lambda m: m.NAME,
)
def test_metric_card_examples_hold(module):
    outcome = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, report=True)
    assert outcome.attempted >= 5, f"{module.__name__}: its card lost its examples"
    assert outcome.failed == 0, f"{module.__name__}: {outcome.failed} card example(s) failed"


@pytest.mark.parametrize(
    "module",
    [concept_unity, semantic_independence, information_preservation],
    ids=lambda m: m.NAME,
)
def test_metric_card_names_range_direction_and_source(module):
    card = module.__doc__
    assert "Metric card." in card and "Range [0, 1]" in card and "higher is better" in card
    assert "section 3." in card and "eq. " in card
