"""The log cleaner: compaction of topics with cleanup.policy "compact" (or "compact,delete").

Kafka's LogCleaner, LogCleanerManager and Cleaner: a pass runs when asked, synchronously
(``LogManager.clean_all``, in tests) or off the request loop every ``log.cleaner.backoff.ms``
(the broker's housekeeping, see the last point; Kafka runs a thread that wakes as often):

* Which logs: each compacted log's *dirty* section runs from its cleaner checkpoint
  (``cleaner-offset-checkpoint`` at the data-dir root, else the log start) to the first
  uncleanable offset: the active segment, the last stable offset, and with
  ``min.compaction.lag.ms`` the first segment holding a record younger than that, rounded down
  to a segment boundary. A log is cleaned when its dirty bytes are more than
  ``min.cleanable.dirty.ratio`` of its bytes below that offset, or when a dirty segment's first
  batch is older than ``max.compaction.lag.ms``; the dirtiest logs go first.
* How: an offset map of the dirty section (newest offset per key), then every segment from the
  start of the log up to the mapped end is rewritten without the records the map supersedes
  (``cleaner_filter`` holds the record rules). Segments are grouped so that a cleaned segment
  stays within ``segment.bytes`` / ``segment.index.bytes`` and int32 relative offsets; each group
  becomes one segment with the first one's base offset, written aside and swapped in
  (``cleaner_swap``). Offsets never change; the active segment is never touched.
* A log that fails to clean (corrupt data, I/O error) is skipped until the next start, as Kafka
  marks it uncleanable; the other logs are still cleaned.
* Off the request loop: the broker runs a pass in a worker thread (``pykafkad.log.housekeeping``)
  with a ``LogAccess`` whose ``call`` runs a function on the broker's trio thread. Everything
  that reads or changes the live log's state (choosing the log, producer state, aborted
  transactions, the swap, checkpoints) goes through ``call``, so the log itself stays
  single-threaded; the reading and writing (``cleaner_job``: offset map, cleaned segments) runs
  in a child process, so its per-record Python work never holds the broker's GIL. A log changed under the
  cleaner (deleted, segments removed) or a broker that stops aborts the round: the cleaned files
  are dropped, nothing is swapped, and the log stays cleanable (Kafka's
  LogCleaningAbortedException). While a log is being cleaned retention skips it, as Kafka's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pykafkad.log.checkpoint import read_offsets, write_offsets
from pykafkad.log.cleaner_filter import FilterStats, LastRecord
from pykafkad.log.cleaner_job import (
    CleaningAborted,
    CleanJob,
    JobResult,
    remove_cleaned_files,
    run_clean_job,
    segments_between,
)
from pykafkad.log.cleaner_swap import CLEANED_SUFFIX
from pykafkad.log.partition import PartitionLog
from pykafkad.log.segment import LogSegment

__all__ = ["CleaningAborted", "CleanJob", "JobResult", "segments_between"]

log = logging.getLogger("pykafkad.log.cleaner")

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
#: log.cleaner.dedupe.buffer.size and log.cleaner.io.buffer.load.factor defaults
DEFAULT_DEDUPE_BUFFER_SIZE = 134217728
DEDUPE_BUFFER_LOAD_FACTOR = 0.9
#: what one offset-map entry costs Kafka (a 16-byte MD5 and an 8-byte offset)
_BYTES_PER_MAP_ENTRY = 24


_T = TypeVar("_T")


class LogAccess:
    """How a cleaning round reaches the live log. ``call`` runs a function where the log lives
    (directly by default; ``trio.from_thread.run_sync`` from a worker thread); ``abort`` stops
    the round between two batches."""

    def __init__(
        self,
        call: Callable[..., Any] | None = None,
        abort: threading.Event | None = None,
    ):
        self._call = call
        self.abort = abort

    def call(self, fn: Callable[..., _T], *args: Any) -> _T:
        return fn(*args) if self._call is None else self._call(fn, *args)

    def check(self) -> None:
        if self.abort is not None and self.abort.is_set():
            raise CleaningAborted("the broker is stopping")


DIRECT = LogAccess()
#: runs a round's job (``cleaner_job``) somewhere and waits for its result
RunJob = Callable[[CleanJob, LogAccess], JobResult]


def max_map_entries(dedupe_buffer_size: int = DEFAULT_DEDUPE_BUFFER_SIZE) -> int:
    return int(dedupe_buffer_size // _BYTES_PER_MAP_ENTRY * DEDUPE_BUFFER_LOAD_FACTOR)


class LogToClean(NamedTuple):
    """One log's cleanable range and Kafka's measures of it."""

    first_dirty_offset: int
    #: rounded down to a segment's base offset (the upper bound of the cleaning round)
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    #: some dirty segment is older than max.compaction.lag.ms
    need_compaction_now: bool
    #: the checkpoint was invalid (below the log start or past the log end) and was reset
    force_update_checkpoint: bool

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        total = self.total_bytes
        return self.cleanable_bytes / total if total else 0.0


class CleanResult(NamedTuple):
    first_dirty_offset: int
    #: the new cleaner checkpoint: everything below it is clean
    end_offset: int
    #: base offsets of the segments written (one per group)
    cleaned_segments: list[int]
    stats: FilterStats


# -- choosing what to clean ---------------------------------------------------------------------


def log_to_clean(plog: PartitionLog, checkpoint: int | None, now_ms: int) -> LogToClean:
    """Kafka's ``cleanableOffsets`` + ``LogToClean`` for one log."""
    config = plog.config
    segments = plog.segments
    active = segments[-1]
    start = plog.log_start_offset
    dirty = start if checkpoint is None else checkpoint
    force_update = False
    if dirty < start or dirty > plog.log_end_offset:
        dirty = start
        force_update = True
    bounds = [plog.last_stable_offset, active.base_offset]
    min_lag = max(config.min_compaction_lag_ms, 0)
    if min_lag > 0:
        for seg in segments_between(segments, dirty, active.base_offset):
            if seg.largest_timestamp() > now_ms - min_lag:
                bounds.append(seg.base_offset)
                break
    uncleanable = max(dirty, min(bounds))
    non_active = segments_between(segments, uncleanable, active.base_offset)
    first_uncleanable = non_active[0].base_offset if non_active else active.base_offset
    clean_bytes = sum(s.size for s in segments_between(segments, -1, dirty))
    cleanable_bytes = sum(
        s.size for s in segments_between(segments, min(dirty, first_uncleanable), first_uncleanable)
    )
    return LogToClean(
        dirty,
        first_uncleanable,
        clean_bytes,
        cleanable_bytes,
        _max_compaction_delay(plog, dirty, now_ms) > 0,
        force_update,
    )


def _max_compaction_delay(plog: PartitionLog, first_dirty: int, now_ms: int) -> int:
    clean_until = now_ms - max(plog.config.max_compaction_lag_ms, 0)
    if clean_until <= 0:
        return 0
    segments = plog.segments
    earliest = None
    for seg in segments_between(segments, first_dirty, segments[-1].base_offset):
        first = seg.first_batch()
        if first is not None and first.max_timestamp > 0:
            if earliest is None or first.max_timestamp < earliest:
                earliest = first.max_timestamp
    if earliest is None or earliest >= clean_until:
        return 0
    return clean_until - earliest


def is_cleanable(ltc: LogToClean, min_cleanable_ratio: float, *, force: bool = False) -> bool:
    if ltc.total_bytes <= 0 or ltc.cleanable_bytes <= 0:
        return False
    return force or ltc.need_compaction_now or ltc.cleanable_ratio > min_cleanable_ratio


# -- cleaning -----------------------------------------------------------------------------------


def active_producers(plog: PartitionLog) -> dict[int, LastRecord]:
    """The producers the partition tracks and their last batch (Kafka's
    ``lastRecordsOfActiveProducers``): those batches are kept, empty if need be."""
    out: dict[int, LastRecord] = {}
    for pid, entry in plog.producer_state.producers.items():
        last = entry.last_offset
        out[pid] = LastRecord(last if last >= 0 else None, entry.producer_epoch)
    return out


def _make_job(
    plog: PartitionLog, ltc: LogToClean, now_ms: int, map_entries: int
) -> tuple[CleanJob, list[LogSegment]]:
    """On the log's thread: what the round needs to know, and the segments it started from."""
    if plog.closed:
        raise CleaningAborted(f"{plog.dir.name} was closed")
    upper = ltc.first_uncleanable_offset
    live = plog.segments
    segments = [s for s in live if s.base_offset < upper]
    next_base = live[len(segments)].base_offset
    nexts = [s.base_offset for s in segments[1:]] + [next_base]
    job = CleanJob(
        dir=plog.dir,
        config=plog.config,
        bases=[s.base_offset for s in segments],
        next_base=next_base,
        first_dirty_offset=ltc.first_dirty_offset,
        first_uncleanable_offset=upper,
        now_ms=now_ms,
        map_entries=map_entries,
        active_producers=active_producers(plog),
        dirty_aborted=plog.aborted_transactions(ltc.first_dirty_offset, upper),
        aborted_by_base={
            s.base_offset: aborted
            for s, end in zip(segments, nexts, strict=True)
            if (aborted := plog.aborted_transactions(s.base_offset, end))
        },
    )
    return job, segments


def clean_log(
    plog: PartitionLog,
    ltc: LogToClean,
    now_ms: int,
    *,
    map_entries: int | None = None,
    access: LogAccess = DIRECT,
    run_job: RunJob | None = None,
    before_swap: Callable[[PartitionLog], None] | None = None,
) -> CleanResult:
    """One cleaning round of ``plog`` (Kafka's ``doClean``): the job (``run_job``, inline by
    default) writes the cleaned segments, then each is swapped in on the log's thread.
    ``before_swap`` is called (in the round's thread) before the first swap."""
    entries = max_map_entries() if map_entries is None else map_entries
    job, segments = access.call(_make_job, plog, ltc, now_ms, entries)
    if run_job is None:
        result = run_clean_job(job, access.check)
    else:
        result = run_job(job, access)
    by_base = {s.base_offset: s for s in segments}
    cleaned = [group[0] for group in result.groups]
    try:
        access.check()
        if before_swap is not None:
            before_swap(plog)
        for i, group in enumerate(result.groups):
            access.call(_swap_in, plog, [by_base[b] for b in group], now_ms)
            cleaned[i] = -1
    finally:
        for base in cleaned:
            if base >= 0:
                remove_cleaned_files(job.dir, base)
    return CleanResult(
        ltc.first_dirty_offset, result.end_offset, [g[0] for g in result.groups], result.stats
    )


def _swap_in(plog: PartitionLog, group: list[LogSegment], now_ms: int) -> None:
    """On the log's thread: opens the cleaned files of ``group`` and swaps them in, unless the
    log lost the segments meanwhile (deleted, DeleteRecords, retention): that aborts."""
    live = plog.segments if not plog.closed else []
    if not all(any(s is g for s in live) for g in group):
        raise CleaningAborted(f"the segments of {plog.dir.name} changed during cleaning")
    cleaned = LogSegment(
        plog.dir, group[0].base_offset, plog.config, lambda: now_ms, new=False,
        file_suffix=CLEANED_SUFFIX,
    )
    plog.replace_segments(cleaned, group)


class LogCleaner:
    """The compacted logs' cleaning state: checkpoints (``cleaner-offset-checkpoint`` in
    ``data_dir``, or in memory when it is None), the logs that failed to clean and the one
    being cleaned. Its state is only touched where the logs live (through ``LogAccess.call``)."""

    def __init__(
        self,
        data_dir: Path | None = None,
        *,
        dedupe_buffer_size: int = DEFAULT_DEDUPE_BUFFER_SIZE,
    ):
        self.path = None if data_dir is None else Path(data_dir) / CLEANER_OFFSET_CHECKPOINT
        self.checkpoints: dict[Hashable, int] = {}
        if self.path is not None:
            self.checkpoints.update(read_offsets(self.path))
        self.map_entries = max_map_entries(dedupe_buffer_size)
        #: logs whose cleaning raised; skipped from then on (Kafka: uncleanable partitions)
        self.uncleanable: set[Hashable] = set()
        #: logs a round is cleaning now (retention leaves them alone meanwhile)
        self.in_progress: set[Hashable] = set()
        #: set when the broker stops: a round in a worker thread gives up at the next batch
        self.stopping = threading.Event()
        #: called in the cleaning thread before each swap (tests hold a round there)
        self.before_swap: Callable[[PartitionLog], None] | None = None

    def clean_all(
        self,
        logs: Mapping[Hashable, PartitionLog],
        now_ms: int,
        *,
        force: bool = False,
        access: LogAccess = DIRECT,
        run_job: RunJob | None = None,
    ) -> dict[Hashable, CleanResult]:
        """Cleans every compacted log that needs it, dirtiest first. ``force`` ignores
        min.cleanable.dirty.ratio (any dirty bytes will do)."""
        candidates = access.call(self._candidates, logs, now_ms, force)
        results: dict[Hashable, CleanResult] = {}
        for key, plog, ltc in candidates:
            if access.abort is not None and access.abort.is_set():
                break
            result = self._clean(key, plog, ltc, now_ms, access, run_job)
            if result is not None:
                results[key] = result
        return results

    def clean(
        self,
        key: Hashable,
        plog: PartitionLog,
        now_ms: int,
        *,
        force: bool = False,
        access: LogAccess = DIRECT,
    ) -> CleanResult | None:
        """Cleans one compacted log if it needs it (``force``: any dirty bytes will do)."""
        candidates = access.call(self._candidates, {key: plog}, now_ms, force)
        if not candidates:
            return None
        return self._clean(key, plog, candidates[0][2], now_ms, access, None)

    def forget(self, keys: Iterable[Hashable]) -> None:
        """Drops the checkpoints of deleted partitions."""
        changed = False
        for key in keys:
            changed |= self.checkpoints.pop(key, None) is not None
            self.uncleanable.discard(key)
        if changed:
            self._write()

    def _candidates(
        self, logs: Mapping[Hashable, PartitionLog], now_ms: int, force: bool
    ) -> list[tuple[Hashable, PartitionLog, LogToClean]]:
        candidates: list[tuple[float, Hashable, PartitionLog, LogToClean]] = []
        for key, plog in logs.items():
            if (
                plog.closed
                or not plog.config.compact_enabled
                or key in self.uncleanable
                or key in self.in_progress
            ):
                continue
            ltc = self._log_to_clean(key, plog, now_ms)
            if ltc is not None and is_cleanable(
                ltc, plog.config.min_cleanable_dirty_ratio, force=force
            ):
                candidates.append((ltc.cleanable_ratio, key, plog, ltc))
        candidates.sort(key=lambda c: c[0], reverse=True)
        return [(key, plog, ltc) for _, key, plog, ltc in candidates]

    def _log_to_clean(self, key: Hashable, plog: PartitionLog, now_ms: int) -> LogToClean | None:
        try:
            ltc = log_to_clean(plog, self.checkpoints.get(key), now_ms)
        except Exception:
            log.exception("failed to measure the cleanable part of %s", plog.dir.name)
            self.uncleanable.add(key)
            return None
        if ltc.force_update_checkpoint:
            self.checkpoints[key] = ltc.first_dirty_offset
            self._write()
        return ltc

    def _begin(self, key: Hashable, plog: PartitionLog) -> bool:
        if plog.closed or key in self.in_progress:
            return False
        self.in_progress.add(key)
        return True

    def _end(self, key: Hashable, plog: PartitionLog, result: CleanResult | None) -> None:
        self.in_progress.discard(key)
        if result is not None and not plog.closed:
            self.checkpoints[key] = result.end_offset
            self._write()

    def _failed(self, key: Hashable, plog: PartitionLog) -> bool:
        self.in_progress.discard(key)
        if plog.closed:  # a deleted log's failure is its deletion's doing
            return False
        self.uncleanable.add(key)
        return True

    def _clean(
        self,
        key: Hashable,
        plog: PartitionLog,
        ltc: LogToClean,
        now_ms: int,
        access: LogAccess,
        run_job: RunJob | None,
    ) -> CleanResult | None:
        if not access.call(self._begin, key, plog):
            return None
        try:
            result = clean_log(
                plog,
                ltc,
                now_ms,
                map_entries=self.map_entries,
                access=access,
                run_job=run_job,
                before_swap=self.before_swap,
            )
        except CleaningAborted as e:
            log.info("cleaning %s aborted: %s", plog.dir.name, e)
            access.call(self._end, key, plog, None)
            return None
        except Exception:
            if access.call(self._failed, key, plog):
                log.exception("cleaning %s failed; not cleaning it again", plog.dir.name)
            return None
        except BaseException:
            access.call(self._end, key, plog, None)
            raise
        access.call(self._end, key, plog, result)
        stats = result.stats
        log.info(
            "cleaned %s: offsets %d-%d, %d of %d records kept, %d -> %d bytes",
            plog.dir.name,
            result.first_dirty_offset,
            result.end_offset,
            stats.records_retained,
            stats.records_read,
            stats.bytes_read,
            stats.bytes_written,
        )
        return result

    def _write(self) -> None:
        if self.path is None:
            return
        offsets = {k: v for k, v in self.checkpoints.items() if isinstance(k, tuple)}
        write_offsets(self.path, offsets)
