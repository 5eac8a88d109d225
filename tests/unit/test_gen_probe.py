"""docs/gen_probe.py: the probe page's tables of probe against real questions, from a made-up
record, so a change in what the page shows (or a record field it no longer finds) shows here."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))
from gen_probe import probe_section  # noqa: E402

MEASURES = ["recall@5", "iou@5", "budget_recall@2500"]


def _cell(tau: float, agreeing: int = 3, pairs: int = 4) -> dict:
    return {"tau": tau, "low": tau - 0.2, "high": tau + 0.1, "agreeing": agreeing, "pairs": pairs}


def _record() -> dict:
    compared = {m: _cell(0.5) for m in MEASURES}
    corpus = {
        "writers": {
            "cloze": {
                "compared": compared,
                "probe": {"written": 90, "requested": 100},
                "timing_s": {"probe_own": {"median": 2.8, "n": 3}},
            }
        },
        "passage_count": {m: _cell(-0.3, 1, 4) for m in MEASURES},
        "hope": {"recall@5": {"tau": 0.33, "low": -0.2, "high": 0.6, "agreement": None}},
        "noise_ceiling": {m: {"median": 0.62, "low": 0.2, "high": 1.0} for m in MEASURES},
    }
    return {
        "provenance": {"commit": "0123456789abcdef"},
        "settings": {"k": 5, "budgets": [2500], "writers": ["cloze"]},
        "targets": {"budget_recall": 0.8, "iou": 0.8, "recall": 0.6},
        "corpora": {"chatlogs": corpus},
        "pooled": {"cloze": compared, "passage_count": corpus["passage_count"]},
        "pooled_noise_ceiling": corpus["noise_ceiling"],
        "llm_writer_tau[llm_sentences@Qwen2.5-Coder-0.5B-Instruct]": {
            "writer": "llm_sentences",
            "model": "embedded:gguf:qwen0.5b.gguf:491400064",
            "corpora": {
                "chatlogs": {
                    "compared": {m: _cell(0.81) for m in MEASURES},
                    "probe": {"written": 78, "requested": 100},
                    "seconds": 846.0,
                    "requests": 128,
                    "requests_sent": 128,
                }
            },
            "pooled": {m: _cell(0.81) for m in MEASURES},
        },
        "llm_writer[llm_sentences@Qwen2.5-Coder-0.5B-Instruct]": {
            "Qwen": {
                "model": "embedded:gguf:qwen0.5b.gguf:491400064",
                "seconds_per_request": {"median": 9.53, "n": 11, "min": 7.12, "max": 18.67},
            }
        },
    }


def test_pooled_table_has_every_writer_the_baseline_ceiling_and_targets():
    text = "\n".join(probe_section(_record()))
    assert "| writer | recall@5 | IoU@5 | budget 2.5 k |" in text
    assert "| cloze (1 corpora) | +0.50 [+0.30, +0.60] · 3/4 |" in text
    assert (
        "| llm_sentences (Qwen2.5-Coder-0.5B-Instruct) (1 corpora) | +0.81 [+0.61, +0.91] · 3/4 |"
        in text
    )
    assert "| passage count (baseline) | -0.30 [-0.50, -0.20] · 1/4 |" in text
    assert "| real questions' noise ceiling | +0.62 [+0.20, +1.00] |" in text
    assert "| target | ≥ 0.6 | ≥ 0.8 | ≥ 0.8 |" in text
    assert "commit `0123456789`" in text


def test_per_corpus_rows_and_costs():
    text = "\n".join(probe_section(_record()))
    assert "| chatlogs | cloze | +0.50 · 3/4 | +0.50 · 3/4 | +0.50 · 3/4 |" in text
    assert "| chatlogs | HOPE | +0.33 | – | – |" in text
    assert "| chatlogs | noise ceiling | +0.62 | +0.62 | +0.62 |" in text
    assert "| chatlogs | cloze | 90 of 100 | 0 | 2.8 s (median of 3) |" in text
    llm_row = (
        "| chatlogs | llm_sentences (Qwen2.5-Coder-0.5B-Instruct) | 78 of 100 | 128 | 846.0 s "
        "(128 of 128"
    )
    assert llm_row in text
    assert (
        "- `llm_sentences` with Qwen2.5-Coder-0.5B-Instruct: 9.53 s per request (median of 11"
        in text
    )


def test_sections_of_a_writer_with_two_models_are_both_shown_and_older_keys_still_read():
    record = _record()
    record["llm_writer[llm_sentences]"] = {  # a record written before keys named the model
        "default": {
            "model": "embedded:gguf:SmolLM2-135M-Instruct.Q4_1.gguf:98362432",
            "seconds_per_request": {"median": 1.36, "n": 15, "min": 0.88, "max": 2.03},
        }
    }
    text = "\n".join(probe_section(record))
    assert "- `llm_sentences` with Qwen2.5-Coder-0.5B-Instruct: 9.53 s per request" in text
    assert "- `llm_sentences` with SmolLM2-135M-Instruct.Q4_1.gguf: 1.36 s per request" in text


def test_no_record_owes_the_figures():
    text = "\n".join(probe_section(None))
    assert "Figures owed" in text and "make bench-probe" in text


def test_the_spread_over_question_seeds_is_its_own_table():
    record = _record()
    spread = {"n": 5, "median": 0.45, "min": 0.2, "max": 0.81}
    agree = {"n": 5, "median": 0.85, "min": 0.7, "max": 0.95}
    record["question_seeds"] = {
        "provenance": {"commit": "fedcba9876543210"},
        "seeds": [0, 1, 2, 3, 4],
        "corpora": ["chatlogs"],
        "writers": {
            "cloze": {
                "recall@5": {
                    "pooled_tau": spread,
                    "pooled_agreement": agree,
                    "corpus_tau": {"chatlogs": spread},
                    "tau_met": False,
                    "agreement_met": False,
                }
            }
        },
    }
    text = "\n".join(probe_section(record))
    assert "**Over question draws** (section `question_seeds`, commit `fedcba9876`)" in text
    assert "question seeds 0, 1, 2, 3, 4" in text
    assert "| cloze: τ | +0.45 [+0.20, +0.81] (missed) | – |" in text
    assert "| cloze: pairs agreeing | 85% [70%, 95%] (missed) | – |" in text
    assert "| chatlogs | cloze | +0.45 [+0.20, +0.81] | – |" in text
    assert "Over question draws" not in "\n".join(probe_section(_record()))


def test_the_reading_guide_splits_measures_by_their_targets_over_seeds():
    record = _record()
    record["targets"]["agreement"] = 0.9

    def cell(tau: float, agreement: float, tau_met: bool, agreement_met: bool) -> dict:
        return {
            "pooled_tau": {"n": 5, "median": tau, "min": tau, "max": tau},
            "pooled_agreement": {"n": 5, "median": agreement, "min": agreement, "max": agreement},
            "corpus_tau": {},
            "tau_met": tau_met,
            "agreement_met": agreement_met,
        }

    record["question_seeds"] = {
        "provenance": {"commit": "fedcba9876543210"},
        "seeds": [0, 1, 2],
        "corpora": ["chatlogs"],
        "writers": {
            "cloze": {
                "recall@5": cell(0.33, 0.85, False, False),
                "iou@5": cell(0.9, 0.99, True, True),
                "budget_recall@2500": cell(0.74, 0.98, False, True),
            },
            "keyword": {"recall@5": cell(0.9, 1.0, True, True)},
        },
    }
    text = "\n".join(probe_section(record))
    # The first writer (the record has no default_choice); missed measures from the highest τ
    # down; the ceiling of the weakest.
    assert (
        "Over 3 question draws (`cloze`, pooled medians), the whole ranking follows the real "
        "questions' to the target for IoU@5 (+0.90) and falls short for budget 2.5 k (+0.74), "
        "recall@5 (+0.33) (for recall@5 the real questions follow a resample of themselves "
        "only to +0.62)." in text
    )
    assert (
        "ordered alike to the target (≥ 90%) for IoU@5 (99%), budget 2.5 k (98%), not for "
        "recall@5 (85%):" in text
    )
    assert "How far a probe ranking can be read" not in "\n".join(probe_section(_record()))


def test_the_default_choice_is_its_own_table_and_leads_the_reading_guide():
    record = _record()
    tau = {"n": 3, "median": 0.9, "min": 0.9, "max": 0.9}
    record["question_seeds"] = {
        "provenance": {"commit": "fedcba9876543210"},
        "seeds": [0, 1, 2],
        "corpora": ["chatlogs"],
        "writers": {
            "cloze": {"recall@5": {"pooled_tau": tau, "tau_met": False}},
            "topic": {"recall@5": {"pooled_tau": tau, "tau_met": True}},
        },
        "default_choice": {
            "rule": "by agreement",
            "writers": {
                "cloze": {
                    "measures_agreement_met": 4,
                    "measures": 5,
                    "mean_median_tau": 0.71,
                    "pairs_over_seeds": {"agreeing": 1218, "pairs": 1255},
                },
                "topic": {
                    "measures_agreement_met": 5,
                    "measures": 5,
                    "mean_median_tau": 0.729,
                    "pairs_over_seeds": {"agreeing": 1216, "pairs": 1255},
                },
            },
            "ranked": ["topic", "cloze"],
            "chosen": "topic",
            "default_writer": "cloze",
            "default_is_chosen": False,
        },
    }
    text = "\n".join(probe_section(record))
    assert "**The default writer.** Rule: by agreement." in text
    assert "(`hope.probe.DEFAULT_WRITER`) was `cloze` when the record was written" in text
    assert "| `topic` (chosen) | 5 of 5 | +0.729 | 1216/1255 |" in text
    assert text.index("| `topic` (chosen)") < text.index("| `cloze` | 4 of 5 | +0.710 |")
    # The reading guide speaks of the chosen writer, not the first one in the spread.
    assert "Over 3 question draws (`topic`, pooled medians)" in text


def test_the_held_out_choice_is_its_own_table():
    record = _record()
    on = {m: {"tau": 0.62, "agreeing": 9, "pairs": 10} for m in MEASURES}
    record["question_seeds"] = {
        "seeds": [0, 1],
        "writers": {},
        "held_out": {
            "chosen_on_all_corpora": "topic",
            "folds": {
                "chatlogs": {"chosen": "topic", "on_left_out": on},
                "wikitexts": {
                    "chosen": "keyword",
                    "on_left_out": on | {"recall@5": {"tau": None, "agreeing": 0, "pairs": 0}},
                },
            },
            "same_choice": 1,
            "corpora": 2,
            "tau_held_out": {m: 0.62 for m in MEASURES},
            "tau_all_corpora": {m: 0.7 for m in MEASURES},
            "pairs_all_corpora": {m: {"agreeing": 19, "pairs": 20} for m in MEASURES},
            "targets_met_all_corpora": {
                m: {"tau_met": True, "agreement_met": True} for m in MEASURES
            },
            "pairs_held_out": {m: {"agreeing": 18, "pairs": 20} for m in MEASURES},
            "targets_met_held_out": {
                m: {"tau_met": m == "recall@5", "agreement_met": True} for m in MEASURES
            },
        },
    }
    text = "\n".join(probe_section(record))
    assert "1 of 2 picks are `topic`, the writer chosen on all of them." in text
    assert "| chatlogs | `topic` | +0.62 · 9/10 | +0.62 · 9/10 | +0.62 · 9/10 |" in text
    assert "| wikitexts | `keyword` | – | +0.62 · 9/10 | +0.62 · 9/10 |" in text
    # (met) needs both targets: recall@5's tau target is 0.6, the others' 0.8
    assert (
        "| mean, held out |  | +0.62 · 18/20 (met) | +0.62 · 18/20 (missed) "
        "| +0.62 · 18/20 (missed) |" in text
    )
    assert (
        "| mean, `topic` (chosen on all) |  | +0.70 · 19/20 (met) | +0.70 · 19/20 (met) "
        "| +0.70 · 19/20 (met) |" in text
    )
    assert "On a corpus the choice has not seen" not in "\n".join(probe_section(_record()))
    # no writers over seeds, so no reading guide to end with the held-out figures
    assert "On a corpus the choice did not see" not in text

    tau = {"n": 2, "median": 0.9, "min": 0.9, "max": 0.9}
    record["question_seeds"]["writers"] = {"topic": {"iou@5": {"pooled_tau": tau, "tau_met": True}}}
    text = "\n".join(probe_section(record))
    assert (
        "On a corpus the choice did not see (each of the 2 corpora left out in turn, the table "
        "above), the writer picked on the others meets both targets for recall@5 (+0.62) and "
        "misses for IoU@5 (+0.62), budget 2.5 k (+0.62): on a corpus of your own, expect these "
        "rather than the figures above." in text
    )


def test_what_a_perfect_probe_would_score_is_its_own_table_and_ends_the_reading_guide():
    record = _record()

    def odds(chance: float, every: float, all_measures: float) -> dict:
        cell = {
            "tau_target": 0.8,
            "corpora": {"chatlogs": {"chance": chance, "median_tau": 0.81, "tau_counts": {}}},
            "pooled": {"chance": chance, "median_tau": 0.81},
            "every_corpus_and_pooled": every,
        }
        measures = {m: cell | {"tau_target": 0.6 if m == "recall@5" else 0.8} for m in MEASURES}
        return {"replicates": 1000, "measures": measures, "all_measures": all_measures}

    record["perfect_probe"] = {
        "provenance": {"commit": "fedcba9876543210"},
        "corpora": ["chatlogs"],
        "real_questions": {"chatlogs": 56},
        "scales": {"1": odds(0.572, 0.354, 0.017), "8": odds(0.91, 0.906, 0.727)},
    }
    text = "\n".join(probe_section(record))
    assert (
        "**What a perfect probe would score** (section `perfect_probe`, commit `fedcba9876`)"
        in (text)
    )
    assert "(1000 resamples, the noise ceiling's)" in text
    assert (
        "| measure | τ target | chatlogs (56 questions) | pooled | every corpus and pooled |"
        in text
    )
    assert "| recall@5 | ≥ 0.6 | 57% (+0.81) | 57% (+0.81) | 35% |" in text
    assert "| budget 2.5 k | ≥ 0.8 | 57% (+0.81) | 57% (+0.81) | 35% |" in text
    assert "| all measures at once |  |  |  | 2% |" in text
    assert "| as many as the set has (56 per corpus) | 35% | 35% | 35% | 2% |" in text
    assert "| 8 × as many (448 per corpus) | 91% | 91% | 91% | 73% |" in text
    # no seed spread, so no reading guide for the sentence to end
    assert "The labelled questions limit what any probe can show" not in text

    tau = {"n": 2, "median": 0.9, "min": 0.9, "max": 0.9}
    record["question_seeds"] = {
        "seeds": [0, 1],
        "writers": {"topic": {"iou@5": {"pooled_tau": tau, "tau_met": True}}},
    }
    text = "\n".join(probe_section(record))
    assert (
        "The labelled questions limit what any probe can show: a probe that ranked the chunkers "
        "exactly as their population does would meet every τ target on every corpus and pooled "
        "in 2% of draws of these questions, and in 73% with 8 times as many (the tables below)."
        in text
    )
    assert "What a perfect probe would score" not in "\n".join(probe_section(_record()))
