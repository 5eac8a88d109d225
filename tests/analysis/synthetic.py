"""Synthetic pipeline tables (scores, BLEU, RAGAS, Table 1) shaped like the real stage outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

DOMAINS = ("news", "arxiv", "wiki", "manuals", "debates", "tos", "cord19")
CHUNKERS = (
    "fixed_2000_o500",
    "fixed_2000_o0",
    "fixed_500_o125",
    "fixed_500_o0",
    "recursive_2000",
    "recursive_500",
    "semantic_minilm",
    "semantic_mpnet",
)


def make_tables(
    docs_per_domain: int = 1,
    chunkers: tuple[str, ...] = CHUNKERS,
    *,
    seed: int = 0,
    nan_scores: int = 0,
) -> dict[str, pd.DataFrame]:
    """Tables where FC and AC rise with ζ_sem (FC more steeply), and ζ_con spans a narrow range."""
    rng = np.random.default_rng(seed)
    scores, bleu, ragas = [], [], []
    for domain in DOMAINS:
        for d in range(docs_per_domain):
            doc_id = f"{domain}-{d:03d}"
            doc_effect = rng.normal(0, 0.05)
            for c, chunker in enumerate(chunkers):
                sem = float(np.clip(0.3 + 0.06 * c + doc_effect + rng.normal(0, 0.08), 0, 1))
                con = float(np.clip(0.82 + rng.normal(0, 0.02), 0, 1))
                inf = float(np.clip(0.6 + rng.normal(0, 0.1), 0, 1))
                scores.append(
                    {
                        "doc_id": doc_id,
                        "domain": domain,
                        "chunker": chunker,
                        "n_passages": int(rng.integers(2, 30)),
                        "hope": (sem + con + inf) / 3,
                        "concept_unity": con,
                        "semantic_independence": sem,
                        "information_preservation": inf,
                        "concept_unity_scored": 10,
                        "concept_unity_failed": 0,
                    }
                )
                bleu.append(
                    {
                        "doc_id": doc_id,
                        "chunker": chunker,
                        "bleu": float(80 + rng.normal(0, 5)),
                        "signature": "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0",
                    }
                )
                ragas.append(
                    {
                        "doc_id": doc_id,
                        "chunker": chunker,
                        "domain": domain,
                        "n_questions": 5,
                        "answer_correctness": float(0.45 + 0.15 * sem + rng.normal(0, 0.05)),
                        "factual_correctness": float(0.2 + 0.3 * sem + rng.normal(0, 0.05)),
                        "context_recall": float(0.6 + 0.1 * sem + rng.normal(0, 0.08)),
                        "response_relevancy": float(0.8 + 0.1 * inf + rng.normal(0, 0.05)),
                        "answer_correctness_n": 5,
                        "answer_correctness_n_failed": 0,
                    }
                )
    scores_df = pd.DataFrame(scores)
    if nan_scores:
        rows = rng.choice(len(scores_df), size=nan_scores, replace=False)
        scores_df.loc[rows, ["hope", "concept_unity"]] = np.nan
    n_docs = docs_per_domain * len(DOMAINS)
    table1 = pd.DataFrame(
        [
            {
                "domain": d,
                "data_type": d.title(),
                "documents": docs_per_domain,
                "paper_documents": 10,
                "source": "synthetic & test_source",
                "mean_chars": 2500.5,
                "median_chars": 2500,
            }
            for d in DOMAINS
        ]
        + [
            {
                "domain": "total",
                "data_type": "Total",
                "documents": n_docs,
                "paper_documents": 70,
                "source": "",
                "mean_chars": 2500.5,
                "median_chars": 2500,
            }
        ]
    )
    return {
        "scores": scores_df,
        "bleu": pd.DataFrame(bleu),
        "ragas": pd.DataFrame(ragas),
        "table1": table1,
    }


def write_tables(tables: dict[str, pd.DataFrame], root: Path) -> dict[str, Path]:
    """Write the tables where and how the pipeline stages write them; returns the paths."""
    paths = {
        "scores": root / "data/hope/scores.csv",
        "bleu": root / "data/bleu/bleu.jsonl",
        "ragas": root / "data/ragas/per_doc_chunker.csv",
        "table1": root / "data/prepared/table1.csv",
    }
    for path in paths.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    tables["scores"].to_csv(paths["scores"], index=False)
    tables["ragas"].to_csv(paths["ragas"], index=False)
    tables["table1"].to_csv(paths["table1"], index=False)
    with open(paths["bleu"], "w", encoding="utf-8") as handle:
        for record in tables["bleu"].to_dict("records"):
            handle.write(json.dumps(record) + "\n")
    return paths


PROBE_MEASURE = "budget_recall@2500"


def _probe_cell(mean: float, low: float, high: float) -> dict:
    return {"status": "ok", "measures": {PROBE_MEASURE: {"mean": mean, "low": low, "high": high}}}


def _probe_scope(
    cells: dict, ranking: list[str], n_questions: int, pairs: list | None = None
) -> dict:
    return {
        "n_questions": n_questions,
        "chunkings": cells,
        "rankings": {PROBE_MEASURE: ranking},
        "pairs": {PROBE_MEASURE: pairs or []},
    }


def _probe_pair(a: str, b: str, better: str | None) -> dict:
    return {"pair": [a, b], "significant": better is not None, "better": better}


def make_probe_report(chunkers=("fixed_500_o0", "semantic_minilm")) -> dict:
    """A probe stage report (data/probe/results.json) for two domains and the pooled ranking; the
    second chunker failed on wiki (not evaluable). On news the first is significantly better;
    pooled, the second leads without a significant difference."""
    a, b = chunkers
    news = _probe_scope(
        {a: _probe_cell(0.9, 0.8, 0.95), b: _probe_cell(0.7, 0.6, 0.8)},
        [a, b],
        10,
        [_probe_pair(a, b, a)],
    )
    wiki = _probe_scope(
        {a: _probe_cell(0.5, 0.4, 0.6), b: {"status": "failed", "reason": "x"}}, [a], 12
    )
    pooled = _probe_scope(
        {a: _probe_cell(0.6, 0.5, 0.7), b: _probe_cell(0.65, 0.55, 0.75)},
        [b, a],
        22,
        [_probe_pair(a, b, None)],
    )
    return {
        "settings": {"k": 5, "budgets": [1000, 2500, 5000]},
        "primary_measure": PROBE_MEASURE,
        "domains": {"news": news, "wiki": wiki},
        "pooled": pooled,
    }
