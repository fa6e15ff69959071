"""Waiting for state another task writes: poll until an assertion holds or time runs out."""

from __future__ import annotations

import asyncio


async def eventually(check, timeout: float = 5.0) -> None:
    """Poll an async check (database state written after Discord saw the answer)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            await check()
            return
        except AssertionError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)
