"""Metric cards of the cheap label-free baselines: what a number means before anyone reads it."""

from __future__ import annotations

from dataclasses import asdict, dataclass

ADAPTIVE_CHUNKING = (
    "de Moura Junior, Lelong & Blangero, 'Adaptive Chunking: Optimizing Chunking-Method "
    "Selection for RAG' (Ekimetrics, LREC 2026)"
)


@dataclass(frozen=True)
class MetricCard:
    name: str
    range: str
    direction: str
    source: str
    procedure: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


SIZE_COMPLIANCE = MetricCard(
    name="size_compliance",
    range="[0, 1]",
    direction="higher is better",
    source=ADAPTIVE_CHUNKING,
    procedure=(
        "share of passages whose length in characters lies in [min_chars, max_chars]; the paper "
        "counts tokens against its own bounds, the bounds here are a setting (default 100-1100 "
        "characters, this project's choice, not the paper's)"
    ),
)
INTRA_CHUNK_COHESION = MetricCard(
    name="intra_chunk_cohesion",
    range="[-1, 1]",
    direction="higher is better",
    source=ADAPTIVE_CHUNKING,
    procedure=(
        "per passage, the mean cosine between each of its sentences and the passage's own "
        "embedding; averaged over passages"
    ),
)
CONTEXTUAL_COHERENCE = MetricCard(
    name="contextual_coherence",
    range="[-1, 1]",
    direction="higher is better",
    source=ADAPTIVE_CHUNKING,
    procedure=(
        "per passage, the cosine between the passage and its surrounding window (the previous "
        "and the next passage's text joined; one neighbour at either end); averaged over "
        "passages; undefined (NaN) for a single passage"
    ),
)
PASSAGE_COUNT = MetricCard(
    name="passage_count",
    range="[1, inf)",
    direction=(
        "none intrinsic; more passages (smaller ones) went with higher budget recall in "
        "../shared/notes/validity-findings.md (tau +0.62), so it is read as higher is better"
    ),
    source="the trivial baseline of ../shared/notes/validity-findings.md",
    procedure="the number of passages of the chunking",
)

CARDS = {
    card.name: card
    for card in (SIZE_COMPLIANCE, INTRA_CHUNK_COHESION, CONTEXTUAL_COHERENCE, PASSAGE_COUNT)
}
