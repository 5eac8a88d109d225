"""bench/bench_sequential.py's sample workload: the run config it scores is the default experiment
at the paper's counts, and only the sampling setting differs between its full and sequential runs
(so a sequential run asks a subset of the full run's requests)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from bench_sequential import sample_config  # noqa: E402

SEQUENTIAL = {
    "mode": "sequential",
    "alpha": 0.05,
    "epsilon": 0.1,
    "round_focus_passages": 2,
    "round_segments": 2,
}


def test_the_sample_workload_is_the_default_experiment_at_the_papers_counts(tmp_path):
    config = sample_config(tmp_path / "cache.sqlite", None)
    assert config.chunkers == ["fixed_500_o0", "semantic_minilm"]
    assert config.hope.profile == "paper"
    assert config.hope.focus_passages is None  # every passage
    assert config.hope.concept_unity.n_items == 5
    assert config.hope.semantic_independence.n_questions == 5
    assert config.hope.information_preservation.n_segments == 20
    assert config.hope.sampling.mode == "all"
    assert config.cache.path == str(tmp_path / "cache.sqlite")
    assert config.cache.reuse_results is False  # each run makes its own calls


def test_a_sequential_sample_run_differs_from_the_full_run_only_in_sampling(tmp_path):
    full = sample_config(tmp_path / "cache.sqlite", None)
    sequential = sample_config(tmp_path / "cache.sqlite", SEQUENTIAL)
    assert sequential.hope.sampling.model_dump() == SEQUENTIAL
    assert sequential.hope.model_dump(exclude={"sampling"}) == full.hope.model_dump(
        exclude={"sampling"}
    )
    assert sequential.model_dump(exclude={"hope"}) == full.model_dump(exclude={"hope"})
