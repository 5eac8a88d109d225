"""Names of the analysed quantities and the paper's published numbers (section 4.3, 5).

The published values are copied from the paper (Table 2, section 5) as collected in the project's
notes (``shared/notes/paper-experiment.md``), so that every table can show them beside ours.
"""

from __future__ import annotations

KEYS = ("doc_id", "chunker")

# RAG indicators (rows of Table 2), in the paper's order, with their abbreviations.
INDICATORS: dict[str, str] = {
    "answer_correctness": "AC",
    "factual_correctness": "FC",
    "context_recall": "CR",
    "response_relevancy": "RR",
}

# HOPE and its sub-metrics, in the paper's column order.
HOPE_METRICS: dict[str, str] = {
    "hope": "HOPE",
    "concept_unity": "ζ_con",
    "semantic_independence": "ζ_sem",
    "information_preservation": "ζ_inf",
}

# Columns of Table 2: the BLEU baseline, then HOPE and its sub-metrics.
PREDICTORS: dict[str, str] = {"bleu": "BLEU", **HOPE_METRICS}

# ASCII names for metric keys (dvc metrics, MLflow), which do not take ζ well.
ASCII_LABELS: dict[str, str] = {
    "bleu": "BLEU",
    "hope": "HOPE",
    "concept_unity": "zeta_con",
    "semantic_independence": "zeta_sem",
    "information_preservation": "zeta_inf",
}

# Labels for matplotlib (mathtext) and LaTeX; the plain labels above serve CSV and markdown.
MATH_LABELS: dict[str, str] = {
    "hope": "HOPE",
    "concept_unity": r"$\zeta_{con}$",
    "semantic_independence": r"$\zeta_{sem}$",
    "information_preservation": r"$\zeta_{inf}$",
    "bleu": "BLEU",
}

# Table 2 of the paper: Pearson r and whether it was marked significant (p < 0.05).
PAPER_TABLE2: dict[tuple[str, str], tuple[float, bool]] = {
    ("answer_correctness", "bleu"): (-0.010, False),
    ("answer_correctness", "hope"): (0.024, False),
    ("answer_correctness", "concept_unity"): (-0.024, False),
    ("answer_correctness", "semantic_independence"): (0.105, True),
    ("answer_correctness", "information_preservation"): (0.002, False),
    ("factual_correctness", "bleu"): (-0.015, False),
    ("factual_correctness", "hope"): (0.080, True),
    ("factual_correctness", "concept_unity"): (-0.036, False),
    ("factual_correctness", "semantic_independence"): (0.136, True),
    ("factual_correctness", "information_preservation"): (0.053, False),
    ("context_recall", "bleu"): (-0.011, False),
    ("context_recall", "hope"): (0.011, False),
    ("context_recall", "concept_unity"): (-0.103, True),
    ("context_recall", "semantic_independence"): (0.117, True),
    ("context_recall", "information_preservation"): (-0.010, False),
    ("response_relevancy", "bleu"): (0.027, False),
    ("response_relevancy", "hope"): (0.099, True),
    ("response_relevancy", "concept_unity"): (-0.068, True),
    ("response_relevancy", "semantic_independence"): (0.054, False),
    ("response_relevancy", "information_preservation"): (0.091, True),
}

# Section 5: gain from minimum to maximum semantic independence (Figure 7), in percent. The paper
# reports no gain for CR and RR.
PAPER_GAINS_PCT: dict[str, float] = {"answer_correctness": 21.1, "factual_correctness": 56.2}

# Section 5.1: concept unity values occupy about 10 % of their range (Figure 6).
PAPER_CONCEPT_UNITY_RANGE = 0.10

# The paper's population: 131 documents x 8 chunkers.
PAPER_PAIRS = 1048

SIGNIFICANCE_LEVEL = 0.05
