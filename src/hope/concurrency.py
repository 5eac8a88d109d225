"""One way to run many coroutines: at most ``limit`` at a time, results in input order, with an
optional progress bar on stderr."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


async def gather_bounded(
    run: Callable[[Item], Awaitable[Result]],
    items: Sequence[Item],
    *,
    limit: int | None = None,
    progress: str | None = None,
    unit: str = "it",
) -> list[Result]:
    """``[await run(item) for item in items]`` run concurrently, ``limit`` in flight at most
    (None: no bound here, e.g. when the client bounds its own requests). ``progress`` is the
    label of a tqdm bar ticking once per finished item; None shows none. The first exception
    propagates, as with ``asyncio.gather``."""
    semaphore = asyncio.Semaphore(limit) if limit is not None else None
    bar = None
    if progress is not None:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(items), desc=progress, unit=unit, file=sys.stderr)

    async def one(item: Item) -> Result:
        if semaphore is None:
            result = await run(item)
        else:
            async with semaphore:
                result = await run(item)
        if bar is not None:
            bar.update(1)
        return result

    try:
        return list(await asyncio.gather(*(one(item) for item in items)))
    finally:
        if bar is not None:
            bar.close()
