"""One way to run many coroutines: at most ``limit`` at a time, results in input order, with an
optional progress bar on stderr."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from tqdm.auto import tqdm

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
    (None: no bound here, e.g. when the client bounds its own requests). ``progress`` labels a
    tqdm bar ticking once per finished item (None: no bar). The first exception propagates, as
    with ``asyncio.gather``."""
    bound = asyncio.Semaphore(limit) if limit is not None else contextlib.nullcontext()
    bar = tqdm(total=len(items), desc=progress, unit=unit, file=sys.stderr, disable=not progress)

    async def one(item: Item) -> Result:
        async with bound:
            result = await run(item)
        bar.update(1)
        return result

    try:
        return list(await asyncio.gather(*(one(item) for item in items)))
    finally:
        bar.close()
