"""Housekeeping that must not stall requests: the log cleaner runs in a worker thread.

Compacting a large partition takes seconds of reading and writing; on the trio thread that
would stall every connection. The round runs in ``trio.to_thread`` and reaches the live logs
only through ``trio.from_thread.run_sync`` (see ``cleaner.LogAccess``), so the logs stay
single-threaded and the swap into the live log happens between two requests.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

import trio

from pykafkad.log.cleaner import CleanResult, LogAccess
from pykafkad.log.manager import LogManager


async def clean_all_in_thread(
    manager: LogManager, now_ms: int, *, force: bool = False
) -> dict[Hashable, CleanResult]:
    """One pass of the cleaner over ``manager``'s compacted logs, off the trio thread."""
    cleaner = manager.cleaner
    access = LogAccess(trio.from_thread.run_sync, cleaner.stopping)
    run = functools.partial(
        cleaner.clean_all, manager.logs(), now_ms, force=force, access=access
    )
    return await trio.to_thread.run_sync(run)
