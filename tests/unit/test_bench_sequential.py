"""bench/bench_sequential.py's sample workload: the run config it scores is the default experiment
at the paper's counts, and only the sampling setting differs between its full and sequential runs
(so a sequential run asks a subset of the full run's requests)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from sequential_runs import first_round, over_orders  # noqa: E402
from sequential_sample import sample_config  # noqa: E402

SEQUENTIAL = {
    "mode": "sequential",
    "alpha": 0.05,
    "epsilon": 0.1,
    "round_focus_passages": 2,
    "round_segments": 2,
    "order_seed": 3,  # another draw order, passed through like the other settings
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


def _scored(items: dict, hope: float, interval: tuple[float, float], stopped: str) -> dict:
    return {
        "items": items,
        "hope": hope,
        "sampling": {
            "intervals": {"hope": list(interval)},
            "stopped": stopped,
            "drawn": {"focus_passages": 2, "segments": 2},
            "population": {"focus_passages": 4, "segments": 4},
        },
    }


HIGH = {
    "concept_unity": [0.9, 0.9, 0.9, 0.9],
    "semantic_independence": [0.9, 0.9, 0.9, 0.9],
    "information_preservation": [True, True, True, True],
}
LOW = {
    "concept_unity": [0.1, 0.1, 0.1, 0.1],
    "semantic_independence": [0.1, 0.1, 0.1, 0.1],
    "information_preservation": [False, False, False, False],
}


def test_per_document_compares_a_sequential_run_with_the_full_run():
    from sampling_stats import decisions
    from sequential_runs import per_document

    full = {"d": {"a": _scored(HIGH, 0.9, (0.8, 1.0), ""), "b": _scored(LOW, 0.1, (0, 0.2), "")}}
    full_decisions = {"d": decisions({c: v["items"] for c, v in full["d"].items()})}
    assert full_decisions == {"d": {("a", "b"): 1}}
    # The sequential run drew two items of each and stopped; its intervals are disjoint but in
    # the wrong order, so the rule's own decision is contradicted by the full run's scores.
    two = {name: values[:2] for name, values in HIGH.items()}
    two_low = {name: values[:2] for name, values in LOW.items()}
    seq = {
        "d": {
            "a": _scored(two, 0.9, (0.0, 0.2), "epsilon"),
            "b": _scored(two_low, 0.1, (0.5, 0.6), "decided"),
        }
    }
    [row] = per_document(seq, full, full_decisions)
    assert row["doc_id"] == "d"
    assert row["agreement"]["agreeing"] == 1 and row["agreement"]["pairs"] == 1
    assert row["stopped"] == {"a": "epsilon", "b": "decided"}
    assert row["drawn"]["a"] == [
        {"focus_passages": 2, "segments": 2},
        {"focus_passages": 4, "segments": 4},
    ]
    assert (row["rule_decided"], row["rule_contradicted"]) == (1, 1)


def test_the_full_runs_items_are_kept_as_a_source_for_the_precision_benchmark(tmp_path):
    from bench_precision import corpus_chunkings, labelled_targets
    from sequential_sample import SAMPLE_PAPER_COUNTS, sample_items

    items_a = {
        "concept_unity": [0.5, 0.7],
        "semantic_independence": [0.1, None],
        "information_preservation": [True, False, None],
    }
    items_b = {
        "concept_unity": [0.4],
        "semantic_independence": [0.3],
        "information_preservation": [True, True, None],
    }
    full = {
        "doc-1": {
            "fixed_500_o0": {"items": items_a, "hope": 0.42, "sampling": None},
            "semantic_minilm": {"items": items_b, "hope": float("nan"), "sampling": None},
        }
    }
    section = {
        "experiment": "sample",
        "overrides": SAMPLE_PAPER_COUNTS,
        "full_cold": {"requests": 7, "failures": 0},
    }
    record = sample_items(full, sample_config(tmp_path / "cache.sqlite", None), section)
    assert record["settings"]["hope_size"] == {
        "focus_passages": "every passage",
        "statements": 5,
        "questions": 5,
        "segments": 20,
    }
    assert record["settings"]["embedder"] == "sentence_transformers:minilm"
    assert record["llm"] == {"requests": 7, "failures": 0}
    scored = record["corpora"]["doc-1"]["chunkers"]
    assert scored["fixed_500_o0"]["hope"]["paper"] == {
        "status": "ok",
        "hope": 0.42,
        "items": items_a,
    }
    # an undefined HOPE is kept, and marked so the precision benchmark leaves the chunking out
    assert scored["semantic_minilm"]["hope"]["paper"]["status"] == "undefined"
    found = corpus_chunkings(record["corpora"]["doc-1"], "paper")
    assert list(found) == ["fixed_500_o0"]
    assert found["fixed_500_o0"]["items"] == items_a
    # no labels: no target to compute tau with
    assert labelled_targets(record, "paper") == ()


def test_the_replay_pools_items_records_as_the_precision_benchmark_does(tmp_path):
    import json

    from bench_sequential import parse_args, replayed

    def chunking(score: float, correct: list[bool]) -> dict:
        items = {
            "concept_unity": [score] * 3,
            "semantic_independence": [score] * 3,
            "information_preservation": correct,
        }
        return {"hope": {"paper": {"status": "ok", "items": items}}}

    document = {"chunkers": {"a": chunking(0.9, [True] * 4), "b": chunking(0.1, [False] * 4)}}
    paths = []
    for i, docs in enumerate((["doc-1", "doc-2"], ["doc-3"])):
        record = {
            "provenance": {"commit": f"c{i}", "command": "made up"},
            "settings": {"hope_size": {"questions": 1, "segments": 4}, "embedder": "e"},
            "corpora": dict.fromkeys(docs, document),
        }
        path = tmp_path / f"items-{i}.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        paths.append(str(path))
    out = replayed(parse_args(["--items", paths[0], "--items", paths[1], "--epsilons", "0"]))
    assert out["corpora"] == ["doc-1", "doc-2", "doc-3"]
    assert [r["corpora"] for r in out["source"]["records"]] == [["doc-1", "doc-2"], ["doc-3"]]
    # every item of 3 documents: (3 focus passages x 4 + 4 choices) x 2 chunkings + 4 quadruples
    assert out["full"]["requests"] == 3 * 36
    # epsilon 0 never stops for width, but a and b are far apart: the rule decides each pair
    # before every item is drawn, and agrees with the full run on all three
    run = out["runs"]["0.0"]
    assert run["stopped"] == {"decided": 6}
    assert run["requests"] < 3 * 36
    assert run["decisions"]["agreement"] == 1.0
    assert replayed(parse_args(["--items", str(tmp_path / "missing.json")])) is None


def test_a_replay_with_a_missing_items_record_names_only_that_record(tmp_path):
    from bench_sequential import missing_items, parse_args, replayed

    present = tmp_path / "present.json"
    present.write_text("{}", encoding="utf-8")
    absent = tmp_path / "absent.json"
    args = parse_args(["--items", str(present), "--items", str(absent)])
    assert missing_items(args) == [str(absent)]
    assert replayed(args) is None
    assert missing_items(parse_args(["--items", str(present)])) == []


def _summary(share, agreement):
    return {
        "requests": int(share * 1000),
        "request_share": share,
        "decisions": {"pairs": 20, "agreement": agreement},
        "rule_decided": 1,
        "rule_decided_contradicted": 0,
        "stopped": {"epsilon": 2},
        "targets_met": {"request_share": share <= 0.25, "agreement": agreement >= 0.95},
        "documents": ["the default order's detail"],
    }


def test_each_epsilon_keeps_the_default_order_in_full_and_the_median_over_orders():
    figures = {0: (0.30, 0.96), 1: (0.24, 0.95), 2: (0.22, 0.90)}
    seen = []

    def measure(order_seed):
        seen.append(order_seed)
        return _summary(*figures[order_seed])

    run = over_orders(3, measure)
    assert seen == [0, 1, 2]
    assert run["request_share"] == 0.30 and run["documents"] == ["the default order's detail"]
    orders = run["orders"]
    assert orders["order_seeds"] == [0, 1, 2]
    assert orders["request_share"]["median"] == 0.24
    assert (orders["request_share"]["min"], orders["request_share"]["max"]) == (0.22, 0.30)
    assert orders["agreement"]["median"] == 0.95
    # judged on the medians (0.24, 0.95): both met, though only order 1 meets both by itself
    assert orders["targets_met"] == {"request_share": True, "agreement": True}
    assert orders["both_met"] == 1
    assert [r["order_seed"] for r in orders["runs"]] == [0, 1, 2]
    assert "documents" not in orders["runs"][1]
    with pytest.raises(SystemExit, match="at least 1"):
        over_orders(0, measure)


def test_the_first_rounds_share_is_counted_from_the_recorded_populations():
    # one document, two chunkings of 10 and 3 focus passages, 20 segments; rounds of 4 and 20
    populations = {
        "a": {"focus_passages": 10, "segments": 20},
        "b": {"focus_passages": 3, "segments": 20},
    }
    run = {
        "sampling": {"round_focus_passages": 4, "round_segments": 20},
        "documents": [{"drawn": {c: [{}, p] for c, p in populations.items()}}],
    }
    found = first_round({"0.1": run}, n_questions=5)
    # per focus passage 2 + 2 x 5 = 12; per segment 1 per chunking and 1 for the document
    assert found["requests"] == 12 * (4 + 3) + 2 * 20 + 20 == 144
    assert found["full_requests"] == 12 * (10 + 3) + 2 * 20 + 20 == 216
    assert found["request_share"] == 144 / 216
    assert first_round({}, n_questions=5) is None


def test_a_run_of_the_default_parts_keeps_a_section_run_on_its_own(tmp_path):
    import json

    from bench_sequential import kept_sections

    output = tmp_path / "sequential.json"
    assert kept_sections(output, {}) == {}
    sample = {"provenance": {"commit": "abc"}, "full": {"requests": 7}}
    output.write_text(
        json.dumps(
            {
                "provenance": {"commit": "old"},
                "simulated": {"runs": {}},  # the default parts' own: rewritten, not kept
                "embedded_sample": sample,
                "embedded_replayed": {"runs": {}},  # no provenance of its own: not kept
                "embedded_sample_small_rounds": sample,  # any other section run on its own
            }
        ),
        encoding="utf-8",
    )
    fresh = {"simulated": {"runs": {"0.1": {}}}}
    both = {"embedded_sample": sample, "embedded_sample_small_rounds": sample}
    assert kept_sections(output, fresh) == both
    assert kept_sections(output, {**fresh, "embedded_sample": {"new": 1}}) == {
        "embedded_sample_small_rounds": sample
    }
