"""The checks of a follower's append (Kafka's analyzeAndValidateRecords for a replica's append):
the leader's batches are kept byte for byte, offsets and partition leader epochs included.

Per batch header, never per record: framing, magic 2 and CRC32C (a replica never stores a
corrupt batch), offsets increasing, and the first batch not below the log end (Kafka's
UnexpectedAppendOffsetException). There is no max.message.bytes check: the leader accepted the
batch already. A partial batch at the end (a fetch response cut at its size limit) is dropped,
as Kafka's batch iterator stops there.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import crc32c

from pykafkad.log.errors import (
    CorruptRecordError,
    OffsetsOutOfOrderError,
    RecordBatchTooLargeError,
    UnexpectedAppendOffsetError,
)
from pykafkad.log.segment import MAGIC_V2, MIN_BATCH_LENGTH
from wire.records.header import ATTRIBUTES_OFFSET, HEADER_SIZE, LOG_OVERHEAD

#: baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
#: baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount
FULL_HEADER = struct.Struct(">qiibIhiqqqhii")
_LENGTH = struct.Struct(">i")
_UP_TO_MAGIC = 17


class FollowerBatches(NamedTuple):
    """The whole batches of a follower's append, checked."""

    #: bytes of whole batches (a trailing partial batch left out)
    valid_bytes: int
    #: (position, size, last offset, max timestamp) per batch, for ``LogSegment.append``
    batches: list[tuple[int, int, int, int]]
    #: the full header fields of each batch, in order (producer state and epochs need them)
    headers: list[tuple]
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    record_count: int


def validate_follower_batches(
    buf: bytes | bytearray | memoryview, log_end_offset: int, segment_bytes: int, name: str,
) -> FollowerBatches:
    """Checks the batches in ``buf`` for an append as follower at ``log_end_offset``; raises
    before anything is appended. ``name`` (``<topic>-<partition>``) goes into the messages."""
    total = len(buf)
    batches: list[tuple[int, int, int, int]] = []
    headers: list[tuple] = []
    max_ts = -1
    offset_of_max = -1
    record_count = 0
    last_offset = -1
    monotonic = True
    pos = 0
    unpack = FULL_HEADER.unpack_from
    view = memoryview(buf)
    while total - pos >= _UP_TO_MAGIC:
        length = _LENGTH.unpack_from(buf, pos + 8)[0]
        size = length + LOG_OVERHEAD
        if length < MIN_BATCH_LENGTH:
            raise CorruptRecordError(
                f"Record size {size} is less than the minimum record overhead ({HEADER_SIZE})")
        if pos + size > total:
            break
        h = unpack(buf, pos)
        if h[3] != MAGIC_V2:
            raise CorruptRecordError(f"Unsupported magic {h[3]} in append to {name}")
        if crc32c.crc32c(view[pos + ATTRIBUTES_OFFSET : pos + size]) != h[4]:
            raise CorruptRecordError(
                f"Record is corrupt (stored crc = {h[4]}) in topic partition {name}.")
        batch_last = h[0] + h[6]
        if last_offset >= batch_last or h[6] < 0:
            monotonic = False
        last_offset = batch_last
        if h[8] > max_ts:
            max_ts = h[8]
            offset_of_max = batch_last
        record_count += h[12]
        batches.append((pos, size, batch_last, h[8]))
        headers.append(h)
        pos += size
    if not batches:
        return FollowerBatches(0, [], [], -1, -1, -1, -1, 0)
    if not monotonic:
        raise OffsetsOutOfOrderError(f"Out of order offsets found in append to {name}")
    first_offset = headers[0][0]
    if first_offset < log_end_offset:
        raise UnexpectedAppendOffsetError(
            f"Unexpected offset in append to {name}. First offset {first_offset} is less than "
            f"the next offset {log_end_offset}. Last offset in append: {last_offset}.",
            first_offset, last_offset)
    if pos > segment_bytes:
        raise RecordBatchTooLargeError(
            f"Message batch size is {pos} bytes in append to partition {name}, which exceeds "
            f"the maximum configured segment size of {segment_bytes}.")
    return FollowerBatches(
        pos, batches, headers, first_offset, last_offset, max_ts, offset_of_max, record_count)
