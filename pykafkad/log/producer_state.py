"""Per-partition producer state: idempotence (sequence numbers) and open transactions.

Kafka's ``ProducerStateManager`` / ``ProducerAppendInfo``, checked per batch from its header:

* a batch that repeats one of the producer's last five batches (same epoch, same first and last
  sequence) is a retry: it is answered with the original offsets and not appended again;
* an older epoch than the partition has seen is INVALID_PRODUCER_EPOCH;
* a new epoch must start at sequence 0, and within an epoch each batch must follow the last one
  (``last + 1``, wrapping at 2^31-1), else OUT_OF_ORDER_SEQUENCE_NUMBER. A producer the partition
  does not know (never seen, expired, or removed with its records) may start at any sequence, as
  in Kafka since KIP-360: UNKNOWN_PRODUCER_ID is no longer returned by a produce;
* a non-transactional batch while the producer has a transaction open is INVALID_TXN_STATE;
* a transaction marker older than the coordinator epoch seen is TRANSACTION_COORDINATOR_FENCED.

Open transactions (first offset per producer) give the first unstable offset, hence the last
stable offset. Snapshots are Kafka's ``<offset>.snapshot`` files (ProducerSnapshot v1: version,
CRC32C, then one 46-byte entry per producer with its last batch), taken at each segment roll and
at clean shutdown; on load the state is rebuilt from the newest snapshot plus the batches after
it, so a producer's last batch is deduplicated across restarts, as in Kafka.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from pathlib import Path
from typing import NamedTuple

import crc32c

from wire.errors import ErrorCode, KafkaError

NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
#: how many of a producer's batches are remembered for duplicate detection (Kafka's constant;
#: clients keep at most 5 requests in flight for this reason)
NUM_BATCHES_TO_RETAIN = 5
INT32_MAX = 0x7FFFFFFF

SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1
_SNAP_HEADER = struct.Struct(">hIi")  # version, crc, entry count
_SNAP_ENTRY = struct.Struct(">qhiqiqiq")
_CRC_FROM = 6  # the CRC covers everything after version and crc


class BatchMetadata(NamedTuple):
    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return _decrement_seq(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def _decrement_seq(seq: int, by: int) -> int:
    return seq - by if seq >= by else INT32_MAX - (by - seq) + 1


class CompletedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


class ProducerStateEntry:
    __slots__ = (
        "producer_id", "producer_epoch", "batches", "coordinator_epoch",
        "current_txn_first_offset", "last_timestamp",
    )

    def __init__(self, producer_id: int, producer_epoch: int = NO_PRODUCER_EPOCH):
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.batches: deque[BatchMetadata] = deque(maxlen=NUM_BATCHES_TO_RETAIN)
        self.coordinator_epoch = -1
        self.current_txn_first_offset = -1
        self.last_timestamp = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        if epoch != self.producer_epoch:
            return None
        for b in self.batches:
            if b.last_seq == last_seq and b.first_seq == first_seq:
                return b
        return None

    def _set_epoch(self, epoch: int) -> None:
        if epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = epoch

    def __repr__(self) -> str:
        return (f"ProducerStateEntry(pid={self.producer_id}, epoch={self.producer_epoch}, "
                f"last_seq={self.last_seq}, txn_first={self.current_txn_first_offset})")


class ProducerStateManager:
    """The producers of one partition and its open transactions."""

    def __init__(self, dir: Path):
        self.dir = dir
        self.producers: dict[int, ProducerStateEntry] = {}
        #: first offset -> producer id of every open transaction, in offset order
        self.ongoing: dict[int, int] = {}

    # -- queries -------------------------------------------------------------------------------
    def first_unstable_offset(self) -> int | None:
        for first in self.ongoing:
            return first
        return None

    def has_ongoing_txn(self, producer_id: int, producer_epoch: int | None = None) -> bool:
        """Whether the producer has a transaction open here (at ``producer_epoch``, when
        given: Kafka's hasOngoingTransaction; a transaction version 2 producer's next
        transaction has a bumped epoch, and must not ride on the previous one whose marker
        has not arrived yet)."""
        entry = self.producers.get(producer_id)
        return entry is not None and entry.current_txn_first_offset >= 0 and (
            producer_epoch is None or entry.producer_epoch == producer_epoch)

    def last_stable_offset_after(self, completed: CompletedTxn) -> int:
        """The LSO once ``completed`` ends (Kafka's lastStableOffset(completedTxn))."""
        for first, pid in self.ongoing.items():
            if pid != completed.producer_id:
                return first
        return completed.last_offset + 1

    # -- produce path --------------------------------------------------------------------------
    def check_data_batch(
        self, pid: int, epoch: int, first_seq: int, last_seq: int, is_transactional: bool,
        offset: int,
    ) -> BatchMetadata | None:
        """Validates a produced batch; returns the original batch when it is a duplicate.

        Raises KafkaError with Kafka's code when the batch must be refused.
        """
        entry = self.producers.get(pid)
        if entry is None:
            return None  # unknown producer: any sequence, any epoch
        if (
            epoch == entry.producer_epoch
            and entry.batches
            and first_seq == entry.batches[-1].last_seq + 1
            and (entry.current_txn_first_offset < 0 or is_transactional)
        ):
            return None  # the common case: the next batch in sequence
        dup = entry.find_duplicate(epoch, first_seq, last_seq)
        if dup is not None:
            return dup
        current = entry.producer_epoch
        if epoch < current:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {pid} at offset {offset} is {epoch}, which is smaller than "
                f"the last seen epoch {current}")
        if epoch != current:
            if first_seq != 0 and current != NO_PRODUCER_EPOCH:
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence number for new epoch of producer {pid}: {epoch} "
                    f"(request epoch), {first_seq} (seq. number), {current} (current epoch)")
        elif current != NO_PRODUCER_EPOCH:
            last = entry.last_seq
            if not (first_seq == last + 1 or (first_seq == 0 and last == INT32_MAX)):
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Out of order sequence number for producer {pid} at offset {offset}: "
                    f"{first_seq} (incoming seq. number), {last} (current end sequence number)")
        if entry.current_txn_first_offset >= 0 and not is_transactional:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"Expected transactional write from producer {pid} at offset {offset}")
        return None

    def update_data_batch(
        self, pid: int, epoch: int, last_seq: int, first_offset: int, last_offset: int,
        timestamp: int, is_transactional: bool,
    ) -> None:
        """Records an appended batch (after ``check_data_batch`` passed)."""
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerStateEntry(pid, epoch)
        entry._set_epoch(epoch)
        entry.batches.append(
            BatchMetadata(last_seq, last_offset, last_offset - first_offset, timestamp))
        entry.last_timestamp = timestamp
        if is_transactional and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = first_offset
            self.ongoing[first_offset] = pid

    # -- transaction markers -------------------------------------------------------------------
    def check_marker(self, pid: int, epoch: int, coordinator_epoch: int) -> None:
        entry = self.producers.get(pid)
        if entry is None:
            return
        if epoch < entry.producer_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {pid} is {epoch}, smaller than the last seen epoch "
                f"{entry.producer_epoch}")
        if entry.coordinator_epoch > coordinator_epoch:
            raise KafkaError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"Invalid coordinator epoch for producer {pid}: {coordinator_epoch} (zombie), "
                f"{entry.coordinator_epoch} (current)")

    def update_marker(
        self, pid: int, epoch: int, coordinator_epoch: int, offset: int, timestamp: int,
        is_commit: bool,
    ) -> CompletedTxn | None:
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerStateEntry(pid, epoch)
        entry._set_epoch(epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = timestamp
        first = entry.current_txn_first_offset
        if first < 0:
            return None
        entry.current_txn_first_offset = -1
        self.ongoing.pop(first, None)
        return CompletedTxn(pid, first, offset, not is_commit)

    # -- housekeeping --------------------------------------------------------------------------
    def remove_expired(self, now_ms: int, expiration_ms: int) -> int:
        """Drops producers idle (by their last batch timestamp) for ``expiration_ms`` that have
        no open transaction (producer.id.expiration.ms)."""
        doomed = [
            pid for pid, e in self.producers.items()
            if e.current_txn_first_offset < 0 and now_ms - e.last_timestamp >= expiration_ms
        ]
        for pid in doomed:
            del self.producers[pid]
        return len(doomed)

    def truncate_and_reload(self) -> None:
        self.producers.clear()
        self.ongoing.clear()

    # -- snapshots -----------------------------------------------------------------------------
    def snapshot_path(self, offset: int) -> Path:
        return self.dir / f"{offset:020d}{SNAPSHOT_SUFFIX}"

    def snapshot_offsets(self) -> list[int]:
        out = []
        for name in os.listdir(self.dir):
            if name.endswith(SNAPSHOT_SUFFIX):
                stem = name[: -len(SNAPSHOT_SUFFIX)]
                if len(stem) == 20 and stem.isdigit():
                    out.append(int(stem))
        return sorted(out)

    def take_snapshot(self, offset: int, *, fsync: bool = True) -> None:
        """Writes ``<offset>.snapshot`` (the state as of the log end ``offset``)."""
        body = bytearray(_SNAP_HEADER.size)
        for e in self.producers.values():
            last = e.batches[-1] if e.batches else None
            body += _SNAP_ENTRY.pack(
                e.producer_id, e.producer_epoch,
                last.last_seq if last else NO_SEQUENCE,
                last.last_offset if last else -1,
                last.offset_delta if last else 0,
                e.last_timestamp, e.coordinator_epoch, e.current_txn_first_offset)
        struct.pack_into(">i", body, _CRC_FROM, len(self.producers))
        crc = crc32c.crc32c(memoryview(body)[_CRC_FROM:])
        struct.pack_into(">hI", body, 0, SNAPSHOT_VERSION, crc)
        path = self.snapshot_path(offset)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(body)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)

    def load_snapshot(self, max_offset: int) -> int:
        """Loads the newest valid snapshot at or below ``max_offset``; returns its offset (or
        -1: start from nothing). Snapshots above ``max_offset`` (a truncated log) are deleted,
        and so are corrupt ones."""
        self.producers.clear()
        self.ongoing.clear()
        for offset in reversed(self.snapshot_offsets()):
            path = self.snapshot_path(offset)
            if offset > max_offset:
                path.unlink(missing_ok=True)
                continue
            try:
                self._read_snapshot(path.read_bytes())
                return offset
            except (ValueError, struct.error, OSError):
                self.producers.clear()
                self.ongoing.clear()
                path.unlink(missing_ok=True)
        return -1

    def _read_snapshot(self, data: bytes) -> None:
        version, crc, count = _SNAP_HEADER.unpack_from(data, 0)
        if version != SNAPSHOT_VERSION:
            raise ValueError(f"unknown producer snapshot version {version}")
        if crc32c.crc32c(memoryview(data)[_CRC_FROM:]) != crc:
            raise ValueError("producer snapshot CRC mismatch")
        if len(data) != _SNAP_HEADER.size + count * _SNAP_ENTRY.size:
            raise ValueError("producer snapshot size mismatch")
        pos = _SNAP_HEADER.size
        txns = []
        for _ in range(count):
            pid, epoch, last_seq, last_offset, delta, ts, coord_epoch, txn_first = (
                _SNAP_ENTRY.unpack_from(data, pos))
            pos += _SNAP_ENTRY.size
            entry = ProducerStateEntry(pid, epoch)
            if last_offset >= 0:
                entry.batches.append(BatchMetadata(last_seq, last_offset, delta, ts))
            entry.coordinator_epoch = coord_epoch
            entry.current_txn_first_offset = txn_first
            entry.last_timestamp = ts
            self.producers[pid] = entry
            if txn_first >= 0:
                txns.append((txn_first, pid))
        for first, pid in sorted(txns):
            self.ongoing[first] = pid

    def delete_snapshots_below(self, offset: int, keep_latest: int = 2) -> None:
        """Removes snapshots older than ``offset`` (the log start) and all but the newest few."""
        offsets = self.snapshot_offsets()
        for i, o in enumerate(offsets):
            if o < offset or i < len(offsets) - keep_latest:
                self.snapshot_path(o).unlink(missing_ok=True)
