"""The log of one partition: an ordered list of segments, the last one active.

Synchronous and single-threaded by design (the broker calls it from its trio thread); every
operation does work per request or per batch header, never per record, except a ListOffsets
lookup by timestamp, which reads the records of the one batch that holds the answer.

Kafka semantics kept here: offsets are assigned consecutively from the log end offset and
patched into the batches in place; the high watermark equals the log end offset (one replica);
the log start offset only moves forward (DeleteRecords, retention); leader epochs are recorded
in ``leader-epoch-checkpoint``. Persisting the log start offset and recovery point is the
``LogManager``'s job (Kafka's ``log-start-offset-checkpoint`` / ``recovery-point-offset-checkpoint``
at the log-dir root); it passes them back to ``open``.
"""

from __future__ import annotations

import os
import shutil
import struct
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import crc32c

from pykafkad.log.cleaner_swap import complete_interrupted_swaps, swap_segment_files
from pykafkad.log.config import LogConfig
from pykafkad.log.epoch import LeaderEpochCache
from pykafkad.log.errors import (
    CorruptRecordError,
    LogClosedError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
)
from pykafkad.log.producer_state import CompletedTxn, ProducerStateManager
from pykafkad.log.region import FileRegion
from pykafkad.log.segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    MAGIC_V2,
    MIN_BATCH_LENGTH,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    LogSegment,
    segment_file_name,
)
from pykafkad.log.txn_index import AbortedTxn, TransactionIndex
from wire.errors import KafkaError
from wire.records.control import COMMIT, read_end_txn_marker
from wire.records.header import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG,
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_FLAG,
    TRANSACTIONAL_FLAG,
    BatchHeader,
)

#: batchLength @8, magic @16, attributes @21, lastOffsetDelta @23, maxTimestamp @35
_LENGTH = struct.Struct(">i")
_MAGIC_AT = 16
_ATTRS = struct.Struct(">h")
_LOD = struct.Struct(">i")
_TS = struct.Struct(">q")
_BASE_AND_EPOCH = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_CRC = struct.Struct(">I")
_LOD_AT = 23
_MAX_TS_AT = 35
_RECORD_COUNT_AT = 57
#: the whole v2 batch header (baseOffset .. recordCount)
_FULL_HEADER = struct.Struct(">qiibIhiqqqhii")
_REPLAY_CHUNK = 1 << 20


class AppendInfo(NamedTuple):
    """What Produce answers: Kafka's LogAppendInfo fields that reach the response."""

    base_offset: int
    last_offset: int
    #: the broker time stamped into the batches under LogAppendTime, else -1
    log_append_time: int
    log_start_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    record_count: int
    size: int
    #: a producer's retry of a batch already in the log: nothing was appended, the offsets
    #: are the original ones (Kafka answers these as a success)
    duplicate: bool = False


class ReadResult(NamedTuple):
    """Whole batches for a Fetch, as zero-copy regions of segment files."""

    regions: list[FileRegion]
    size: int

    def to_bytes(self) -> bytes:
        return b"".join(bytes(r) for r in self.regions)


class TimestampAndOffset(NamedTuple):
    offset: int
    timestamp: int


class PartitionLog:
    """One partition's segments in ``dir`` (``<topic>-<partition>``)."""

    def __init__(self, dir: Path, config: LogConfig, clock: Callable[[], int]):
        self.dir = dir
        self._config = config
        self._clock = clock
        self._segments: list[LogSegment] = []
        self._bases: list[int] = []
        self._log_start_offset = 0
        self._recovery_point = 0
        self._closed = False
        self.leader_epochs = LeaderEpochCache(dir)
        self.producer_state = ProducerStateManager(dir)
        #: the .txnindex of each segment that has one, by segment base offset
        self._txn_indexes: dict[int, TransactionIndex] = {}
        #: called (with this log) whenever the log start offset moves; the manager persists it
        self.on_log_start_offset_change: Callable[[PartitionLog], None] | None = None

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        dir: Path,
        config: LogConfig,
        clock: Callable[[], int],
        *,
        recover: bool = False,
        recovery_point: int = 0,
        log_start_offset: int = 0,
    ) -> PartitionLog:
        """Loads (or creates) the partition in ``dir``.

        ``recover``: the last shutdown was not clean, so the segments from the one holding
        ``recovery_point`` onwards are revalidated (framing, magic, CRC32C) and cut after the
        last valid batch; later segments are dropped. Even without it, missing or corrupt
        indexes are rebuilt and a torn tail of the active segment is truncated.
        ``log_start_offset``: the checkpointed log start offset (DeleteRecords may have moved it
        into the middle of the first segment).
        """
        dir.mkdir(parents=True, exist_ok=True)
        log = cls(dir, config, clock)
        log._load(recover, recovery_point, log_start_offset)
        return log

    def _load(self, recover: bool, recovery_point: int, checkpoint_start: int) -> None:
        bases = _scan_dir(self.dir)
        segments = [LogSegment(self.dir, b, self._config, self._clock, new=False) for b in bases]
        recovered: set[int] = set()
        if recover and segments:
            first = max(0, bisect_right(bases, recovery_point) - 1)
            for i in range(first, len(segments)):
                truncated = segments[i].recover(epochs=self.leader_epochs)
                recovered.add(i)
                if truncated:
                    for seg in segments[i + 1 :]:
                        seg.delete()
                    del segments[i + 1 :]
                    break
        for i, seg in enumerate(segments):
            if i not in recovered and seg.indexes_missing:
                seg.recover(epochs=self.leader_epochs)
                recovered.add(i)
        if segments and len(segments) - 1 not in recovered and not segments[-1].load_tail():
            segments[-1].recover(epochs=self.leader_epochs)
        if segments and segments[-1].next_offset < checkpoint_start:
            # The log ends before the checkpointed start (Kafka: delete all, start afresh there).
            for seg in segments:
                seg.delete()
            segments = []
        if not segments:
            base = max(checkpoint_start, 0)
            segments = [LogSegment(self.dir, base, self._config, self._clock, new=True)]
        self._segments = segments
        self._bases = [s.base_offset for s in segments]
        leo = self.log_end_offset
        self._log_start_offset = max(checkpoint_start, segments[0].base_offset)
        self._recovery_point = min(recovery_point, leo) if recover else leo
        self.leader_epochs.truncate_from_end(leo)
        self.leader_epochs.truncate_from_start(self._log_start_offset)
        self._delete_log_start_breached_segments()
        self._load_txn_indexes()
        self._load_producer_state()

    # -- offsets -------------------------------------------------------------------------------
    @property
    def config(self) -> LogConfig:
        return self._config

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        next_offset = self._segments[-1].next_offset
        assert next_offset is not None
        return next_offset

    @property
    def high_watermark(self) -> int:
        """A single replica: everything appended is committed."""
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the oldest open transaction, else the high watermark: what a
        read_committed consumer may read up to."""
        first = self.producer_state.first_unstable_offset()
        return self.high_watermark if first is None else first

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def size_in_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def segments(self) -> list[LogSegment]:
        """The segments, oldest first (read-only use)."""
        return list(self._segments)

    @property
    def latest_epoch(self) -> int | None:
        return self.leader_epochs.latest_epoch

    def update_config(self, config: LogConfig) -> None:
        self._config = config
        for seg in self._segments:
            seg.config = config
            seg.offset_index.max_entries = config.max_index_entries
            seg.time_index.max_entries = config.max_time_index_entries

    # -- append --------------------------------------------------------------------------------
    def append(
        self,
        records: bytes | bytearray | memoryview,
        leader_epoch: int,
        *,
        now_ms: int | None = None,
    ) -> AppendInfo:
        """Appends produced v2 batches (already validated) as leader.

        The bytes are copied once; each batch's baseOffset and partitionLeaderEpoch are patched
        in place (outside the CRC). Under LogAppendTime the timestamp-type bit and maxTimestamp
        are set and the CRC recomputed; otherwise the producer's bytes are stored as they are.
        """
        self._check_open()
        config = self._config
        now = self._clock() if now_ms is None else now_ms
        buf = bytearray(records)
        total = len(buf)
        if total == 0:
            return AppendInfo(-1, -1, -1, self._log_start_offset, -1, -1, 0, 0)
        if total > config.segment_bytes:
            raise RecordBatchTooLargeError(
                f"Message batch size is {total} bytes which exceeds the maximum configured "
                f"segment size of {config.segment_bytes}."
            )
        log_append_time = config.log_append_time
        first_offset = next_offset = self.log_end_offset
        batches: list[tuple[int, int, int, int]] = []
        max_ts = -1
        offset_of_max = -1
        record_count = 0
        pos = 0
        while pos < total:
            if total - pos < HEADER_SIZE:
                raise CorruptRecordError("truncated record batch header")
            length = _LENGTH.unpack_from(buf, pos + 8)[0]
            size = length + LOG_OVERHEAD
            if length < MIN_BATCH_LENGTH or pos + size > total:
                raise CorruptRecordError(f"invalid batch length {length}")
            if buf[pos + _MAGIC_AT] != MAGIC_V2:
                raise CorruptRecordError(f"unsupported magic {buf[pos + _MAGIC_AT]}")
            if size > config.max_message_bytes:
                raise RecordTooLargeError(
                    f"The batch size {size} exceeds max.message.bytes {config.max_message_bytes}"
                )
            last_offset_delta = _LOD.unpack_from(buf, pos + _LOD_AT)[0]
            if last_offset_delta < 0:
                raise CorruptRecordError(f"negative lastOffsetDelta {last_offset_delta}")
            _BASE_AND_EPOCH.pack_into(buf, pos, next_offset, length, leader_epoch)
            if log_append_time:
                attrs = _ATTRS.unpack_from(buf, pos + ATTRIBUTES_OFFSET)[0]
                _ATTRS.pack_into(buf, pos + ATTRIBUTES_OFFSET, attrs | TIMESTAMP_TYPE_FLAG)
                _TS.pack_into(buf, pos + _MAX_TS_AT, now)
                crc = crc32c.crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : pos + size])
                _CRC.pack_into(buf, pos + CRC_OFFSET, crc)
                batch_max_ts = now
            else:
                batch_max_ts = _TS.unpack_from(buf, pos + _MAX_TS_AT)[0]
            last_offset = next_offset + last_offset_delta
            if batch_max_ts > max_ts:
                max_ts = batch_max_ts
                offset_of_max = last_offset
            record_count += _LENGTH.unpack_from(buf, pos + _RECORD_COUNT_AT)[0]
            batches.append((pos, size, last_offset, batch_max_ts))
            next_offset = last_offset + 1
            pos += size
        last_offset = next_offset - 1

        segment = self._maybe_roll(total, max_ts, last_offset, now)
        if leader_epoch >= 0:
            self.leader_epochs.assign(leader_epoch, first_offset)
        segment.append(buf, batches, max_ts)
        return AppendInfo(
            base_offset=first_offset,
            last_offset=last_offset,
            log_append_time=now if log_append_time else -1,
            log_start_offset=self._log_start_offset,
            max_timestamp=max_ts,
            offset_of_max_timestamp=offset_of_max,
            record_count=record_count,
            size=total,
        )

    def append_produced(
        self,
        records: bytes | bytearray | memoryview,
        header: BatchHeader,
        leader_epoch: int,
        *,
        now_ms: int | None = None,
    ) -> AppendInfo:
        """Appends one producer's batch (validated, ``header`` parsed from it) as Kafka's leader
        does: a batch with a producer id is checked against the producer state first (a retry
        of a recent batch returns its original offsets, a bad sequence or epoch raises
        KafkaError), and the state is updated after the append. Per batch, from the header."""
        pid = header.producer_id
        if pid < 0:
            return self.append(records, leader_epoch, now_ms=now_ms)
        state = self.producer_state
        epoch = header.producer_epoch
        first_seq = header.base_sequence
        last_seq = header.last_sequence
        txn = header.is_transactional
        dup = state.check_data_batch(pid, epoch, first_seq, last_seq, txn, self.log_end_offset)
        if dup is not None:
            return AppendInfo(
                dup.first_offset, dup.last_offset, -1, self._log_start_offset, dup.timestamp,
                dup.last_offset, header.record_count, 0, True)
        info = self.append(records, leader_epoch, now_ms=now_ms)
        state.update_data_batch(
            pid, epoch, last_seq, info.base_offset, info.last_offset, info.max_timestamp, txn)
        return info

    def append_marker(
        self,
        batch: bytes,
        kind: int,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        leader_epoch: int,
        *,
        now_ms: int | None = None,
    ) -> AppendInfo:
        """Appends a transaction marker (a control batch built by the coordinator) and ends the
        producer's transaction in this partition: the LSO moves, an abort is indexed."""
        state = self.producer_state
        state.check_marker(producer_id, producer_epoch, coordinator_epoch)
        info = self.append(batch, leader_epoch, now_ms=now_ms)
        completed = state.update_marker(
            producer_id, producer_epoch, coordinator_epoch, info.base_offset,
            info.max_timestamp, kind == COMMIT)
        if completed is not None and completed.is_aborted:
            self._index_aborted(completed)
        return info

    def _index_aborted(self, completed: CompletedTxn) -> None:
        lso = self.producer_state.last_stable_offset_after(completed)
        i = max(0, bisect_right(self._bases, completed.last_offset) - 1)
        base = self._bases[i]
        index = self._txn_indexes.get(base)
        if index is None:
            index = self._txn_indexes[base] = TransactionIndex(
                self.dir / segment_file_name(base, TXN_INDEX_SUFFIX))
        index.append(AbortedTxn(
            completed.producer_id, completed.first_offset, completed.last_offset, lso))

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[fetch_offset, upper_bound)`` (Kafka's
        collectAbortedTransactions): from the segment holding ``fetch_offset`` on."""
        out: list[AbortedTxn] = []
        if not self._txn_indexes:
            return out
        i = max(0, bisect_right(self._bases, fetch_offset) - 1)
        for base in self._bases[i:]:
            index = self._txn_indexes.get(base)
            if index is not None and index.collect(fetch_offset, upper_bound, out):
                break
        return out

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> int:
        return self.producer_state.remove_expired(now_ms, expiration_ms)

    def _load_txn_indexes(self) -> None:
        leo = self.log_end_offset
        self._txn_indexes = {}
        for base in self._bases:
            path = self.dir / segment_file_name(base, TXN_INDEX_SUFFIX)
            if path.exists():
                index = TransactionIndex(path)
                index.truncate_to(leo)
                if index.entries:
                    self._txn_indexes[base] = index

    def _load_producer_state(self) -> None:
        """Newest snapshot at or below the log end, then the batches after it (headers only;
        a control batch's one record is decoded for its marker type)."""
        state = self.producer_state
        leo = self.log_end_offset
        start = state.load_snapshot(leo)
        if start < self._segments[0].base_offset:
            if start >= 0:
                state.truncate_and_reload()
            start = self._segments[0].base_offset
        if start >= leo:
            return
        i = max(0, bisect_right(self._bases, start) - 1)
        first = self._segments[i].translate_offset(start)
        pos = first.position if first is not None else None
        for seg in self._segments[i:]:
            if pos is None:
                pos = 0
            for at, hdr in _iter_full_headers(seg, pos):
                (base, length, _, _, _, attrs, lod, _, max_ts, pid, epoch, base_seq, _) = hdr
                if base + lod < start or pid < 0:
                    continue
                if attrs & CONTROL_FLAG:
                    try:
                        marker = read_end_txn_marker(seg.file.pread(length + LOG_OVERHEAD, at))
                    except (KafkaError, ValueError):
                        continue  # a control batch without a marker (cleaned)
                    completed = state.update_marker(
                        pid, epoch, marker.coordinator_epoch, base, max_ts,
                        marker.kind == COMMIT)
                    if completed is not None and completed.is_aborted:
                        self._index_aborted(completed)
                else:
                    last_seq = -1 if base_seq < 0 else (base_seq + lod) & 0x7FFFFFFF
                    state.update_data_batch(
                        pid, epoch, last_seq, base, base + lod, max_ts,
                        bool(attrs & TRANSACTIONAL_FLAG))
            pos = None

    def take_producer_snapshot(self) -> None:
        """Writes the producer state as of the log end (at roll and at clean shutdown)."""
        state = self.producer_state
        leo = self.log_end_offset
        if leo > self._segments[0].base_offset or state.producers:
            # an empty state is worth a file too: the next start need not scan the log
            state.take_snapshot(leo, fsync=bool(state.producers))
            state.delete_snapshots_below(self._log_start_offset)

    def _maybe_roll(self, size: int, max_ts: int, last_offset: int, now: int) -> LogSegment:
        active = self._segments[-1]
        if active.should_roll(size, max_ts, last_offset, now):
            return self.roll(now_ms=now)
        return active

    def roll(self, *, now_ms: int | None = None) -> LogSegment:
        """Starts a new active segment at the log end offset (no-op if the active one is empty).

        The old segment gets its final time-index entry and is fsynced, which moves the recovery
        point to the new segment (Kafka does that flush asynchronously).
        """
        self._check_open()
        active = self._segments[-1]
        new_base = self.log_end_offset
        if active.size == 0 and active.base_offset == new_base:
            return active
        active.on_become_inactive()
        active.flush()
        index = self._txn_indexes.get(active.base_offset)
        if index is not None:
            index.flush()
        self.take_producer_snapshot()
        segment = LogSegment(self.dir, new_base, self._config, self._clock, new=True)
        if now_ms is not None:
            segment.created_ms = now_ms
        self._segments.append(segment)
        self._bases.append(new_base)
        self._recovery_point = max(self._recovery_point, new_base)
        return segment

    # -- read ----------------------------------------------------------------------------------
    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> ReadResult:
        """Whole batches from the one containing ``fetch_offset``, up to ``max_bytes``.

        With ``min_one_batch`` (KIP-74) the first batch is returned even when it is larger than
        ``max_bytes``. Batches that contain ``max_offset`` (the high watermark or last stable
        offset) or lie beyond it are never returned, as Kafka bounds reads by that offset's
        position. May span segments (one region per segment).
        """
        self._check_open()
        leo = self.log_end_offset
        if fetch_offset < self._log_start_offset or fetch_offset > leo:
            raise OffsetOutOfRangeError(
                f"Received request for offset {fetch_offset}, but we only have log segments "
                f"in the range {self._log_start_offset} to {leo}."
            )
        limit = leo if max_offset is None else min(max_offset, leo)
        regions: list[FileRegion] = []
        total = 0
        if fetch_offset >= limit:
            return ReadResult(regions, 0)
        segments = self._segments
        i = max(0, bisect_right(self._bases, fetch_offset) - 1)
        start = segments[i].translate_offset(fetch_offset)
        remaining = max_bytes
        while i < len(segments):
            seg = segments[i]
            if start is None:
                i += 1
                if i < len(segments):
                    start = segments[i].first_batch()
                continue
            if start.base_offset >= limit:
                break
            seg_next = self._bases[i + 1] if i + 1 < len(segments) else leo
            end = seg.size
            limit_inside = limit < seg_next
            if limit_inside:
                bound = seg.translate_offset(limit)
                if bound is not None:
                    end = bound.position
            pos = start.position
            if end <= pos:
                break
            if end - pos <= remaining:
                regions.append(FileRegion(seg.file, pos, end - pos))
                total += end - pos
                remaining -= end - pos
                if limit_inside or remaining == 0:
                    break
                start = None
                continue
            cut = seg.boundary_at_or_below(pos, pos + remaining)
            if cut == pos:
                if not regions and min_one_batch:
                    cut = pos + start.size
                else:
                    break
            regions.append(FileRegion(seg.file, pos, cut - pos))
            total += cut - pos
            break
        return ReadResult(regions, total)

    # -- timestamps and epochs -----------------------------------------------------------------
    def offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """The first record with timestamp >= ``timestamp`` at or after the log start offset.

        (ListOffsets with a real timestamp; the special values -1/-2/-3 are the caller's.)
        None when no record is that recent.
        """
        self._check_open()
        for seg in self._segments:
            if seg.max_timestamp < timestamp:
                continue
            found = seg.find_offset_by_timestamp(timestamp, self._log_start_offset)
            if found is not None:
                return TimestampAndOffset(*found)
        return None

    def max_timestamp(self) -> TimestampAndOffset | None:
        """ListOffsets MAX_TIMESTAMP (-3): the first record with the largest timestamp."""
        self._check_open()
        best = self._segments[0]
        for seg in self._segments[1:]:
            if seg.max_timestamp > best.max_timestamp:
                best = seg
        found = best.find_max_timestamp()
        return TimestampAndOffset(*found) if found is not None else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The leader epoch of the batch holding ``offset`` (from the epoch cache)."""
        return self.leader_epochs.epoch_for_offset(offset)

    def assign_epoch(self, epoch: int, start_offset: int | None = None) -> None:
        """Records that ``epoch`` begins at ``start_offset`` (default: the log end offset)."""
        self.leader_epochs.assign(
            epoch, self.log_end_offset if start_offset is None else start_offset
        )

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (largest known epoch <= ``epoch``, its end offset) or (-1, -1)."""
        return self.leader_epochs.end_offset_for(epoch, self.log_end_offset)

    # -- deletion ------------------------------------------------------------------------------
    def delete_records(self, before_offset: int) -> int:
        """DeleteRecords: moves the log start offset up to ``before_offset`` (-1 = high watermark)
        and deletes the segments wholly below it. Returns the new log start offset (the low
        watermark). Raises OffsetOutOfRangeError beyond the high watermark or below -1."""
        self._check_open()
        hw = self.high_watermark
        offset = hw if before_offset == -1 else before_offset
        if offset < 0 or offset > hw:
            raise OffsetOutOfRangeError(
                f"Cannot increment the log start offset to {offset} since it is larger than "
                f"the high watermark {hw}"
                if offset > hw
                else f"Invalid offset {offset}"
            )
        self._increment_log_start_offset(offset)
        self._delete_log_start_breached_segments()
        return self._log_start_offset

    def apply_retention(self, now_ms: int | None = None) -> int:
        """Deletes whole old segments as Kafka's deleteOldSegments does; returns how many.

        Segments entirely below the log start offset always go. With cleanup.policy "delete":
        then, oldest first, segments while the log exceeds retention.bytes, and segments whose
        largest timestamp is more than retention.ms old. The active segment can go too when it
        qualifies and is not empty: a new empty one is rolled first, so a log never has none.
        """
        self._check_open()
        now = self._clock() if now_ms is None else now_ms
        deleted = self._delete_log_start_breached_segments()
        if self._config.delete_enabled:
            deleted += self._delete_retention_size_breached_segments(now)
            deleted += self._delete_retention_ms_breached_segments(now)
        return deleted

    def _delete_log_start_breached_segments(self) -> int:
        start = self._log_start_offset
        return self._delete_old_segments(
            lambda seg, nxt: nxt is not None and nxt.base_offset <= start
        )

    def _delete_retention_size_breached_segments(self, now: int) -> int:
        retention = self._config.retention_bytes
        size = self.size_in_bytes
        if retention < 0 or size < retention:
            return 0
        diff = size - retention

        def breached(seg: LogSegment, nxt: LogSegment | None) -> bool:
            nonlocal diff
            if diff - seg.size >= 0:
                diff -= seg.size
                return True
            return False

        return self._delete_old_segments(breached, now)

    def _delete_retention_ms_breached_segments(self, now: int) -> int:
        retention = self._config.retention_ms
        if retention < 0:
            return 0
        return self._delete_old_segments(
            lambda seg, nxt: now - seg.largest_timestamp() > retention, now
        )

    def _delete_old_segments(
        self, predicate: Callable[[LogSegment, LogSegment | None], bool], now: int | None = None
    ) -> int:
        segments = self._segments
        deletable: list[LogSegment] = []
        for i, seg in enumerate(segments):
            nxt = segments[i + 1] if i + 1 < len(segments) else None
            if nxt is None and seg.size == 0:
                break
            if not predicate(seg, nxt):
                break
            deletable.append(seg)
        if not deletable:
            return 0
        if len(deletable) == len(segments):
            self.roll(now_ms=now)
        n = len(deletable)
        self._increment_log_start_offset(self._segments[n].base_offset)
        del self._segments[:n]
        del self._bases[:n]
        for seg in deletable:
            seg.delete()
            self._txn_indexes.pop(seg.base_offset, None)
        self.producer_state.delete_snapshots_below(self._log_start_offset)
        return n

    def _increment_log_start_offset(self, offset: int) -> None:
        if offset <= self._log_start_offset:
            return
        self._log_start_offset = offset
        self.leader_epochs.truncate_from_start(offset)
        if self.on_log_start_offset_change is not None:
            self.on_log_start_offset_change(self)

    # -- compaction ----------------------------------------------------------------------------
    def replace_segments(self, cleaned: LogSegment, replaced: list[LogSegment]) -> None:
        """Swaps the log cleaner's ``cleaned`` segment (``.cleaned`` files, same base offset)
        in for ``replaced``, a run of consecutive non-active segments (Kafka's
        replaceSegments; crash-safe through ``.swap`` files, see ``cleaner_swap``)."""
        self._check_open()
        segments = self._segments
        i = segments.index(replaced[0]) if replaced and replaced[0] in segments else -1
        n = len(replaced)
        if (
            i < 0
            or i + n >= len(segments)
            or any(a is not b for a, b in zip(segments[i : i + n], replaced, strict=True))
            or cleaned.base_offset != replaced[0].base_offset
        ):
            raise ValueError("replaced segments are not consecutive non-active segments")
        swap_segment_files(self.dir, cleaned, replaced)
        segments[i : i + n] = [cleaned]
        self._bases[i : i + n] = [cleaned.base_offset]
        for seg in replaced:
            self._txn_indexes.pop(seg.base_offset, None)
        path = self.dir / segment_file_name(cleaned.base_offset, TXN_INDEX_SUFFIX)
        if path.exists():
            self._txn_indexes[cleaned.base_offset] = TransactionIndex(path)

    # -- lifecycle -----------------------------------------------------------------------------
    def flush(self) -> None:
        """fsyncs the active segment and moves the recovery point to the log end offset."""
        self._check_open()
        leo = self.log_end_offset
        ends = self._bases[1:] + [leo]
        for seg, end in zip(self._segments, ends, strict=True):
            if end > self._recovery_point or seg is self._segments[-1]:
                seg.flush()
        self._recovery_point = leo

    def close(self) -> None:
        """Writes the final index entries and lets go of the files (regions still readable)."""
        if self._closed:
            return
        try:
            self.take_producer_snapshot()
        except OSError:
            pass  # the next start replays the log instead
        for seg in self._segments:
            seg.close()
        self._closed = True

    def delete(self) -> None:
        """Closes the log and removes its directory."""
        self.close()
        self._segments = []
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError(f"log {self.dir.name} is closed")

    def __repr__(self) -> str:
        return (
            f"PartitionLog({self.dir.name}, start={self._log_start_offset}, "
            f"end={self.log_end_offset if self._segments else '?'}, segments={len(self._segments)})"
        )


def _iter_full_headers(seg: LogSegment, start: int):
    """(position, full v2 header tuple) of each batch of ``seg`` from file position ``start``."""
    end = seg.size
    pos = start
    buf = b""
    buf_start = 0
    pread = seg.file.pread
    while end - pos >= HEADER_SIZE:
        rel = pos - buf_start
        if rel < 0 or rel + HEADER_SIZE > len(buf):
            buf = pread(min(_REPLAY_CHUNK, end - pos), pos)
            buf_start = pos
            rel = 0
            if len(buf) < HEADER_SIZE:
                return
        hdr = _FULL_HEADER.unpack_from(buf, rel)
        size = hdr[1] + LOG_OVERHEAD
        if hdr[1] < MIN_BATCH_LENGTH or hdr[3] != MAGIC_V2 or pos + size > end:
            return
        yield pos, hdr
        pos += size


def _scan_dir(dir: Path) -> list[int]:
    """Base offsets of the segments in ``dir``; removes leftovers (temp files, orphan indexes)."""
    complete_interrupted_swaps(dir)
    bases: set[int] = set()
    indexes: list[tuple[int, Path]] = []
    for entry in os.scandir(dir):
        name = entry.name
        if not entry.is_file():
            continue
        if name.endswith((".tmp", ".deleted", ".cleaned")):
            os.unlink(entry.path)
            continue
        stem, dot, suffix = name.partition(".")
        if not dot or len(stem) != 20 or not stem.isdigit():
            continue
        suffix = "." + suffix
        if suffix == LOG_SUFFIX:
            bases.add(int(stem))
        elif suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
            indexes.append((int(stem), Path(entry.path)))
    for base, path in indexes:
        if base not in bases:
            path.unlink(missing_ok=True)
    return sorted(bases)
