"""The log cleaner: compaction of topics with cleanup.policy "compact" (or "compact,delete").

Kafka's LogCleaner, LogCleanerManager and Cleaner, run synchronously when asked (through
``LogManager.clean_all``, from the broker's housekeeping; Kafka runs a thread that wakes every
``log.cleaner.backoff.ms``):

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
  with a ``LogAccess`` whose ``call`` runs a function on the broker's trio thread. The thread
  reads the old segments and writes the cleaned ones; everything that reads or changes the live
  log's state (choosing the log, producer state, aborted transactions, the swap, checkpoints)
  goes through ``call``, so the log itself stays single-threaded. A log changed under the
  cleaner (deleted, segments removed) or a broker that stops aborts the round: the cleaned files
  are dropped, nothing is swapped, and the log stays cleanable (Kafka's
  LogCleaningAbortedException). While a log is being cleaned retention skips it, as Kafka's.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pykafkad.log.checkpoint import read_offsets, write_offsets
from pykafkad.log.cleaner_filter import (
    BatchFilter,
    CleanedTransactionMetadata,
    FilterStats,
    LastRecord,
    OffsetMap,
    iter_batches,
)
from pykafkad.log.cleaner_swap import (
    discard_cleaned_segment,
    new_cleaned_segment,
    seal_cleaned_segment,
)
from pykafkad.log.config import INDEX_ENTRY_SIZE, TIME_INDEX_ENTRY_SIZE
from pykafkad.log.partition import PartitionLog
from pykafkad.log.segment import (
    INT32_MAX,
    TXN_INDEX_SUFFIX,
    LogSegment,
    floor_segment_index,
    segment_file_name,
)
from pykafkad.log.txn_index import TransactionIndex
from wire.records.batch import decode_records
from wire.records.control import decode_control_key

log = logging.getLogger("pykafkad.log.cleaner")

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
#: log.cleaner.dedupe.buffer.size and log.cleaner.io.buffer.load.factor defaults
DEFAULT_DEDUPE_BUFFER_SIZE = 134217728
DEDUPE_BUFFER_LOAD_FACTOR = 0.9
#: what one offset-map entry costs Kafka (a 16-byte MD5 and an 8-byte offset)
_BYTES_PER_MAP_ENTRY = 24
#: the cleaned bytes gathered before each append to the cleaned segment
_WRITE_CHUNK = 1 << 20
_MAX_TS = struct.Struct(">q")
_MAX_TS_AT = 35


_T = TypeVar("_T")


class CleaningAborted(Exception):
    """The round gave up: the log changed under it or the broker is stopping."""


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


def segments_between(segments: list[LogSegment], start: int, end: int) -> list[LogSegment]:
    """The segments overlapping ``[start, end)``: from the one holding ``start`` to the last with
    a base offset below ``end`` (Kafka's ``logSegments(from, to)``)."""
    if start >= end:
        return []
    bases = [s.base_offset for s in segments]
    return [s for s in segments[floor_segment_index(bases, start) :] if s.base_offset < end]


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


def build_offset_map(
    plog: PartitionLog,
    start: int,
    end: int,
    offset_map: OffsetMap,
    access: LogAccess = DIRECT,
    segments: list[LogSegment] | None = None,
) -> None:
    """Maps every key of ``[start, end)`` to its newest offset, skipping aborted transactions;
    stops early when the map is full (then ``latest_offset`` says how far it got)."""
    if segments is None:
        segments = access.call(_segments_of, plog)
    dirty = segments_between(segments, start, end)
    txns = CleanedTransactionMetadata()
    txns.add_aborted_transactions(access.call(plog.aborted_transactions, start, end))
    offsets = offset_map.offsets
    check = access.check
    for i, seg in enumerate(dirty):
        next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
        seg.ensure_indexes()
        position = seg.offset_index.lookup(start)
        for header, data in iter_batches(seg.file, seg.size, position):
            check()
            if header.is_control:
                records = decode_records(data)
                kind = decode_control_key(records[0].key) if records else None
                txns.on_control_batch_read(header, kind)
            elif not txns.on_batch_read(header):
                for record in decode_records(data):
                    if record.key is not None and record.offset >= start:
                        if len(offsets) >= offset_map.max_entries:
                            return
                        offsets[record.key] = record.offset
            if header.last_offset >= start:
                offset_map.latest_offset = header.last_offset
        offset_map.latest_offset = next_start - 1


def group_segments_by_size(
    segments: list[LogSegment], max_size: int, max_index_size: int, first_uncleanable: int
) -> list[list[LogSegment]]:
    """Consecutive segments whose data, index and time index each fit the limits together and
    whose offsets stay within int32 of the first one's base (Kafka's groupSegmentsBySize)."""
    for seg in segments:
        seg.ensure_indexes()
    groups: list[list[LogSegment]] = []
    i = 0
    while i < len(segments):
        first = segments[i]
        group = [first]
        log_size = first.size
        index_size = first.offset_index.entries * INDEX_ENTRY_SIZE
        time_index_size = first.time_index.entries * TIME_INDEX_ENTRY_SIZE
        i += 1
        while i < len(segments):
            seg = segments[i]
            seg_index = seg.offset_index.entries * INDEX_ENTRY_SIZE
            seg_time_index = seg.time_index.entries * TIME_INDEX_ENTRY_SIZE
            last_offset = (
                segments[i + 1].base_offset - 1 if i + 1 < len(segments) else first_uncleanable - 1
            )
            if not (
                log_size + seg.size <= max_size
                and index_size + seg_index <= max_index_size
                and time_index_size + seg_time_index <= max_index_size
                and (seg.size == 0 or last_offset - first.base_offset <= INT32_MAX)
            ):
                break
            group.append(seg)
            log_size += seg.size
            index_size += seg_index
            time_index_size += seg_time_index
            i += 1
        groups.append(group)
    return groups


def _segments_of(plog: PartitionLog) -> list[LogSegment]:
    if plog.closed:
        raise CleaningAborted(f"{plog.dir.name} was closed")
    return plog.segments


def clean_log(
    plog: PartitionLog,
    ltc: LogToClean,
    now_ms: int,
    *,
    map_entries: int | None = None,
    access: LogAccess = DIRECT,
    before_swap: Callable[[PartitionLog], None] | None = None,
) -> CleanResult:
    """One cleaning round of ``plog`` (Kafka's ``doClean``). ``before_swap`` is called (in the
    cleaning thread) before each cleaned segment is swapped in."""
    config = plog.config
    offset_map = OffsetMap(max_map_entries() if map_entries is None else map_entries)
    upper_bound = ltc.first_uncleanable_offset
    segments = access.call(_segments_of, plog)
    build_offset_map(plog, ltc.first_dirty_offset, upper_bound, offset_map, access, segments)
    end_offset = offset_map.latest_offset + 1
    groups = group_segments_by_size(
        segments_between(segments, 0, end_offset),
        config.segment_bytes,
        config.segment_index_bytes,
        upper_bound,
    )
    batch_filter = BatchFilter(
        offset_map,
        CleanedTransactionMetadata(),
        access.call(active_producers, plog),
        now_ms=now_ms,
        delete_retention_ms=config.delete_retention_ms,
        upper_bound_offset=upper_bound,
    )
    cleaned = [
        clean_segments(plog, group, batch_filter, now_ms, access, segments, before_swap)
        for group in groups
    ]
    return CleanResult(ltc.first_dirty_offset, end_offset, cleaned, batch_filter.stats)


def clean_segments(
    plog: PartitionLog,
    group: list[LogSegment],
    batch_filter: BatchFilter,
    now_ms: int,
    access: LogAccess = DIRECT,
    segments: list[LogSegment] | None = None,
    before_swap: Callable[[PartitionLog], None] | None = None,
) -> int:
    """Writes what ``batch_filter`` keeps of ``group`` into one new segment and swaps it in;
    returns its base offset. ``segments`` is the log's segment list the round started from
    (the group never holds the active segment, so each one has a successor there)."""
    base = group[0].base_offset
    if segments is None:
        segments = access.call(_segments_of, plog)
    cleaned = new_cleaned_segment(plog.dir, base, plog.config, now_ms)
    txn_entries: list = []
    batch_filter.txns.cleaned_index = txn_entries
    try:
        for seg in group:
            upper = segments[segments.index(seg) + 1].base_offset
            batch_filter.txns.add_aborted_transactions(
                access.call(plog.aborted_transactions, seg.base_offset, upper)
            )
            _clean_into(seg, cleaned, batch_filter, access)
        if txn_entries:
            index = TransactionIndex(
                plog.dir / segment_file_name(base, TXN_INDEX_SUFFIX + cleaned.file_suffix)
            )
            for txn in txn_entries:
                index.append(txn)
        seal_cleaned_segment(cleaned, group[-1])
        access.check()
        if before_swap is not None:
            before_swap(plog)
        access.call(_swap_in, plog, cleaned, group)
    except BaseException:
        discard_cleaned_segment(cleaned)
        raise
    finally:
        batch_filter.txns.cleaned_index = None
    return base


def _swap_in(plog: PartitionLog, cleaned: LogSegment, group: list[LogSegment]) -> None:
    """On the log's thread: the swap, unless the log lost the segments meanwhile (deleted,
    DeleteRecords, retention), which aborts the round."""
    live = plog.segments if not plog.closed else []
    if not any(s is group[0] for s in live) or not all(any(s is g for s in live) for g in group):
        raise CleaningAborted(f"the segments of {plog.dir.name} changed during cleaning")
    plog.replace_segments(cleaned, group)


def _clean_into(
    source: LogSegment, dest: LogSegment, batch_filter: BatchFilter, access: LogAccess = DIRECT
) -> None:
    out = bytearray()
    batches: list[tuple[int, int, int, int]] = []
    largest = -1
    check = access.check
    for header, data in iter_batches(source.file, source.size):
        check()
        kept = batch_filter.filter(header, data)
        if kept is None:
            continue
        max_ts = _MAX_TS.unpack_from(kept, _MAX_TS_AT)[0]
        batches.append((len(out), len(kept), header.last_offset, max_ts))
        largest = max(largest, max_ts)
        out += kept
        if len(out) >= _WRITE_CHUNK:
            dest.append(out, batches, largest)
            out = bytearray()
            batches = []
    if batches:
        dest.append(out, batches, largest)


# -- the cleaner of a data dir ------------------------------------------------------------------


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
    ) -> dict[Hashable, CleanResult]:
        """Cleans every compacted log that needs it, dirtiest first. ``force`` ignores
        min.cleanable.dirty.ratio (any dirty bytes will do)."""
        candidates = access.call(self._candidates, logs, now_ms, force)
        results: dict[Hashable, CleanResult] = {}
        for key, plog, ltc in candidates:
            if access.abort is not None and access.abort.is_set():
                break
            result = self._clean(key, plog, ltc, now_ms, access)
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
        return self._clean(key, plog, candidates[0][2], now_ms, access)

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
        self, key: Hashable, plog: PartitionLog, ltc: LogToClean, now_ms: int, access: LogAccess
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
