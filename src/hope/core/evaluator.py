"""Scoring one document's passages with HOPE: the evaluator, its models injected.

    from hope import evaluate                   # builds the offline defaults (hope/__init__.py)
    result = evaluate(document_text, passages)  # embedded SmolLM2 + MiniLM, paper profile
    result.hope, result.passages[0]["concept_unity"]["statements"]

Models are injected (any ``ChatModel`` and ``Embedder`` of ``hope.core.model_interface``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hope.core import result_cache
from hope.core.hope_settings import HopeSettings
from hope.core.metrics import equations
from hope.core.metrics.concept_unity import ConceptUnity
from hope.core.metrics.eval_context import EvalContext, text_digest
from hope.core.metrics.information_preservation import InformationPreservation, Segment
from hope.core.metrics.semantic_independence import SemanticIndependence
from hope.core.model_interface import (
    ChatModel,
    Embedder,
    Usage,
    labelled_calls,
    placeholder_answers,
    usage_scope,
)
from hope.core.response_cache import ResponseCache
from hope.core.result import METRICS, HopeResult, MetricCount
from hope.core.seeding import derive_seed
from hope.core.sequential_sampling import (
    RoundBoard,
    SequentialState,
    draw_order,
    passages_digest,
)

log = logging.getLogger(__name__)


class InputError(ValueError):
    """Bad input to an evaluation, with a message naming the offending input."""


def _validate(document: str, passages: Sequence[str], passage_ids: Sequence[str] | None) -> None:
    if not isinstance(document, str) or not document.strip():
        raise InputError("the document is empty or only whitespace")
    if isinstance(passages, str) or len(passages) == 0:
        raise InputError("the passage list is empty")
    for i, passage in enumerate(passages):
        if not isinstance(passage, str) or not passage.strip():
            raise InputError(f"passage {i} is empty or only whitespace")
    if passage_ids is not None:
        if len(passage_ids) != len(passages):
            raise InputError(f"{len(passage_ids)} passage ids for {len(passages)} passages")
        if len(set(passage_ids)) != len(passage_ids):
            raise InputError("passage ids are not unique")


class HopeEvaluator:
    """Binds models and settings; ``aevaluate`` scores one (document, passages) pair.

    Items (a focus passage's concept unity or semantic independence, a segment's information
    preservation) start at most ``max_items`` at a time over every pair this evaluator scores
    concurrently (default: twice the LLM's total concurrency, at least 16): the LLM's queue stays
    full, and a run's memory follows that bound instead of the size of the documents in flight
    (each started item holds its prompts and answers until it is done).

    With ``result_cache``, each finished pair's result is kept there (``hope.core.result_cache``)
    and
    an evaluation of the same pair with the same settings, models and code is read back instead
    of recomputed; its ``usage`` then says ``reused_result`` and counts no LLM work."""

    def __init__(
        self,
        llm: ChatModel,
        embedder: Embedder,
        settings: HopeSettings,
        *,
        result_cache: ResponseCache | None = None,
        max_items: int | None = None,
    ):
        self.llm = llm
        self.embedder = embedder
        self.settings = settings
        self.result_cache = result_cache
        self.reused_results = 0
        if max_items is None:
            llm_settings = getattr(llm, "settings", None)
            max_items = max(16, 2 * getattr(llm_settings, "total_concurrency", 8))
        if max_items < 1:
            raise ValueError(f"max_items must be at least 1, got {max_items}")
        self.max_items = max_items
        self._slots: tuple[int | None, asyncio.Semaphore | None] = (None, None)

    async def _item(self, score: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """``await score(*args)`` once one of the ``max_items`` slots of this event loop is free
        (the coroutine is only created then, so a waiting item holds nothing)."""
        loop_id = id(asyncio.get_running_loop())
        if self._slots[0] != loop_id:
            self._slots = (loop_id, asyncio.Semaphore(self.max_items))
        slots = self._slots[1]
        assert slots is not None
        async with slots:
            return await score(*args)

    async def aevaluate(
        self,
        document: str,
        passages: Sequence[str],
        passage_ids: Sequence[str] | None = None,
        *,
        progress_desc: str = "HOPE",
        board: RoundBoard | None = None,
        member: str = "",
    ) -> HopeResult:
        """``board``/``member``: under ``sampling.mode: sequential``, the chunkings of this
        document scored together and this one's name on it (``aevaluate_chunkings``); such a
        result depends on the others, so it is neither read from nor kept in the result cache."""
        _validate(document, passages, passage_ids)
        settings = self.settings
        agg = settings.aggregation
        if len(passages) < agg.min_passages:
            raise InputError(
                f"{len(passages)} passage(s): the {settings.profile} profile needs at least "
                f"{agg.min_passages}"
            )
        passages = list(passages)
        ids = (
            list(passage_ids) if passage_ids is not None else [str(i) for i in range(len(passages))]
        )
        if self.result_cache is None or board is not None:
            return await self._score(document, passages, ids, progress_desc, board, member)
        started = time.perf_counter()
        key = result_cache.result_key(
            document,
            passages,
            ids,
            settings=settings.model_dump(mode="json"),
            llm=self.llm,
            embedder_identity=self.embedder.identity,
        )
        kept = result_cache.load(self.result_cache, key)
        if kept is not None:
            self.reused_results += 1
            kept.usage = {
                "llm": Usage().to_dict(),
                "wall_time_s": time.perf_counter() - started,
                "reused_result": True,
            }
            return kept
        result = await self._score(document, passages, ids, progress_desc, None, member)
        result_cache.store(self.result_cache, key, result)
        return result

    async def aevaluate_chunkings(
        self,
        document: str,
        chunkings: Mapping[str, tuple[Sequence[str], Sequence[str] | None]],
    ) -> dict[str, HopeResult]:
        """Score several chunkings of one ``document`` (name -> (passages, passage ids)); each
        one's LLM calls are labelled ``chunker=<name>``.

        Under ``sampling.mode: sequential`` they sample in lockstep on one ``RoundBoard``: a
        chunking also stops when each of its comparisons with the others is decided
        (``hope.core.sequential_sampling``). Otherwise each is scored as ``aevaluate`` would."""
        if not chunkings:
            raise InputError("no chunkings to score")
        board = None
        if self.settings.sampling.mode == "sequential":
            board = RoundBoard(list(chunkings))
        results = await asyncio.gather(
            *(
                labelled_calls(
                    self.aevaluate(
                        document, passages, ids, progress_desc=name, board=board, member=name
                    ),
                    chunker=name,
                )
                for name, (passages, ids) in chunkings.items()
            )
        )
        return dict(zip(chunkings, results, strict=True))

    async def _score(
        self,
        document: str,
        passages: list[str],
        ids: list[str],
        progress_desc: str,
        board: RoundBoard | None,
        member: str,
    ) -> HopeResult:
        settings = self.settings
        agg = settings.aggregation
        scope_token = usage_scope.set(Usage())
        started = time.perf_counter()

        focus = focus_indices(passages, settings.focus_passages, settings.seed)
        ctx = EvalContext(self.llm, self.embedder, settings)
        ip = InformationPreservation(ctx)
        segments = ip.segments(document)
        if settings.progress:
            from tqdm.auto import tqdm

            ctx.progress = tqdm(
                total=2 * len(focus) + len(segments), desc=progress_desc, unit="item", leave=False
            )
        state: SequentialState | None = None
        try:
            # The passages go on the similarity grid once for the whole chunking; every retrieval
            # (each question's P_q, each segment's P_st) is then one product against it.
            index = equations.PassageIndex(await ctx.embed(passages))
            cu, si = ConceptUnity(ctx), SemanticIndependence(ctx)
            item = self._item
            cu_name, si_name, ip_name = METRICS

            async def score_items(
                focus: Sequence[int], segments: Sequence[Segment]
            ) -> tuple[list[dict[str, Any]], ...]:
                cu_task = asyncio.gather(
                    *(
                        labelled_calls(item(cu.score_passage, i, passages[i]), metric=cu_name)
                        for i in focus
                    )
                )
                si_task = asyncio.gather(
                    *(
                        labelled_calls(
                            item(si.score_passage, i, passages, index, ids), metric=si_name
                        )
                        for i in focus
                    )
                )
                ip_task = asyncio.gather(
                    *(
                        labelled_calls(
                            item(ip.score_segment, document, s, passages, index, ids),
                            metric=ip_name,
                        )
                        for s in segments
                    )
                )
                return tuple(await asyncio.gather(cu_task, si_task, ip_task))

            if settings.sampling.mode == "sequential":
                order_seed = settings.sampling.order_seed
                if order_seed is None:
                    order_seed = settings.seed
                state = SequentialState(
                    settings,
                    draw_order(focus, order_seed, "focus", passages_digest(passages)),
                    draw_order(segments, order_seed, "segments", text_digest(document)),
                )
                board = board or RoundBoard([member])
                cu_ev, si_ev, ip_ev, focus, segments = await _sample_in_rounds(
                    state, board, member, score_items
                )
            else:
                cu_ev, si_ev, ip_ev = await score_items(focus, segments)
        finally:
            if ctx.progress is not None:
                ctx.progress.close()
            llm_usage = usage_scope.get()
            usage_scope.reset(scope_token)

        warnings: list[str] = []
        if absent := absent_passages(document, passages):
            warnings.append(absent_warning([ids[i] for i in absent], len(passages)))
        if not segments:
            warnings.append("the document has no sentences to sample for information preservation")
        con, _ = equations.corpus_mean(
            [e["score"] for e in cu_ev], drop_zero=agg.drop_zero_passage_scores
        )
        sem, _ = equations.corpus_mean(
            [e["score"] for e in si_ev], drop_zero=agg.drop_zero_passage_scores
        )
        correct = [r["correct"] for r in ip_ev if r["status"] == "ok"]
        inf = equations.information_preservation(correct) if correct else math.nan
        for name, value in zip(METRICS, (con, sem, inf), strict=True):
            if math.isnan(value):
                message = f"{name} is undefined (NaN): no item could be scored"
                warnings.append(message)
                log.warning(message)
        hope = equations.hope_score(
            con, sem, inf, weights=agg.hope_weights, zero_as_missing=agg.hope_zero_as_missing
        )
        if math.isnan(hope):
            warnings.append("HOPE is undefined (NaN) because a sub-metric is")

        counts = {name: _count(ev) for name, ev in zip(METRICS, (cu_ev, si_ev, ip_ev), strict=True)}
        not_sampled = {"score": None, "status": "not_sampled", "reason": "settings.focus_passages"}
        not_drawn, undrawn = not_sampled, set()
        if state is not None:
            # In the focus sample (the full run would score it) but not drawn before the stop.
            stop = f"stopped after round {len(state.history)} ({state.stopped})"
            not_drawn = {**not_sampled, "reason": f"sampling.mode sequential: {stop}"}
            undrawn = set(state.focus_order)
        by_focus = {i: (c, s) for i, c, s in zip(focus, cu_ev, si_ev, strict=True)}

        def absent(i: int) -> dict[str, Any]:
            return not_drawn if i in undrawn else not_sampled

        passage_records = [
            {
                "index": i,
                "passage_id": ids[i],
                "n_chars": len(passages[i]),
                "concept_unity": by_focus[i][0] if i in by_focus else absent(i),
                "semantic_independence": by_focus[i][1] if i in by_focus else absent(i),
            }
            for i in range(len(passages))
        ]
        usage: dict[str, Any] = {
            "llm": llm_usage.to_dict(),
            "wall_time_s": time.perf_counter() - started,
        }
        stats = getattr(self.embedder, "stats", None)
        if callable(stats):
            # The embedder is shared by concurrent evaluations: its counters are process totals.
            usage["embedder_process_totals"] = stats()
        return HopeResult(
            hope=hope,
            concept_unity=con,
            semantic_independence=sem,
            information_preservation=inf,
            passages=passage_records,
            segments=ip_ev,
            failures=sorted(ctx.failures, key=_failure_order),
            counts=counts,
            usage=usage,
            prompts={name: p.to_dict() for name, p in sorted(ctx.prompts_used.items())},
            settings=settings.model_dump(mode="json"),
            models={"llm": self.llm.identity, "embedder": self.embedder.identity},
            warnings=warnings,
            sampling=state.record() if state is not None else None,
        )

    def evaluate(
        self, document: str, passages: Sequence[str], passage_ids: Sequence[str] | None = None
    ) -> HopeResult:
        async def run() -> HopeResult:
            try:
                return await self.aevaluate(document, passages, passage_ids)
            finally:
                await self.llm.aclose()

        return asyncio.run(run())


async def _sample_in_rounds(
    state: SequentialState,
    board: RoundBoard,
    member: str,
    score_items: Callable[[Sequence[int], Sequence[Segment]], Awaitable[tuple[list, ...]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[int], list]:
    """Score ``state``'s items round by round until the board says stop; the evidence and the
    drawn items in the full run's order (focus passages by index, segments by draw)."""
    cu_name, si_name, ip_name = METRICS
    by_passage: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    by_segment: dict[int, tuple[Segment, dict[str, Any]]] = {}
    try:
        while state.stopped is None:
            focus, segments = state.next_round()
            placeholders: list[str] = []
            token = placeholder_answers.set(placeholders)
            try:
                cu_ev, si_ev, ip_ev = await score_items(focus, segments)
            finally:
                placeholder_answers.reset(token)
            state.add(cu_name, cu_ev)
            state.add(si_name, si_ev)
            state.add(ip_name, ip_ev)
            by_passage.update(zip(focus, zip(cu_ev, si_ev, strict=True), strict=True))
            by_segment.update((s.draw, (s, r)) for s, r in zip(segments, ip_ev, strict=True))
            state.close_round()
            state.stopped = await board.report(member, state, awaiting=bool(placeholders))
    except BaseException:
        board.leave(member)
        raise
    focus = sorted(by_passage)
    drawn_segments = [by_segment[d] for d in sorted(by_segment)]
    return (
        [by_passage[i][0] for i in focus],
        [by_passage[i][1] for i in focus],
        [record for _, record in drawn_segments],
        focus,
        [segment for segment, _ in drawn_segments],
    )


def focus_indices(passages: Sequence[str], limit: int | None, seed: int) -> list[int]:
    """Every passage, or a seeded sample of ``limit`` of them (same chunking, same sample)."""
    if limit is None or limit >= len(passages):
        return list(range(len(passages)))
    digest = hashlib.sha256("\x1f".join(passages).encode("utf-8")).hexdigest()
    rng = np.random.default_rng(derive_seed(seed, "focus", digest))
    return sorted(int(i) for i in rng.choice(len(passages), size=limit, replace=False))


_WHITESPACE = re.compile(r"\s+")


def absent_passages(document: str, passages: Sequence[str]) -> list[int]:
    """The indices of the passages that do not occur in ``document``, runs of whitespace compared
    as one space (a splitter that strips or rejoins whitespace still cuts the document's text).

    Each passage is searched from just after the previous one's match, then from the start (an
    overlapping or reordered chunking), so a chunking in document order costs one pass."""
    flat = _WHITESPACE.sub(" ", document)
    absent: list[int] = []
    floor = 0
    for index, passage in enumerate(passages):
        text = _WHITESPACE.sub(" ", passage).strip()
        found = flat.find(text, floor)
        if found < 0:
            found = flat.find(text)
        if found < 0:
            absent.append(index)
        else:
            floor = found + 1
    return absent


def absent_warning(ids: Sequence[str], total: int) -> str:
    """The one warning for every passage not in the document (HOPE scores them as given: it reads
    the passages, not their place, but a wrong passages file would otherwise go unnoticed)."""
    shown = ", ".join(repr(i) for i in ids[:5])
    more = f" and {len(ids) - 5} more" if len(ids) > 5 else ""
    return (
        f"{len(ids)} of {total} passages do not occur in the document (whitespace aside): "
        f"{shown}{more}; they are scored as given"
    )


def _failure_order(failure: Any) -> tuple:
    """Metric, then item with its numbers compared as numbers ("passage 2" before "passage 10"):
    items finish in an order that depends on timing; the evidence must not."""
    parts = re.split(r"(\d+)", failure.item)
    natural = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)
    return (
        METRICS.index(failure.metric) if failure.metric in METRICS else len(METRICS),
        natural,
        failure.reason,
    )


def _count(records: list[dict[str, Any]]) -> MetricCount:
    failed = sum(1 for r in records if r["status"] == "failed")
    return MetricCount(total=len(records), scored=len(records) - failed, failed=failed)


__all__ = ["METRICS", "HopeEvaluator", "InputError"]
