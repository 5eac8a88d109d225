"""Cheap label-free baselines beside HOPE: embedding-only, no LLM.

Size compliance, intra-chunk cohesion and contextual coherence from Ekimetrics' Adaptive Chunking
(LREC 2026), and the number of passages. If HOPE cannot beat these, users must know. Each metric
has a card (range, direction, source) in :mod:`hope.baselines.cards`.
"""

from hope.baselines.baseline_measures import (
    context_windows,
    contextual_coherence,
    intra_chunk_cohesion,
    passage_count,
    size_compliance,
)
from hope.baselines.cards import CARDS, MetricCard
from hope.baselines.compute import BASELINES, compute_baselines

__all__ = [
    "BASELINES",
    "CARDS",
    "MetricCard",
    "compute_baselines",
    "context_windows",
    "contextual_coherence",
    "intra_chunk_cohesion",
    "passage_count",
    "size_compliance",
]
