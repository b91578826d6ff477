"""What the log cleaner keeps of each batch: the offset map, transaction tracking, the filter.

Kafka's rules (``Cleaner``, ``CleanedTransactionMetadata``, ``MemoryRecords.filterTo``):

* The offset map holds, for every key in the dirty section, the offset of its newest record.
  A keyed record survives when no newer record of its key was mapped; a record past the map's
  last offset always survives; a record without a key never does.
* A tombstone (null value) survives until its batch's delete horizon. The first cleaning that
  keeps a tombstone (or a marker of a transaction with no records left) rewrites its batch with
  the delete-horizon attribute bit and ``baseTimestamp = now + delete.retention.ms``; a later
  cleaning after that time drops the tombstone.
* Records of aborted transactions go; their abort marker stays until none of them is left, then
  until its own delete horizon. A commit marker stays while records of its transaction remain.
* A batch keeps its base offset and lastOffsetDelta, so offsets never move and a consumer's next
  offset stays right. A batch that loses every record is dropped, except as an empty header
  when it is the last batch of a producer the partition still tracks (its sequence numbers
  guard idempotence) or the last batch before the cleaning round's upper bound.
* Batches that keep every record and need no horizon are copied byte for byte; the others are
  rebuilt with their codec, attributes and producer fields, and a new CRC.
"""

from __future__ import annotations

import heapq
import struct
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from pykafkad.log.errors import CorruptRecordError
from pykafkad.log.region import SegmentFile
from pykafkad.log.txn_index import AbortedTxn
from wire.records.batch import LOG_APPEND_TIME, build_batch, decode_records, rewrite_crc
from wire.records.control import ABORT, COMMIT, decode_control_key
from wire.records.header import (
    ATTRIBUTES_OFFSET,
    DELETE_HORIZON_FLAG,
    HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
)
from wire.records.record import Record

MAGIC_V2 = 2
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD
#: bytes read from a segment at a time (grown for a larger batch); Kafka's io buffer default
READ_CHUNK = 512 * 1024
_ATTRS = struct.Struct(">h")


class LastRecord(NamedTuple):
    """A producer the partition still tracks: its last data batch's last offset (None when its
    last entry is a marker of a newer epoch) and its epoch (Kafka's ``LastRecord``)."""

    last_data_offset: int | None
    producer_epoch: int


class OffsetMap:
    """key -> offset of its newest record in the dirty section (Kafka's SkimpyOffsetMap, with
    exact keys instead of MD5 digests). ``max_entries`` bounds it as the dedupe buffer does."""

    def __init__(self, max_entries: int):
        self.max_entries = max(1, max_entries)
        self.offsets: dict[bytes, int] = {}
        #: the last offset the map covers; records beyond it are not deduplicated
        self.latest_offset = -1

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def full(self) -> bool:
        return len(self.offsets) >= self.max_entries

    def get(self, key: bytes) -> int:
        return self.offsets.get(key, -1)


# -- reading segments ---------------------------------------------------------------------------


def iter_batches(
    file: SegmentFile, size: int, start: int = 0, chunk: int = READ_CHUNK
) -> Iterator[tuple[BatchHeader, memoryview]]:
    """Every batch of a segment file from position ``start`` to ``size``: (header, bytes)."""
    pos = start
    while size - pos >= HEADER_SIZE:
        want = min(chunk, size - pos)
        buf = file.pread(want, pos)
        if len(buf) != want:
            raise CorruptRecordError(f"{file.path}: short read at position {pos}")
        mv = memoryview(buf)
        rel = 0
        while len(mv) - rel >= HEADER_SIZE:
            length = struct.unpack_from(">i", mv, rel + 8)[0]
            if length < MIN_BATCH_LENGTH or mv[rel + 16] != MAGIC_V2:
                raise CorruptRecordError(
                    f"{file.path}: invalid record batch at position {pos + rel}"
                )
            batch_size = length + LOG_OVERHEAD
            if pos + rel + batch_size > size:
                raise CorruptRecordError(f"{file.path}: truncated record batch at {pos + rel}")
            if rel + batch_size > len(mv):
                break
            yield BatchHeader(mv, rel), mv[rel : rel + batch_size]
            rel += batch_size
        if rel == 0:
            # one batch larger than the chunk: read exactly it
            length = struct.unpack_from(">i", mv, 8)[0]
            chunk = max(chunk, length + LOG_OVERHEAD)
            continue
        pos += rel
    if pos != size and size - pos < HEADER_SIZE:
        raise CorruptRecordError(f"{file.path}: {size - pos} stray bytes at the end")


def delete_horizon(header: BatchHeader) -> int | None:
    """The batch's delete horizon (KIP-534): its baseTimestamp when the attribute bit is set."""
    return header.base_timestamp if header.attributes & DELETE_HORIZON_FLAG else None


# -- transactions -------------------------------------------------------------------------------


class _AbortedTxnState:
    __slots__ = ("txn", "last_observed_batch_offset")

    def __init__(self, txn: AbortedTxn):
        self.txn = txn
        self.last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    """Transactions as the cleaner walks the log in offset order: which data batches belong to
    aborted transactions (dropped), which markers may go, and the cleaned ``.txnindex``."""

    def __init__(self) -> None:
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _AbortedTxnState] = {}
        self._aborted: list[tuple[int, int, AbortedTxn]] = []  # heap by first offset
        self._seen: set[AbortedTxn] = set()
        self._seq = 0
        #: aborted transactions whose marker the current cleaned segment keeps
        self.cleaned_index: list[AbortedTxn] | None = None

    def add_aborted_transactions(self, txns) -> None:
        for t in txns:
            txn = AbortedTxn(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
            if txn in self._seen:
                continue
            self._seen.add(txn)
            self._seq += 1
            heapq.heappush(self._aborted, (txn.first_offset, self._seq, txn))

    def _consume_aborted_up_to(self, offset: int) -> None:
        heap = self._aborted
        while heap and heap[0][0] <= offset:
            txn = heapq.heappop(heap)[2]
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedTxnState(txn))

    def on_control_batch_read(self, header: BatchHeader, kind: int | None) -> bool:
        """True when the marker may be discarded (no record of its transaction is left)."""
        self._consume_aborted_up_to(header.last_offset)
        if kind is None:
            return True  # an empty control batch was already cleaned
        pid = header.producer_id
        if kind == ABORT:
            state = self._ongoing_aborted.pop(pid, None)
            if state is not None and state.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(state.txn)
                return False
            return True
        if kind == COMMIT:
            if pid in self._ongoing_committed:
                self._ongoing_committed.discard(pid)
                return False
            return True
        return False

    def on_batch_read(self, header: BatchHeader) -> bool:
        """True when the data batch belongs to an aborted transaction."""
        self._consume_aborted_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        state = self._ongoing_aborted.get(header.producer_id)
        if state is not None:
            state.last_observed_batch_offset = header.last_offset
            return True
        self._ongoing_committed.add(header.producer_id)
        return False


# -- the filter ---------------------------------------------------------------------------------


class FilterStats:
    __slots__ = ("batches_read", "records_read", "bytes_read", "records_retained", "bytes_written")

    def __init__(self) -> None:
        self.batches_read = 0
        self.records_read = 0
        self.bytes_read = 0
        self.records_retained = 0
        self.bytes_written = 0


class BatchFilter:
    """Decides, batch by batch, what a cleaning round writes to the cleaned segments."""

    def __init__(
        self,
        offset_map: OffsetMap,
        txns: CleanedTransactionMetadata,
        active_producers: Mapping[int, LastRecord],
        *,
        now_ms: int,
        delete_retention_ms: int,
        upper_bound_offset: int,
    ):
        self.map = offset_map
        self.txns = txns
        self.active_producers = active_producers
        self.now = now_ms
        self.delete_retention_ms = delete_retention_ms
        self.upper_bound_offset = upper_bound_offset
        self.stats = FilterStats()

    def filter(self, header: BatchHeader, data: memoryview) -> bytes | memoryview | None:
        """The batch as the cleaned log keeps it (``data`` itself when unchanged), or None."""
        stats = self.stats
        stats.batches_read += 1
        stats.bytes_read += len(data)
        is_control = header.is_control
        horizon = delete_horizon(header)
        records: list[Record] | None = None
        if is_control:
            records = decode_records(data)
            kind = decode_control_key(records[0].key) if records else None
            can_discard = self.txns.on_control_batch_read(header, kind)
            discard_records = can_discard and horizon is not None and horizon <= self.now
        else:
            can_discard = self.txns.on_batch_read(header)
            discard_records = can_discard
        retain_empty = False
        if header.producer_id >= 0 and self._is_last_batch_of_producer(header):
            retain_empty = True
        elif header.next_offset == self.upper_bound_offset:
            # Kafka keeps the round's last batch so that the last offset is not lost
            retain_empty = True
        elif discard_records:
            return None
        if records is None:
            records = decode_records(data)
        stats.records_read += len(records)
        retained: list[Record] = []
        write_original = True
        tombstones = False
        for record in records:
            if self._retain_record(header, is_control, discard_records, horizon, record):
                retained.append(record)
                if record.value is None:
                    tombstones = True
            else:
                write_original = False
        if retained:
            stats.records_retained += len(retained)
            marker_for_empty_txn = can_discard and is_control
            set_horizon = (tombstones or marker_for_empty_txn) and horizon is None
            if write_original and not set_horizon:
                out: bytes | memoryview = data
            else:
                new_horizon = self.now + self.delete_retention_ms if set_horizon else horizon
                out = rebuild_batch(header, retained, new_horizon)
        elif retain_empty:
            out = empty_batch(header)
        else:
            return None
        stats.bytes_written += len(out)
        return out

    def _is_last_batch_of_producer(self, header: BatchHeader) -> bool:
        last = self.active_producers.get(header.producer_id)
        if last is None:
            return False
        if last.last_data_offset is not None:
            return header.last_offset == last.last_data_offset
        return header.is_control and header.producer_epoch == last.producer_epoch

    def _retain_record(
        self,
        header: BatchHeader,
        is_control: bool,
        discard_records: bool,
        horizon: int | None,
        record: Record,
    ) -> bool:
        if discard_records:
            return False
        if is_control:
            return True
        offset_map = self.map
        if record.offset > offset_map.latest_offset:
            return True
        key = record.key
        if key is None:
            return False
        if record.offset < offset_map.get(key):
            return False
        if record.value is not None:
            return True
        return horizon is None or self.now < horizon


def rebuild_batch(header: BatchHeader, records: list[Record], horizon: int | None) -> bytes:
    """The batch with only ``records``, as Kafka's ``buildRetainedRecordsInto`` writes it: same
    base offset, lastOffsetDelta, codec, timestamp type, producer fields and leader epoch;
    baseTimestamp = the delete horizon when there is one (with the attribute bit)."""
    out = build_batch(
        records,
        compression=header.compression,
        base_timestamp=horizon,
        max_timestamp=header.max_timestamp if header.is_log_append_time else None,
        **_kept_batch_fields(header),
    )
    if horizon is None:
        return out
    buf = bytearray(out)
    attrs = _ATTRS.unpack_from(buf, ATTRIBUTES_OFFSET)[0]
    _ATTRS.pack_into(buf, ATTRIBUTES_OFFSET, attrs | DELETE_HORIZON_FLAG)
    rewrite_crc(buf, 0, len(buf))
    return bytes(buf)


def empty_batch(header: BatchHeader) -> bytes:
    """A header-only batch keeping the offsets and producer fields (Kafka's writeEmptyHeader):
    no records, no codec, baseTimestamp -1, maxTimestamp kept."""
    return build_batch(
        [], base_timestamp=-1, max_timestamp=header.max_timestamp, **_kept_batch_fields(header)
    )


def _kept_batch_fields(header: BatchHeader) -> dict[str, Any]:
    """What a rewritten batch keeps of the original, for ``build_batch``: its offsets, timestamp
    type, producer fields and leader epoch (consumers and producer-state replay rely on them)."""
    return {
        "base_offset": header.base_offset,
        "last_offset_delta": header.last_offset_delta,
        "timestamp_type": LOG_APPEND_TIME if header.is_log_append_time else 0,
        "producer_id": header.producer_id,
        "producer_epoch": header.producer_epoch,
        "base_sequence": header.base_sequence,
        "partition_leader_epoch": header.partition_leader_epoch,
        "is_transactional": header.is_transactional,
        "is_control": header.is_control,
    }
