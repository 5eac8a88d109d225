"""bench_validity's report, tables and targets from per-document records, without a model.

A refactor once made ``write_report`` fail after the first document of a 70-minute run (its
``records`` argument hid the module of that name); this builds the report from hand-made records
and checks the counts the README tables are made of."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNGS = ("aligned", "recursive_500", "fixed_120", "foreign_mixed", "sentence_shuffled")
# Passages per rung, as the ladder gives them: fixed_120 has the most, shuffled as many as aligned.
N_PASSAGES = {
    "aligned": 3,
    "recursive_500": 4,
    "fixed_120": 10,
    "foreign_mixed": 3,
    "sentence_shuffled": 3,
}


@pytest.fixture
def bench_validity(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import bench_validity

    return bench_validity


def _rung(rung: str, with_baselines: bool) -> dict:
    aligned = rung == "aligned"
    scores = {
        "hope": 0.8 if aligned else 0.5,
        "concept_unity": 0.6,  # a tie on every rung
        "semantic_independence": 0.4 if aligned else 0.7,  # the aligned rung loses every time
        "information_preservation": 0.5,
    }
    if with_baselines:
        scores |= {
            "size_compliance": 1.0,
            "intra_chunk_cohesion": 0.9 if aligned else 0.3,
            "contextual_coherence": 0.5,
            "passage_count": float(N_PASSAGES[rung]),
        }
    return {
        "n_passages": N_PASSAGES[rung],
        "scores": scores,
        "counts": {},
        "failures": [],
        "choices": [[("A", "A"), ("B", "A")]],
        "llm": {"requests": 5, "cache_hits": 1},
    }


def _record(doc_id: str, with_baselines: bool = True) -> dict:
    return {
        "doc_id": doc_id,
        "domain": "news",
        "n_chars": 1000,
        "wall_time_s": 60.0,
        "rungs": {rung: _rung(rung, with_baselines) for rung in RUNGS},
        "controls": {
            "oracle": [[{"answer_key": "A", "choice": "A", "correct": True}]],
            "no_context": [[{"answer_key": "B", "choice": "A", "correct": False}]],
            "failed": [],
        },
        "controls_llm": {"requests": 2, "cache_hits": 0},
        "prompt_ids": {"statements": "statements/v2"},
    }


def _write(bench_validity, tmp_path: Path, records: list[dict]) -> dict:
    from omegaconf import OmegaConf

    from hope.core.hope_settings import HopeSettings, validated
    from hope.core.packaged_configs import compose_config

    cfg = compose_config(["hope=paper"])
    settings = validated(HopeSettings, OmegaConf.to_container(cfg.hope, resolve=True), "t", "hope")
    args = argparse.Namespace(
        domains=["news"],
        per_domain=2,
        max_chars=2000,
        seed=0,
        out=tmp_path / "validity.json",
    )
    docs = [
        {"doc_id": r["doc_id"], "domain": "news", "title": "t", "text": "x", "n_chars_full": 9}
        for r in records
    ]
    ladders = [{rung: ["p"] * N_PASSAGES[rung] for rung in RUNGS} for _ in records]
    models = {"paper": (cfg, settings, None, None)}
    import harness

    run = harness.start(["bench/bench_validity.py"])
    run.git = {"commit": "0" * 40, "dirty": False, "changed_files": 0}
    bench_validity.write_report(
        args, [], docs, ladders, models, {"paper": records}, 0.0, run, complete=True
    )
    return json.loads(args.out.read_text(encoding="utf-8"))


def test_report_counts_wins_ties_and_losses_for_hope_and_the_baselines(bench_validity, tmp_path):
    report = _write(bench_validity, tmp_path, [_record("d1"), _record("d2")])
    metrics = report["profiles"]["paper"]["metrics"]

    def pooled(metric: str) -> float:
        return metrics[metric]["aligned_vs_degraded"]["pooled"]["share_wins"]

    assert pooled("hope") == 1.0  # 8 of 8 comparisons (2 documents x 4 degraded rungs)
    assert pooled("concept_unity") == 0.0  # all ties: a tie is not a win
    assert pooled("semantic_independence") == 0.0
    assert pooled("intra_chunk_cohesion") == 1.0
    # More passages reads as better (its card): aligned loses to recursive_500 and fixed_120
    # and ties with the two rungs that have as many passages.
    count = metrics["passage_count"]["aligned_vs_degraded"]
    assert (count["fixed_120"]["losses"], count["foreign_mixed"]["ties"]) == (2, 2)
    assert pooled("passage_count") == 0.0
    controls = report["profiles"]["paper"]["information_preservation_controls"]
    assert (controls["oracle"]["accuracy"], controls["no_context"]["accuracy"]) == (1.0, 0.0)
    assert report["profiles"]["paper"]["cost"]["llm_requests"] == 2 * (5 * 5 + 2)
    assert report["provenance"]["machine"]["cores"] >= 1
    assert report["targets_met"]["paper"]["hope_aligned_wins"]["met"] is True
    assert report["targets_met"]["paper"]["information_preservation_aligned_wins"]["met"] is False

    table = bench_validity.render_table(report)
    assert "| HOPE | 2/2 | 2/2 | 2/2 | 2/2 | 1.00 " in table
    assert "| passage count (baseline) | 0/2 | 0/2 | 0/2 (2 ties) | 0/2 (2 ties) |" in table


def test_records_without_baselines_give_the_hope_rows_only(bench_validity, tmp_path):
    report = _write(bench_validity, tmp_path, [_record("d1", with_baselines=False)])
    assert list(report["profiles"]["paper"]["metrics"]) == list(bench_validity.METRICS)
    assert "(baseline)" not in bench_validity.render_table(report)


def test_a_profile_with_the_same_settings_is_one_line_not_a_second_table(bench_validity, tmp_path):
    report = _write(bench_validity, tmp_path, [_record("d1")])
    report["profiles"]["robust"] = report["profiles"]["paper"]
    report["settings"]["robust"] = dict(report["settings"]["paper"], profile="robust")
    table = bench_validity.render_table(report)
    assert table.count("| HOPE |") == 1
    assert "**robust** (1 documents): its settings equal `paper`'s" in table
    report["settings"]["robust"]["seed"] = 1
    assert bench_validity.render_table(report).count("| HOPE |") == 2


def test_a_rerun_keeps_the_sections_other_benchmarks_merged_into_the_file(bench_validity, tmp_path):
    out = tmp_path / "validity.json"
    old = {"provenance": {"commit": "1" * 40}, "rag_context_recall_control": {"kept": 1}}
    out.write_text(json.dumps(old))
    report = _write(bench_validity, tmp_path, [_record("d1")])
    assert report["rag_context_recall_control"] == {"kept": 1}
    assert report["provenance"]["commit"] == "0" * 40  # the block at the top is this run's


def test_models_are_compared_on_the_documents_both_records_hold(bench_validity, tmp_path):
    import validity_models

    full = _write(bench_validity, tmp_path, [_record("d1"), _record("d2")])
    losing = _record("d2")
    for rung in RUNGS:
        losing["rungs"][rung]["scores"]["hope"] = 0.2 if rung == "aligned" else 0.5
    (tmp_path / "validity.json").unlink()
    partial = _write(bench_validity, tmp_path, [losing])
    partial["complete"] = False

    result = validity_models.compare([("small", full), ("large", partial)])
    assert result["shared_documents"] == ["d2"]
    hope = {
        m: result["models"][m]["metrics"]["hope"]["pooled"]["share_wins"] for m in result["models"]
    }
    assert hope == {"small": 1.0, "large": 0.0}
    assert result["hope_win_share_difference_from_first"]["large"]["difference"] == -1.0
    assert result["models"]["large"]["minutes_per_document"]["median"] == 1.0
    assert "| large (`0000000`) | 0.00 [0.00, 0.00] |" in validity_models.render_table(result)
