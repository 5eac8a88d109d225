"""Which code writer the probe's record makes the default, and how that choice fares on a corpus
it was not made on (bench_probe.py --question-seeds; issue 32).

The issue's targets will also be checked on a corpus that is not in the repository, so a choice
made on the four corpora is only worth what it keeps on a fifth. ``held_out_choice`` estimates
that by leaving each corpus out in turn: the rule picks a writer on the other three, and the
figures are that writer's on the corpus left out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import harness
from hope.probe import DEFAULT_WRITER
from probe_vs_real import TARGETS, targets_met

WRITER_CHOICE_RULE = (
    "the issue's rule is the best measured agreement per minute. Every code writer's own work "
    "takes seconds (the main run's timing_s) and the LLM writers' take seconds per question "
    "(llm_writer sections) while agreeing less, so the code writers are ranked by agreement: "
    "first by the number of measures whose median pair agreement over question seeds meets the "
    "target, then by the mean over measures of the median pooled tau. pairs_over_seeds (agreeing "
    "pairs summed over measures and seeds) is shown beside them and not used"
)

HELD_OUT_RULE = (
    "each corpus left out in turn: the default-writer rule applied to the other corpora's "
    "question-seed results picks a writer, and that writer's figures on the corpus left out are "
    "kept (tau: the median over question seeds; pairs: summed over seeds). tau_held_out: per "
    "measure, the mean over the corpora left out of the picked writer's tau; tau_all_corpora: "
    "the same mean for the writer picked on all corpora, whose choice has seen each of them; "
    "pairs_* sum the pairs the same way, and targets_met_* judge both as the main run's "
    "pooled_targets do. "
    "Their difference is the optimism of choosing and judging on the same corpora"
)


def seed_pooled(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """One seed's cells of one measure over corpora, pooled as the main run pools them (the mean
    of the finite tau, pairs summed), without the bootstrap interval."""
    taus = [c["tau"] for c in cells if c.get("tau") is not None and math.isfinite(c["tau"])]
    agreeing = sum(c.get("agreeing") or 0 for c in cells)
    pairs = sum(c.get("pairs") or 0 for c in cells)
    return {
        "tau": float(np.mean(taus)) if taus else None,
        "agreement": agreeing / pairs if pairs else None,
        "agreeing": agreeing,
        "pairs": pairs,
    }


def over_seeds(
    found: dict[Any, dict[str, dict[str, Any]]], measures: dict[str, str]
) -> dict[str, Any]:
    """One writer's comparisons per question seed (seed -> corpus -> measure -> a cell with
    ``tau``, ``agreeing`` and ``pairs``) as the spread over seeds of the pooled tau and agreement
    and of each corpus's tau, with the targets judged on the medians."""
    out: dict[str, Any] = {}
    corpora = sorted({corpus for by_corpus in found.values() for corpus in by_corpus})
    for measure, family in measures.items():
        per_seed = [
            seed_pooled([cells[measure] for cells in by_corpus.values()])
            for by_corpus in found.values()
        ]
        taus = [c["tau"] for c in per_seed if c["tau"] is not None]
        agreements = [c["agreement"] for c in per_seed if c["agreement"] is not None]
        cell: dict[str, Any] = {
            "pooled_tau": harness.spread(taus) if taus else None,
            "pooled_agreement": harness.spread(agreements) if agreements else None,
            "pairs_over_seeds": {
                "agreeing": sum(c["agreeing"] for c in per_seed),
                "pairs": sum(c["pairs"] for c in per_seed),
            },
            "corpus_tau": {
                corpus: harness.spread(
                    [
                        by_corpus[corpus][measure]["tau"]
                        for by_corpus in found.values()
                        if by_corpus[corpus][measure]["tau"] is not None
                    ]
                )
                for corpus in corpora
            },
        }
        cell["tau_met"] = bool(taus) and cell["pooled_tau"]["median"] >= TARGETS[family]
        cell["agreement_met"] = (
            not agreements or cell["pooled_agreement"]["median"] >= TARGETS["agreement"]
        )
        out[measure] = cell
    return out


def writer_choice(writers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Which code writer the seed spread (``over_seeds`` per writer) makes the default, by
    ``WRITER_CHOICE_RULE``, with the figures it ranks on; ``default_is_chosen`` says whether
    ``hope.probe.DEFAULT_WRITER`` is that writer. A writer without any tau ranks last."""
    summary: dict[str, dict[str, Any]] = {}
    for writer, cells in writers.items():
        taus = [c["pooled_tau"]["median"] for c in cells.values() if c.get("pooled_tau")]
        summary[writer] = {
            "measures_agreement_met": sum(bool(c.get("agreement_met")) for c in cells.values()),
            "measures": len(cells),
            "mean_median_tau": round(float(np.mean(taus)), 4) if taus else None,
            "pairs_over_seeds": {
                key: sum((c.get("pairs_over_seeds") or {}).get(key, 0) for c in cells.values())
                for key in ("agreeing", "pairs")
            },
        }

    def order(writer: str) -> tuple[int, bool, float]:
        tau = summary[writer]["mean_median_tau"]
        return (-summary[writer]["measures_agreement_met"], tau is None, -(tau or 0.0))

    ranked = sorted(summary, key=order)
    chosen = ranked[0] if ranked else None
    return {
        "rule": WRITER_CHOICE_RULE,
        "writers": summary,
        "ranked": ranked,
        "chosen": chosen,
        "default_writer": DEFAULT_WRITER,
        "default_is_chosen": chosen == DEFAULT_WRITER,
    }


def seed_cells(found: dict[int, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """What the record keeps of one writer's comparisons per seed so that the choice can be
    recomputed from it: seed (as text) -> corpus -> measure -> tau, agreeing, pairs."""
    return {
        str(seed): {
            corpus: {
                measure: {key: cell.get(key) for key in ("tau", "agreeing", "pairs")}
                for measure, cell in by_measure.items()
            }
            for corpus, by_measure in by_corpus.items()
        }
        for seed, by_corpus in found.items()
    }


def held_out_choice(
    per_seed: dict[str, dict[str, Any]], measures: dict[str, str], corpora: list[str]
) -> dict[str, Any]:
    """``HELD_OUT_RULE`` on the per-seed cells of every writer (writer -> ``seed_cells``)."""
    if len(corpora) < 2 or not per_seed:
        return {}
    everywhere = writer_choice({w: over_seeds(cells, measures) for w, cells in per_seed.items()})

    def on_corpus(writer: str, corpus: str) -> dict[str, Any]:
        figures = {}
        for measure in measures:
            cells = [by_corpus[corpus][measure] for by_corpus in per_seed[writer].values()]
            taus = [c["tau"] for c in cells if c["tau"] is not None]
            figures[measure] = {
                "tau": float(np.median(taus)) if taus else None,
                "agreeing": sum(c.get("agreeing") or 0 for c in cells),
                "pairs": sum(c.get("pairs") or 0 for c in cells),
            }
        return figures

    folds: dict[str, Any] = {}
    for left_out in corpora:
        rest = {
            writer: {
                seed: {c: cells for c, cells in by_corpus.items() if c != left_out}
                for seed, by_corpus in seeds.items()
            }
            for writer, seeds in per_seed.items()
        }
        choice = writer_choice({w: over_seeds(cells, measures) for w, cells in rest.items()})
        folds[left_out] = {
            "chosen": choice["chosen"],
            "ranked": choice["ranked"],
            "on_left_out": on_corpus(choice["chosen"], left_out),
        }

    def over_corpora(pick: dict[str, str]) -> dict[str, Any]:
        """Per measure, the picked writers' figures on their corpora: the mean of the median
        tau, the pairs summed, and whether both meet the targets."""
        figures = {c: on_corpus(pick[c], c) for c in corpora}
        out: dict[str, Any] = {"tau": {}, "pairs": {}}
        for measure in measures:
            taus = [figures[c][measure]["tau"] for c in corpora]
            taus = [t for t in taus if t is not None]
            out["tau"][measure] = round(float(np.mean(taus)), 4) if taus else None
            out["pairs"][measure] = {
                key: sum(figures[c][measure][key] for c in corpora) for key in ("agreeing", "pairs")
            }
        out["targets_met"] = targets_met(
            {
                m: {
                    "tau": out["tau"][m],
                    "agreement": pairs["agreeing"] / pairs["pairs"] if pairs["pairs"] else None,
                }
                for m, pairs in out["pairs"].items()
            },
            measures,
        )
        return out

    held_out = over_corpora({c: folds[c]["chosen"] for c in corpora})
    all_corpora = over_corpora({c: everywhere["chosen"] for c in corpora})
    return {
        "rule": HELD_OUT_RULE,
        "chosen_on_all_corpora": everywhere["chosen"],
        "folds": folds,
        "same_choice": sum(folds[c]["chosen"] == everywhere["chosen"] for c in corpora),
        "corpora": len(corpora),
        "tau_held_out": held_out["tau"],
        "pairs_held_out": held_out["pairs"],
        "targets_met_held_out": held_out["targets_met"],
        "tau_all_corpora": all_corpora["tau"],
        "pairs_all_corpora": all_corpora["pairs"],
        "targets_met_all_corpora": all_corpora["targets_met"],
    }
