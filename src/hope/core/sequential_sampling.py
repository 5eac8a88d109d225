"""``hope.sampling.mode: sequential`` (BEYOND THE PAPER): draw focus passages and segments in
seeded rounds and stop when the answer is known.

The full run scores every item of two populations: the chunking's focus passages (concept unity
and semantic independence; every passage in the paper) and the document's segments (information
preservation). The sequential run draws the same items, with the same seeds and so the same
requests, in a seeded order, ``round_focus_passages`` and ``round_segments`` at a time. After each
round, each sub-metric gets an anytime-valid interval for its full-run value
(``hope.core.metrics.confidence_sequence``, at ``alpha / 6``), and HOPE the weighted mean of those
bounds, so HOPE's interval holds at every round with probability at least ``1 - alpha / 2``. A
chunking stops when

- ``exhausted``: every item is drawn (its scores are then the full run's);
- ``epsilon``: HOPE's half-width is at most ``epsilon``;
- ``decided``: it is scored together with other chunkings of the same document
  (``HopeEvaluator.aevaluate_chunkings``) and its interval is disjoint from each of theirs, so
  every comparison it takes part in is decided. Such a decision is wrong only if one of two
  intervals misses, with probability at most ``alpha``.

Decisions are taken between rounds only, when every chunking of the group has finished the round,
so they do not depend on which request the server answered first. A round answered with
placeholders (a batch export, ``hope.core.model_interface.placeholder_answers``) stops every
chunking of its board with ``AWAITING``: the next round is drawn once the answers are imported.

A failed item (recorded with its reason, as in the full run) is not part of the mean: each failure
seen shrinks its population by one.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hope.core.hope_settings import HopeSettings, SamplingSettings
from hope.core.metrics.confidence_sequence import weighted_interval, wor_confidence_sequence
from hope.core.result import METRICS
from hope.core.seeding import derive_seed

# The stop of a round answered with placeholders (a batch export); never a result's final reason.
AWAITING = "awaiting answers"
# HOPE's interval holds at 1 - alpha/2: one third of that error for each of the three parts.
SUB_METRIC_SHARE = 1 / 6


def draw_order(items: Sequence[Any], seed: int, *parts: object) -> list[Any]:
    """``items`` in a seeded random order (the same items and parts give the same order)."""
    rng = np.random.default_rng(derive_seed(seed, "sequential", *parts))
    return [items[int(i)] for i in rng.permutation(len(items))]


def passages_digest(passages: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join(passages).encode("utf-8")).hexdigest()


def score_range(settings: HopeSettings, metric: str) -> tuple[float, float]:
    """The range every item's score of ``metric`` lies in: cosines are at most 1 and, clipped as
    the paper clips them, at least 0; information preservation is 0 or 1 per segment."""
    if metric == "information_preservation" or settings.aggregation.clip != "none":
        return 0.0, 1.0
    return -1.0, 1.0


@dataclass
class MetricDraws:
    """One sub-metric's draws: the scores of the items that scored, in draw order, and how many
    items its population has left once the failures seen are taken out."""

    population: int
    scores: list[float] = field(default_factory=list)
    failed: int = 0

    def interval(self, alpha: float, bounds: tuple[float, float]) -> tuple[float, float]:
        population = self.population - self.failed
        if not self.scores or population <= 0:
            return bounds
        return wor_confidence_sequence(
            self.scores, population, alpha, low=bounds[0], high=bounds[1]
        )[-1]


@dataclass
class SequentialState:
    """Where one chunking's sequential sampling stands: its draw orders, what it has drawn and
    scored, and its intervals after each round."""

    settings: HopeSettings
    focus_order: list[int]
    segment_order: list[Any]
    focus_drawn: int = 0
    segments_drawn: int = 0
    draws: dict[str, MetricDraws] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    stopped: str | None = None

    def __post_init__(self) -> None:
        self.draws = {
            "concept_unity": MetricDraws(len(self.focus_order)),
            "semantic_independence": MetricDraws(len(self.focus_order)),
            "information_preservation": MetricDraws(len(self.segment_order)),
        }

    @property
    def sampling(self) -> SamplingSettings:
        return self.settings.sampling

    @property
    def exhausted(self) -> bool:
        return self.focus_drawn >= len(self.focus_order) and self.segments_drawn >= len(
            self.segment_order
        )

    def next_round(self) -> tuple[list[int], list[Any]]:
        """The focus passages and segments of the next round (marked as drawn)."""
        focus = self.focus_order[
            self.focus_drawn : self.focus_drawn + self.sampling.round_focus_passages
        ]
        segments = self.segment_order[
            self.segments_drawn : self.segments_drawn + self.sampling.round_segments
        ]
        self.focus_drawn += len(focus)
        self.segments_drawn += len(segments)
        return focus, segments

    def add(self, metric: str, records: Sequence[dict[str, Any]]) -> None:
        """A round's evidence records of ``metric``, in draw order."""
        draws = self.draws[metric]
        for record in records:
            if record["status"] != "ok":
                draws.failed += 1
            elif metric == "information_preservation":
                draws.scores.append(1.0 if record["correct"] else 0.0)
            elif record["score"] is not None:
                draws.scores.append(float(record["score"]))
            else:
                draws.failed += 1

    def intervals(self) -> dict[str, tuple[float, float]]:
        alpha = self.sampling.alpha * SUB_METRIC_SHARE
        parts = {
            name: self.draws[name].interval(alpha, score_range(self.settings, name))
            for name in METRICS
        }
        parts["hope"] = weighted_interval(
            [parts[name] for name in METRICS], self.settings.aggregation.hope_weights
        )
        return parts

    def close_round(self) -> dict[str, tuple[float, float]]:
        """The intervals after the round just scored, kept in the history."""
        parts = self.intervals()
        self.history.append(
            {
                "round": len(self.history) + 1,
                "focus_passages": self.focus_drawn,
                "segments": self.segments_drawn,
                **{name: list(bounds) for name, bounds in parts.items()},
            }
        )
        return parts

    def own_stop(self) -> str | None:
        """Why this chunking stops by itself after the round just closed, or None."""
        if self.exhausted:
            return "exhausted"
        low, high = self.history[-1]["hope"]
        if (high - low) / 2 <= self.sampling.epsilon:
            return "epsilon"
        return None

    def record(self) -> dict[str, Any]:
        """What the result keeps: how many items were drawn of how many, and why it stopped."""
        last = self.history[-1] if self.history else {}
        return {
            "mode": "sequential",
            "alpha": self.sampling.alpha,
            "epsilon": self.sampling.epsilon,
            "stopped": self.stopped,
            "rounds": len(self.history),
            "drawn": {"focus_passages": self.focus_drawn, "segments": self.segments_drawn},
            "population": {
                "focus_passages": len(self.focus_order),
                "segments": len(self.segment_order),
            },
            "intervals": {name: last.get(name) for name in ("hope", *METRICS)},
            "history": self.history,
        }


def decided(a: Sequence[float], b: Sequence[float]) -> bool:
    """Two intervals that do not overlap: which of the two is higher is decided."""
    return a[0] > b[1] or b[0] > a[1]


class RoundBoard:
    """The chunkings of one document scored together: each reports its round, and when every
    chunking still sampling has reported, each learns whether it stops (``SequentialState``'s
    reasons, and ``decided``). A board of one chunking decides alone."""

    def __init__(self, members: Sequence[str]):
        if len(set(members)) != len(members):
            raise ValueError(f"duplicate chunkings on one board: {list(members)}")
        self.active = set(members)
        self.latest: dict[str, tuple[float, float]] = {}
        self._reports: dict[str, SequentialState] = {}
        self._verdicts: dict[str, str | None] = {}
        self._awaiting = False
        self._round_done = asyncio.Event()

    async def report(
        self, member: str, state: SequentialState, *, awaiting: bool = False
    ) -> str | None:
        """Close ``member``'s round; wait for the others; return why it stops, or None.

        ``awaiting``: some of the round's answers were placeholders (a batch export): every
        chunking of the board then stops with ``AWAITING``, since no decision can rest on them
        and the next round is exported only once this one's answers are imported."""
        if member not in self.active:
            raise ValueError(f"{member!r} is not sampling on this board")
        self.latest[member] = tuple(state.history[-1]["hope"])  # type: ignore[assignment]
        self._reports[member] = state
        self._awaiting = self._awaiting or awaiting
        done = self._round_done
        if set(self._reports) == self.active:
            self._decide()
            self._round_done = asyncio.Event()
            done.set()
        else:
            await done.wait()
        return self._verdicts[member]

    def leave(self, member: str) -> None:
        """``member`` ended without reporting (it failed): the others stop waiting for it."""
        self.active.discard(member)
        if self.active and set(self._reports) == self.active:
            done = self._round_done
            self._decide()
            self._round_done = asyncio.Event()
            done.set()

    def _decide(self) -> None:
        verdicts: dict[str, str | None] = {}
        for member, state in self._reports.items():
            reason = AWAITING if self._awaiting else state.own_stop()
            others = [name for name in self.latest if name != member]
            if reason is None and others:
                mine = self.latest[member]
                if all(decided(mine, self.latest[name]) for name in others):
                    reason = "decided"
            verdicts[member] = reason
        # Kept per member, not replaced: a member that stopped may read its verdict after the
        # others already closed their next round.
        self._verdicts.update(verdicts)
        self._reports = {}
        self.active -= {member for member, reason in verdicts.items() if reason is not None}


__all__ = [
    "AWAITING",
    "RoundBoard",
    "SequentialState",
    "decided",
    "draw_order",
    "passages_digest",
    "score_range",
]
