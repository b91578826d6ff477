"""Housekeeping that must not stall requests: the log cleaner and retention's file deletions
run off the trio thread.

Compacting a large partition takes seconds of reading, decoding and writing; on the trio
thread that would stall every connection, and in a thread of the broker's process its
per-record Python work would still hold the GIL the request loop needs. So a pass runs in a
worker thread that reaches the live logs only through ``trio.from_thread.run_sync`` (see
``cleaner.LogAccess``) and hands each round's reading and writing to a child process
(``cleaner_job.run_in_process``); the swap into the live log happens on the trio thread,
between two requests. Retention decides on the trio thread (it moves log start offsets) and
renames the doomed segments' files to ``.deleted`` there; unlinking them, which can take long
for large files, happens in a worker thread, as does removing deleted topics' directories.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Hashable

import trio

from pykafkad.log.cleaner import CleanJob, CleanResult, JobResult, LogAccess
from pykafkad.log.cleaner_job import run_in_process
from pykafkad.log.manager import LogManager
from pykafkad.log.segment import LogSegment


def _job_in_process(job: CleanJob, access: LogAccess) -> JobResult:
    return run_in_process(job, access.abort)


async def clean_all_in_thread(
    manager: LogManager, now_ms: int, *, force: bool = False
) -> dict[Hashable, CleanResult]:
    """One pass of the cleaner over ``manager``'s compacted logs, off the trio thread."""
    cleaner = manager.cleaner
    access = LogAccess(trio.from_thread.run_sync, cleaner.stopping)
    run = functools.partial(
        cleaner.clean_all, manager.logs(), now_ms, force=force, access=access,
        run_job=_job_in_process,
    )
    return await trio.to_thread.run_sync(run)


async def apply_retention(manager: LogManager, now_ms: int) -> int:
    """A retention pass; the deleted segments' files are unlinked in a worker thread."""
    retired: list[LogSegment] = []
    deleted = manager.apply_retention(now_ms, retired=retired)
    if retired:
        await trio.to_thread.run_sync(_delete_segments, retired)
    return deleted


def _delete_segments(segments: list[LogSegment]) -> None:
    for seg in segments:
        seg.delete()


async def remove_deleted_dirs(manager: LogManager) -> int:
    """Removes the directories of deleted partitions (renamed ``-delete`` by DeleteTopics) in
    a worker thread; returns how many."""
    doomed = manager.take_doomed_dirs()
    if doomed:
        await trio.to_thread.run_sync(_remove_dirs, doomed)
    return len(doomed)


def _remove_dirs(dirs) -> None:
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)
