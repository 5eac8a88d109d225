"""One way to run many coroutines: at most ``limit`` at a time, results in input order, with an
optional progress bar on stderr."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterable, Sized
from typing import TypeVar

from tqdm.auto import tqdm

Item = TypeVar("Item")
Result = TypeVar("Result")


async def gather_bounded(
    run: Callable[[Item], Awaitable[Result]],
    items: Iterable[Item],
    *,
    limit: int | None = None,
    progress: str | None = None,
    unit: str = "it",
    total: int | None = None,
) -> list[Result]:
    """``[await run(item) for item in items]`` run concurrently, ``limit`` in flight at most
    (None: no bound here, e.g. when the client bounds its own requests). ``progress`` labels a
    tqdm bar ticking once per finished item (None: no bar); ``total`` is its length when ``items``
    has none. The first exception propagates, as with ``asyncio.gather``, and what is still
    running is cancelled.

    With a ``limit``, ``items`` is read lazily: an item is taken only when a slot is free, so a
    generator that builds each item (a document's passages) holds at most ``limit`` of them."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    bar = tqdm(total=total, desc=progress, unit=unit, file=sys.stderr, disable=not progress)
    results: dict[int, Result] = {}
    pending = enumerate(items)

    async def one(index: int, item: Item) -> None:
        results[index] = await run(item)
        bar.update(1)

    async def worker() -> None:
        # One shared iterator: next() runs to completion between awaits, so no item is taken twice.
        for index, item in pending:
            await one(index, item)

    if limit is None:
        tasks = [asyncio.ensure_future(one(index, item)) for index, item in pending]
    else:
        tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, limit))]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise
    finally:
        bar.close()
    return [results[index] for index in range(len(results))]
