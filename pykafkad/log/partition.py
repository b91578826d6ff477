"""The log of one partition: an ordered list of segments, the last one active.

Synchronous and single-threaded by design (the broker calls it from its trio thread); every
operation does work per request or per batch header, never per record, except a ListOffsets
lookup by timestamp, which reads the records of the one batch that holds the answer.

Kafka semantics kept here: offsets are assigned consecutively from the log end offset and
patched into the batches in place; the high watermark is the replica layer's (``pykafkad.replica.Partition`` moves it; until
it does, it follows the log end offset);
the log start offset only moves forward (DeleteRecords, retention); leader epochs are recorded
in ``leader-epoch-checkpoint``. Persisting the log start offset and recovery point is the
``LogManager``'s job (Kafka's ``log-start-offset-checkpoint`` / ``recovery-point-offset-checkpoint``
at the log-dir root); it passes them back to ``open``.

``PartitionLog`` owns the state (segment list, offsets, epochs, producer state) and the order in
which it changes; the algorithms over segments live beside it: ``loader`` (opening, recovery,
producer-state rebuild), ``validator`` (a leader's append), ``read`` (Fetch, ListOffsets),
``retention`` (which old segments go), ``txn_index`` (aborted transactions) and ``follower``
(a replica's append of its leader's batches, kept as they are).

A follower's log (Kafka's appendAsFollower / truncateTo / truncateFullyAndStartAt) keeps the
leader's offsets and epochs, is cut back when it diverged from the leader, and has a high
watermark the replica fetcher sets from the leader's; a leader's follows its log end offset.
"""

from __future__ import annotations

import shutil
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path

from pykafkad.log.cleaner_swap import swap_segment_files
from pykafkad.log.config import LogConfig
from pykafkad.log.epoch import LeaderEpochCache
from pykafkad.log.errors import KafkaStorageError, LogClosedError, OffsetOutOfRangeError
from pykafkad.log.follower import validate_follower_batches
from pykafkad.log.loader import apply_batch, load_segments, rebuild_producer_state
from pykafkad.log.producer_state import CompletedTxn, ProducerStateManager
from pykafkad.log.read import (
    ReadResult,
    TimestampAndOffset,
    offset_by_timestamp,
    offset_of_max_timestamp,
    read_batches,
)
from pykafkad.log.retention import (
    SegmentPredicate,
    deletable_segments,
    log_start_breached,
    retention_ms_breached,
    retention_size_breached,
)
from pykafkad.log.segment import LogSegment, floor_segment_index
from pykafkad.log.txn_index import AbortedTxn, TransactionIndexes
from pykafkad.log.validator import AppendInfo, validate_and_assign_offsets
from wire.records.control import COMMIT
from wire.records.header import BatchHeader

__all__ = ["AppendInfo", "LogAppendInfo", "PartitionLog", "ReadResult", "TimestampAndOffset"]

#: Kafka's name for what an append returns
LogAppendInfo = AppendInfo


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
        #: None: the log end offset (a leader without followers); else set by the replica
        #: fetcher (a follower) or the partition (a leader with followers)
        self._high_watermark: int | None = None
        self._closed = False
        self.leader_epochs = LeaderEpochCache(dir)
        self.producer_state = ProducerStateManager(dir)
        self._txn_indexes = TransactionIndexes(dir)
        #: called (with this log) whenever the log start offset moves; the manager persists it
        self.on_log_start_offset_change: Callable[[PartitionLog], None] | None = None
        #: where retention's deleted segments go (None: their files are unlinked at once); the
        #: broker's housekeeping collects them to unlink off the request loop
        self.retired_segments: list[LogSegment] | None = None

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
        segments = load_segments(
            self.dir, self._config, self._clock, self.leader_epochs,
            recover=recover, recovery_point=recovery_point, log_start_offset=checkpoint_start)
        self._segments = segments
        self._bases = [s.base_offset for s in segments]
        leo = self.log_end_offset
        self._log_start_offset = max(checkpoint_start, segments[0].base_offset)
        self._recovery_point = min(recovery_point, leo) if recover else leo
        self.leader_epochs.truncate_from_end(leo)
        self.leader_epochs.truncate_from_start(self._log_start_offset)
        self._delete_log_start_breached_segments()
        self._txn_indexes.load(self._bases, self.log_end_offset)
        rebuild_producer_state(self.producer_state, self._segments, self._index_aborted)

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
        """The offset below which records are committed: the log end offset unless set
        (``update_high_watermark``); never beyond it."""
        leo = self.log_end_offset
        hw = self._high_watermark
        return leo if hw is None or hw > leo else hw

    @property
    def high_watermark_managed(self) -> bool:
        """Whether the replica layer has set the high watermark (else it is the log end)."""
        return self._high_watermark is not None

    def update_high_watermark(self, hw: int | None) -> int:
        """Sets the high watermark, kept within [log start, log end] (Kafka's
        updateHighWatermark); None: it follows the log end offset again. Returns it."""
        if hw is not None:
            hw = max(self._log_start_offset, min(hw, self.log_end_offset))
        self._high_watermark = hw
        return self.high_watermark

    def maybe_increment_high_watermark(self, offset: int) -> bool:
        """Moves the high watermark up to ``offset`` (never down); whether it moved."""
        if offset <= self.high_watermark and self._high_watermark is not None:
            return False
        old = self._high_watermark
        return self.update_high_watermark(offset) != old

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
        now = self._clock() if now_ms is None else now_ms
        buf = bytearray(records)
        if not buf:
            return AppendInfo(-1, -1, -1, self._log_start_offset, -1, -1, 0, 0)
        first_offset = self.log_end_offset
        valid = validate_and_assign_offsets(buf, first_offset, leader_epoch, self._config, now)
        try:
            segment = self._maybe_roll(len(buf), valid.max_timestamp, valid.last_offset, now)
            if leader_epoch >= 0:
                self.leader_epochs.assign(leader_epoch, first_offset)
            segment.append(buf, valid.batches, valid.max_timestamp)  # all or nothing
        except OSError as e:
            raise KafkaStorageError(
                f"Error while appending records to {self.dir.name} in dir {self.dir.parent}: {e}"
            ) from e
        return AppendInfo(
            base_offset=first_offset,
            last_offset=valid.last_offset,
            log_append_time=now if self._config.log_append_time else -1,
            log_start_offset=self._log_start_offset,
            max_timestamp=valid.max_timestamp,
            offset_of_max_timestamp=valid.offset_of_max_timestamp,
            record_count=valid.record_count,
            size=len(buf),
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

    def append_as_follower(self, records: bytes | bytearray | memoryview) -> AppendInfo:
        """Appends the leader's batches as they are (Kafka's appendAsFollower): offsets and
        partition leader epochs are the leader's, each batch's epoch goes to the epoch cache,
        producer state and the aborted-transaction index follow the batches. Checked per batch
        header (``follower``); a gap after the log end is allowed (a compacted leader log), an
        offset below it is UnexpectedAppendOffsetError. A trailing partial batch is ignored."""
        self._check_open()
        leo = self.log_end_offset
        v = validate_follower_batches(records, leo, self._config.segment_bytes, self.dir.name)
        if not v.batches:
            return AppendInfo(-1, -1, -1, self._log_start_offset, -1, -1, 0, 0)
        data = records if v.valid_bytes == len(records) else memoryview(records)[: v.valid_bytes]
        now = self._clock()
        try:
            segment = self._maybe_roll(
                v.valid_bytes, v.max_timestamp, v.last_offset, now, next_offset=v.first_offset)
            epochs = self.leader_epochs
            for h in v.headers:
                if h[2] >= 0:
                    epochs.assign(h[2], h[0])
            segment.append(data, v.batches, v.max_timestamp)  # type: ignore[arg-type]
        except OSError as e:
            raise KafkaStorageError(
                f"Error while appending records to {self.dir.name} in dir {self.dir.parent}: {e}"
            ) from e
        state = self.producer_state
        for (pos, size, _, _), h in zip(v.batches, v.headers, strict=True):
            if h[9] >= 0:
                apply_batch(state, h, lambda p=pos, n=size: memoryview(data)[p : p + n],
                            self._index_aborted)
        return AppendInfo(
            base_offset=v.first_offset,
            last_offset=v.last_offset,
            log_append_time=-1,
            log_start_offset=self._log_start_offset,
            max_timestamp=v.max_timestamp,
            offset_of_max_timestamp=v.offset_of_max_timestamp,
            record_count=v.record_count,
            size=v.valid_bytes,
        )

    def _index_aborted(self, completed: CompletedTxn) -> None:
        lso = self.producer_state.last_stable_offset_after(completed)
        base = self._bases[floor_segment_index(self._bases, completed.last_offset)]
        self._txn_indexes.append(base, AbortedTxn(
            completed.producer_id, completed.first_offset, completed.last_offset, lso))

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[fetch_offset, upper_bound)`` (Kafka's
        collectAbortedTransactions): from the segment holding ``fetch_offset`` on."""
        return self._txn_indexes.collect(self._bases, fetch_offset, upper_bound)

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> int:
        return self.producer_state.remove_expired(now_ms, expiration_ms)

    def take_producer_snapshot(self) -> None:
        """Writes the producer state as of the log end (at roll and at clean shutdown)."""
        state = self.producer_state
        leo = self.log_end_offset
        if leo > self._segments[0].base_offset or state.producers:
            # an empty state is worth a file too: the next start need not scan the log
            state.take_snapshot(leo, fsync=bool(state.producers))
            state.delete_snapshots_below(self._log_start_offset)

    def _maybe_roll(
        self, size: int, max_ts: int, last_offset: int, now: int, *, next_offset: int = 0,
    ) -> LogSegment:
        active = self._segments[-1]
        if active.should_roll(size, max_ts, last_offset, now):
            return self.roll(now_ms=now, next_offset=next_offset)
        return active

    def roll(self, *, now_ms: int | None = None, next_offset: int = 0) -> LogSegment:
        """Starts a new active segment at the log end offset, or at ``next_offset`` when that is
        larger (a follower's append after a gap), no-op if the active one is empty.

        The old segment gets its final time-index entry and is fsynced, which moves the recovery
        point to the new segment (Kafka does that flush asynchronously).
        """
        self._check_open()
        active = self._segments[-1]
        new_base = max(self.log_end_offset, next_offset)
        if active.size == 0 and active.base_offset == self.log_end_offset:
            return active
        active.on_become_inactive()
        active.flush()
        self._txn_indexes.flush(active.base_offset)
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
        return read_batches(
            self._segments, self._bases, leo, fetch_offset, max_bytes, limit, min_one_batch)

    # -- timestamps and epochs -----------------------------------------------------------------
    def offset_for_timestamp(self, timestamp: int) -> TimestampAndOffset | None:
        """The first record with timestamp >= ``timestamp`` at or after the log start offset.

        (ListOffsets with a real timestamp; the special values -1/-2/-3 are the caller's.)
        None when no record is that recent.
        """
        self._check_open()
        return offset_by_timestamp(self._segments, timestamp, self._log_start_offset)

    def max_timestamp(self) -> TimestampAndOffset | None:
        """ListOffsets MAX_TIMESTAMP (-3): the first record with the largest timestamp."""
        self._check_open()
        return offset_of_max_timestamp(self._segments)

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
        return self._delete_old_segments(log_start_breached(self._log_start_offset))

    def _delete_retention_size_breached_segments(self, now: int) -> int:
        predicate = retention_size_breached(self._config.retention_bytes, self.size_in_bytes)
        return self._delete_old_segments(predicate, now) if predicate is not None else 0

    def _delete_retention_ms_breached_segments(self, now: int) -> int:
        predicate = retention_ms_breached(self._config.retention_ms, now)
        return self._delete_old_segments(predicate, now) if predicate is not None else 0

    def _delete_old_segments(self, predicate: SegmentPredicate, now: int | None = None) -> int:
        """Deletes the oldest segments while ``predicate`` holds (Kafka's deleteOldSegments);
        rolls first when that takes them all, so the log keeps an active segment."""
        n = deletable_segments(self._segments, predicate, self.high_watermark)
        if not n:
            return 0
        if n == len(self._segments):
            self.roll(now_ms=now)
        deletable = self._segments[:n]
        self._increment_log_start_offset(self._segments[n].base_offset)
        del self._segments[:n]
        del self._bases[:n]
        for seg in deletable:
            if self.retired_segments is None:
                seg.delete()
            else:
                self.retired_segments.append(seg)
            self._txn_indexes.discard(seg.base_offset)
        self.producer_state.delete_snapshots_below(self._log_start_offset)
        return n

    def _increment_log_start_offset(self, offset: int) -> None:
        if offset <= self._log_start_offset:
            return
        self._log_start_offset = offset
        if self._high_watermark is not None and self._high_watermark < offset:
            self._high_watermark = offset  # as Kafka: the HW never lags the log start
        self.leader_epochs.truncate_from_start(offset)
        if self.on_log_start_offset_change is not None:
            self.on_log_start_offset_change(self)

    # -- truncation (a follower that diverged from its leader) -------------------------------
    def truncate_to(self, offset: int) -> bool:
        """Cuts the log so that it ends before ``offset`` (Kafka's truncateTo): segments above
        it go, the one holding it is cut at the batch holding it, and the indexes, aborted
        transactions, epoch cache (truncate_from_end), producer state (rebuilt from a snapshot
        at or below ``offset``), recovery point and high watermark follow. The log end offset
        becomes ``offset``. False (only the epoch cache is trimmed) when ``offset`` is at or
        beyond the log end; below the first segment the log starts afresh there."""
        self._check_open()
        if offset < 0:
            raise ValueError(
                f"Cannot truncate partition {self.dir.name} to a negative offset ({offset}).")
        leo = self.log_end_offset
        if offset >= leo:
            # a conflicting epoch entry may sit at the end (a leader that appended nothing)
            self.leader_epochs.truncate_from_end(leo)
            return False
        if self._bases[0] > offset:
            self.truncate_fully_and_start_at(offset)
            return True
        keep = bisect_right(self._bases, offset)
        for seg in self._segments[keep:]:
            self._txn_indexes.discard(seg.base_offset)
            seg.delete()
        del self._segments[keep:]
        del self._bases[keep:]
        try:
            active = self._segments[-1]
            active.truncate_to(offset, self._clock())
        except OSError as e:
            raise KafkaStorageError(
                f"Error while truncating log to offset {offset} for {self.dir.name} in dir "
                f"{self.dir.parent}: {e}") from e
        active.next_offset = offset
        self._txn_indexes.truncate_to(offset)
        self.leader_epochs.truncate_from_end(offset)
        self._recovery_point = min(self._recovery_point, offset)
        rebuild_producer_state(self.producer_state, self._segments, self._index_aborted)
        if offset < self._log_start_offset:
            self._log_start_offset = offset
            if self.on_log_start_offset_change is not None:
                self.on_log_start_offset_change(self)
        return True

    def truncate_fully_and_start_at(self, offset: int, log_start_offset: int | None = None) -> None:
        """Deletes every segment and starts an empty log at ``offset`` (Kafka's
        truncateFullyAndStartAt): a follower whose fetch offset fell below its leader's log
        start, or that must drop everything. The epoch cache, producer state and its snapshots,
        and the aborted-transaction index are emptied; log start (``log_start_offset``, default
        ``offset``), recovery point and high watermark move to it."""
        self._check_open()
        for seg in self._segments:
            seg.delete()
        self._txn_indexes.clear()
        try:
            segment = LogSegment(self.dir, offset, self._config, self._clock, new=True)
        except OSError as e:
            raise KafkaStorageError(
                f"Error while truncating the entire log for {self.dir.name} in dir "
                f"{self.dir.parent}: {e}") from e
        self._segments = [segment]
        self._bases = [offset]
        self.leader_epochs.clear()
        self.producer_state.truncate_and_reload()
        self.producer_state.delete_snapshots_below(1 << 63, keep_latest=0)
        start = offset if log_start_offset is None else log_start_offset
        changed = start != self._log_start_offset
        self._log_start_offset = start
        self._recovery_point = offset
        if self._high_watermark is not None:
            self._high_watermark = offset
        if changed and self.on_log_start_offset_change is not None:
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
            self._txn_indexes.discard(seg.base_offset)
        self._txn_indexes.reopen(cleaned.base_offset)

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

