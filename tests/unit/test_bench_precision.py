"""bench/bench_precision.py's pooling over corpora and the HOPE page's precision section: values
by hand on made-up draws, so a change in how corpora are pooled shows here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "docs"))
from gen_precision import (  # noqa: E402
    precision_sample_figure,
    precision_sample_section,
    precision_section,
)
from gen_sequential import sequential_frontier, sequential_section  # noqa: E402

from bench_precision import main, pooled_curve  # noqa: E402

NAN = float("nan")


def _raw(taus: list[float], ses: list[list[float]], significant: list[int]) -> dict:
    return {
        "tau": {"budget_recall": taus, "recall": taus, "iou": taus},
        "se": ses,
        "significant": significant,
    }


def test_pooled_curve_by_hand():
    points = {
        "a": [{"size": 2, "requests": 10, "pairs": 3}],
        "b": [{"size": 2, "requests": 14, "pairs": 6}],
    }
    raws = {
        # two draws; corpus b's first draw has no tau (ties), so that draw is a's alone
        "a": [_raw([0.2, 0.6], [[0.1, 0.3], [0.2, 0.2]], [1, 0])],
        "b": [_raw([NAN, -0.2], [[0.5], [NAN]], [2, 3])],
    }
    (point,) = pooled_curve(points, raws)
    assert point["size"] == 2
    assert point["requests"] == 24
    assert point["pairs"] == 9
    # tau per draw: 0.2 (b undefined), (0.6 - 0.2) / 2 = 0.2
    assert point["tau"]["budget_recall"]["median"] == pytest.approx(0.2)
    assert point["tau"]["budget_recall"]["n"] == 2
    # se per draw: median(0.1, 0.3, 0.5) = 0.3, median(0.2, 0.2) = 0.2 (NaN left out)
    assert point["se"]["median"] == pytest.approx(0.25)
    # significant pairs per draw: 1 + 2 = 3, 0 + 3 = 3
    assert point["significant_pairs"]["median"] == 3
    assert point["significant_pairs"]["low"] == point["significant_pairs"]["high"] == 3


def test_pooled_tau_undefined_when_no_corpus_defines_it():
    points = {
        "a": [{"size": 1, "requests": 1, "pairs": 1}],
        "b": [{"size": 1, "requests": 1, "pairs": 1}],
    }
    raws = {"a": [_raw([NAN], [[NAN]], [0])], "b": [_raw([NAN], [[NAN]], [0])]}
    (point,) = pooled_curve(points, raws)
    assert point["tau"]["recall"]["median"] is None
    assert point["se"]["median"] is None


def _curve(tau: float) -> list[dict]:
    cell = {"median": tau, "low": tau - 0.1, "high": tau + 0.1}
    return [
        {
            "size": 4,
            "requests": 144,
            "pairs": 21,
            "se": {"median": 0.1, "low": 0.08, "high": 0.12},
            "tau": {"budget_recall": cell, "recall": cell, "iou": cell},
            "significant_pairs": {"median": 1.0, "low": 0.0, "high": 2.0},
        }
    ]


def test_precision_section_puts_the_pooled_table_first():
    record = {
        "provenance": {"commit": "abc"},
        "source": {"records": [{"record": "items.json", "commit": "def"}], "hope_size": {}},
        "settings": {"profile": "paper", "subsamples": 200, "targets": ["budget_recall"]},
        "corpora": {"x": {"chunkings": ["c1", "c2"], "curve": _curve(-0.5)}},
        "pooled": {"corpora": ["x", "y"], "curve": _curve(0.25)},
    }
    text = "\n".join(precision_section(record))
    assert text.index("**every corpus, pooled**") < text.index("**x** (2 chunkings)")
    assert "| 4 | 144 | 0.100 [0.080, 0.120] | +0.25 [+0.15, +0.35] | 1 [0, 2] |" in text
    assert "Pooled over x, y" in text
    assert "drawn from the items of `items.json` (commit `def`): " in text


def test_the_precision_section_names_each_items_record_with_its_corpora():
    record = {
        "source": {
            "records": [
                {"record": "a.json", "commit": "1234567890abc", "corpora": ["x", "y"]},
                {"record": "b.json", "commit": "feed", "corpora": ["z"]},
            ],
            "hope_size": {},
        },
        "settings": {"targets": []},
        "corpora": {},
    }
    text = "\n".join(precision_section(record))
    assert "`a.json` (commit `1234567890`; x, y) and `b.json` (commit `feed`; z)" in text


def test_precision_section_without_pooled_has_no_pooled_table():
    record = {
        "source": {"hope_size": {}},
        "settings": {"targets": ["budget_recall"]},
        "corpora": {"x": {"chunkings": ["c1"], "curve": _curve(0.0)}},
        "pooled": None,
    }
    text = "\n".join(precision_section(record))
    assert "pooled" not in text
    assert "**x** (1 chunkings)" in text


def _sequential_run(share: float, agreement: float) -> dict:
    return {
        "request_share": share,
        "decisions": {
            "agreement": agreement,
            "significant_kept": 1,
            "reference_significant": 2,
            "reversed": 0,
            "new_significant": 0,
        },
        "targets_met": {"request_share": share <= 0.25, "agreement": agreement >= 0.95},
        "rule_decided": 3,
        "rule_decided_contradicted": 0,
        "stopped": {"epsilon": 10, "exhausted": 4},
    }


def test_sequential_section_shows_the_sample_experiment_with_its_own_commit():
    record = {
        "provenance": {"commit": "aaaaaaa"},
        "targets": {"agreement": 0.95, "request_share": 0.25},
        "decision_test": "t test",
        "simulated": {"status": "not run", "reason": "left out"},
        "embedded_sample": {
            "provenance": {"commit": "1234567890"},
            "documents": ["d1", "d2", "d3"],
            "chunkers": ["c1", "c2"],
            "profile": "paper",
            "full": {"requests": 1776},
            "runs": {"0.1": _sequential_run(0.5, 6 / 7)},
        },
    }
    text = "\n".join(sequential_section(record))
    assert "**Simulated paper workload**: not run (left out)." in text
    assert "replayed on its items**: not run (not in this record)" in text
    assert (
        "**Embedded model (SmolLM2), the sample experiment** (3 documents × 2 chunkers, paper; "
        "full run: 1776 requests; commit `1234567`)"
    ) in text
    row = (
        "| 0.1 | 50.0% (missed) | 85.7% (missed) | 1 of 2 | 0 | 0 | 0 of 3 | "
        "epsilon 10, exhausted 4 "
    )
    assert row in text


def test_an_agreement_without_significant_pairs_says_so():
    run = _sequential_run(0.75, 1.0)
    run["decisions"]["reference_significant"] = 0
    run["decisions"]["significant_kept"] = 0
    record = {"embedded_sample": {"documents": ["d"], "chunkers": ["a", "b"], "runs": {"0.2": run}}}
    text = "\n".join(sequential_section(record))
    row = "| 0.2 | 75.0% (missed) | 100.0% (met; the full run separates no pair) | 0 of 0 |"
    assert row in text


TARGETS = {"agreement": 0.95, "request_share": 0.25}


def test_the_frontier_names_the_cheapest_epsilon_reaching_agreement_and_the_best_within_budget():
    runs = {
        "0.02": _sequential_run(0.75, 0.986),
        "0.05": _sequential_run(0.50, 0.968),
        "0.1": _sequential_run(0.42, 0.921),
        "0.2": _sequential_run(0.24, 0.868),
    }
    assert sequential_frontier(runs, TARGETS) == (
        "Across ε: agreement ≥ 95% needs 50.0% of the requests at the least (ε 0.05: 96.8%); "
        "within 25% of the requests the best agreement is 86.8% (ε 0.2: 24.0%); "
        "no ε meets both targets."
    )


def test_the_frontier_when_no_epsilon_reaches_either_target_or_one_reaches_both():
    runs = {"0.05": _sequential_run(0.52, 0.925), "0.2": _sequential_run(0.30, 0.871)}
    assert sequential_frontier(runs, TARGETS) == (
        "Across ε: no ε reaches agreement ≥ 95% (best 92.5% at ε 0.05, 52.0% of the requests); "
        "no ε stays within 25% of the requests (fewest 30.0% at ε 0.2, agreement 87.1%); "
        "no ε meets both targets."
    )
    runs["0.3"] = _sequential_run(0.20, 0.96)
    assert sequential_frontier(runs, TARGETS).endswith("both targets are met at ε 0.3.")
    runs["0.4"] = _sequential_run(0.18, 0.955)
    runs["0.5"] = _sequential_run(0.16, 0.951)
    assert sequential_frontier(runs, TARGETS).endswith(
        "both targets are met at ε 0.3, 0.4 and 0.5."
    )


def test_the_frontier_names_the_loosest_epsilon_among_equal_shares():
    runs = {e: _sequential_run(1.0, 1.0) for e in ("0.02", "0.03", "0.05")}
    runs["0.1"] = _sequential_run(0.875, 0.929)
    assert sequential_frontier(runs, TARGETS).startswith(
        "Across ε: agreement ≥ 95% needs 100.0% of the requests at the least (ε 0.05: 100.0%); "
    )


def test_the_frontier_of_a_workload_whose_full_run_separates_no_pair():
    runs = {"0.1": _sequential_run(0.85, 1.0), "0.2": _sequential_run(0.75, 1.0)}
    for run in runs.values():
        run["decisions"]["reference_significant"] = 0
    assert sequential_frontier(runs, TARGETS) == (
        "Across ε: the full run separates no pair, so every ε agrees; the request target is "
        "missed at every ε (fewest: 75.0%)."
    )
    runs["0.2"]["request_share"] = 0.2
    assert sequential_frontier(runs, TARGETS).endswith("the request target is met at ε 0.2.")
    record = {"targets": TARGETS, "embedded_sample": {"documents": ["d"], "runs": runs}}
    assert "Across ε: the full run separates no pair" in "\n".join(sequential_section(record))


def _over_orders(run: dict, shares: list, agreements: list, both_met: int) -> dict:
    def spread(values):
        ordered = sorted(values)
        return {
            "n": len(values),
            "median": ordered[len(values) // 2],
            "min": ordered[0],
            "max": ordered[-1],
        }

    share, agreement = spread(shares), spread(agreements)
    run["orders"] = {
        "order_seeds": list(range(len(shares))),
        "request_share": share,
        "agreement": agreement,
        "both_met": both_met,
        "targets_met": {
            "request_share": share["median"] <= 0.25,
            "agreement": agreement["median"] >= 0.95,
        },
    }
    return run


def test_a_run_repeated_over_draw_orders_shows_medians_ranges_and_orders_meeting_both():
    # the default draw (order 0) misses both targets; the medians over three orders meet both
    run = _over_orders(_sequential_run(0.30, 0.93), [0.30, 0.24, 0.22], [0.93, 0.96, 0.95], 2)
    record = {"targets": TARGETS, "simulated": {"documents": ["d"], "runs": {"0.15": run}}}
    text = "\n".join(sequential_section(record))
    assert (
        "| 0.15 | 24.0% [22.0%–30.0%] (met) | 95.0% [93.0%–96.0%] (met) | 1 of 2 | 0 | 0 | "
        "0 of 3 | epsilon 10, exhausted 4 | 2 of 3 |"
    ) in text
    assert "the median over 3 draw orders (`hope.sampling.order_seed` 0–2" in text
    assert sequential_frontier({"0.15": run}, TARGETS) == (
        "Across ε: agreement ≥ 95% needs 24.0% of the requests at the least (ε 0.15: 95.0%); "
        "within 25% of the requests the best agreement is 95.0% (ε 0.15: 24.0%); "
        "both targets are met at ε 0.15 (ε 0.15: 2 of 3 draw orders meet both by themselves, "
        "agreement 93.0%–96.0% over the orders)."
    )
    record["simulated"]["first_round"] = {
        "round_focus_passages": 8,
        "round_segments": 20,
        "request_share": 0.43,
        "counted": "from the populations",
    }
    assert (
        "The first round alone (8 focus passages and 20 segments per chunking, fewer where a "
        "chunking has fewer) asks for 43% of the full run's requests (both counted from the "
        "populations); no ε sends less with these round sizes."
    ) in "\n".join(sequential_section(record))
    # a run of one draw keeps its own figures, without a range, and says nothing of orders
    single = "\n".join(
        sequential_section({"simulated": {"runs": {"0.1": _sequential_run(0.5, 0.9)}}})
    )
    assert "| 0.1 | 50.0% (missed) | 90.0% (missed) |" in single and "| — |" in single
    assert "draw orders (" not in single


def test_the_items_per_chunking_are_shown_from_what_the_runs_drew():
    run = _sequential_run(0.75, 1.0)
    run["documents"] = [
        {
            "drawn": {
                "a": [{"focus_passages": 5, "segments": 6}, {"focus_passages": 5, "segments": 20}],
                "b": [{"focus_passages": 9, "segments": 6}, {"focus_passages": 13, "segments": 20}],
            }
        }
    ]
    record = {"embedded_sample": {"documents": ["d"], "chunkers": ["a", "b"], "runs": {"0.2": run}}}
    text = "\n".join(sequential_section(record))
    assert "Items per chunking, the full run's: 5–13 focus passages, 20 segments." in text


def _unlabelled_source() -> dict:
    """Two documents of 2 chunkings each, items as the sample experiment's full run keeps them."""

    def hope(cu, si, ip):
        items = {
            "concept_unity": cu,
            "semantic_independence": si,
            "information_preservation": ip,
        }
        return {"hope": {"paper": {"status": "ok", "items": items}}}

    return {
        "provenance": {"commit": "abc", "command": "made up"},
        "settings": {
            "embedder": "made-up",
            "hope_size": {"focus_passages": "every passage", "questions": 1, "segments": 4},
        },
        "llm": {"requests": 64},
        "corpora": {
            doc: {
                "chunkers": {
                    # 3 focus passages each, a far above b on every item
                    "a": hope([0.9, 0.9, 0.91], [0.9, 0.9, 0.91], [True, True, True, True]),
                    "b": hope([0.1, 0.11, 0.1], [0.1, 0.1, 0.11], [False, False, False, True]),
                }
            }
            for doc in ("doc-1", "doc-2")
        },
    }


def _write(path: Path, record: dict) -> str:
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def _precision_of(tmp_path: Path, sources: list[dict], sizes: str) -> tuple[dict, list[str]]:
    """bench_precision's record drawn from ``sources`` (5 draws per size), and their paths."""
    paths = [_write(tmp_path / f"items-{i}.json", s) for i, s in enumerate(sources)]
    output = tmp_path / "precision.json"
    argv = [arg for path in paths for arg in ("--source", path)]
    assert main([*argv, "--sizes", sizes, "--subsamples", "5", "--output", str(output)]) == 0
    return json.loads(output.read_text(encoding="utf-8")), paths


def test_precision_of_a_source_without_labels(tmp_path):
    record, (path,) = _precision_of(tmp_path, [_unlabelled_source()], "1,2,all")
    assert record["settings"]["targets"] == []
    assert record["source"]["records"] == [
        {
            "record": path,
            "commit": "abc",
            "command": "made up",
            "corpora": ["doc-1", "doc-2"],
            "llm": {"requests": 64},
        }
    ]
    block = record["corpora"]["doc-1"]
    assert block["chunkings"] == ["a", "b"]
    assert block["recorded_calls_at_largest_size"] is None
    sizes = [point["size"] for point in block["curve"]]
    assert sizes == [1, 2, "all"]
    every = block["curve"][-1]
    assert every["tau"] == {}
    # all items, one question: per passage 2 + 2 x 1 requests, per segment one choice per
    # chunking and its quadruple once: (3 x 4 + 4) x 2 + 4
    assert every["requests"] == 36
    # the source run itself is one draw, in which a is significantly above b (t about 9.4 with
    # 2 degrees of freedom: HOPE 0.936 against 0.152, standard error of the difference 0.083)
    assert every["significant_pairs"] == {"median": 1.0, "low": 1.0, "high": 1.0, "n": 1}
    # size 1: no standard error (one item), 1 passage each + 1 segment
    assert block["curve"][0]["se"]["median"] is None
    assert block["curve"][0]["requests"] == 4 + 1 + 4 + 1 + 1
    pooled = record["pooled"]["curve"][-1]
    assert pooled["requests"] == 2 * 36
    assert pooled["pairs"] == 2
    assert pooled["significant_pairs"]["median"] == 2


def test_sizes_are_counts_or_all():
    from bench_precision import parse_sizes

    assert parse_sizes("1, 4,all") == [1, 4, "all"]
    with pytest.raises(SystemExit, match="'0'"):
        parse_sizes("0,2")
    with pytest.raises(SystemExit, match="'every'"):
        parse_sizes("every")


def test_the_sample_experiments_precision_on_the_hope_page(tmp_path):
    record, _ = _precision_of(tmp_path, [_unlabelled_source()], "2,all")
    page = "\n".join(precision_sample_section(record))
    assert "**All 2 documents, pooled**" in page
    assert "τ with" not in page  # no labels, no tau
    # the pooled row of the full run: 72 requests, both pairs told apart
    assert "| all | 72 | " in page
    # the formula's count at "all" beside the run's own (the made-up source says 64)
    assert "At `all` that is 72, 8 more than the full run asked" in page
    # m = 2: per chunking 2 x 4 + 2 choices, 2 quadruples per document
    assert "| 2 | 44 | " in page
    # per document: HOPE on every item, the standard error at each size, and the pair
    # significant in the full run
    assert (
        "| document | HOPE, a / b | standard error, m = 2 | standard error, m = all | pair "
        "significant |" in page
    )
    assert "| doc-1 | 0.936 / 0.152 | " in page
    assert page.count("| yes |") == 2
    assert "Figures owed" in "\n".join(precision_sample_section(None))


def test_items_records_of_separate_runs_pool_corpus_by_corpus(tmp_path):
    second = _unlabelled_source()
    second["corpora"] = {"doc-3": second["corpora"]["doc-1"]}
    second["provenance"]["commit"] = "def"
    record, paths = _precision_of(tmp_path, [_unlabelled_source(), second], "all")
    output = tmp_path / "precision.json"
    assert sorted(record["corpora"]) == ["doc-1", "doc-2", "doc-3"]
    assert [r["corpora"] for r in record["source"]["records"]] == [["doc-1", "doc-2"], ["doc-3"]]
    assert record["pooled"]["curve"][0]["requests"] == 3 * 36
    # a corpus scored in two records, or items of another size, are refused by name
    with pytest.raises(SystemExit, match=r"corpora \['doc-1', 'doc-2'\]"):
        main(["--source", paths[0], "--source", paths[0], "--output", str(output)])
    other = _unlabelled_source()
    other["corpora"] = {"doc-9": other["corpora"]["doc-1"]}
    other["settings"]["hope_size"] = {**other["settings"]["hope_size"], "segments": 16}
    path = _write(tmp_path / "c.json", other)
    with pytest.raises(SystemExit, match="hope_size"):
        main(["--source", paths[0], "--source", path, "--output", str(output)])


def test_the_sample_experiments_curve_is_drawn_from_its_pooled_curve(tmp_path):
    record, _ = _precision_of(tmp_path, [_unlabelled_source()], "1,all")
    assert precision_sample_figure(record).startswith(b"\x89PNG")
    assert precision_sample_figure({**record, "pooled": None}) is None
    assert precision_sample_figure(None) is None


def test_the_sample_in_smaller_rounds_shows_only_where_the_record_has_it():
    run = _sequential_run(0.28, 1.0)
    run["decisions"]["reference_significant"] = 0
    sample = {"documents": ["d"], "chunkers": ["a", "b"], "runs": {"0.4": run}}
    record = {"targets": TARGETS, "embedded_sample": sample}
    assert "smaller rounds" not in "\n".join(sequential_section(record))
    text = "\n".join(sequential_section({**record, "embedded_sample_small_rounds": sample}))
    assert "**Embedded model (SmolLM2), the sample experiment in smaller rounds" in text
    assert text.count("| 0.4 | 28.0% (missed) |") == 2
