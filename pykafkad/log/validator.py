"""Kafka's LogValidator for the leader's append of v2 batches, the part every append needs:
framing and size checks, then offsets and leader epoch patched in place. (A produced batch's
records were checked before, by pykafkad.log.record_validation.)

The producer's bytes are kept: baseOffset and partitionLeaderEpoch lie outside the CRC, so
patching them needs no recomputation. Only under LogAppendTime does a batch change inside the
CRC (timestamp-type bit, maxTimestamp), and then its CRC is rewritten. Work here is per batch
header, never per record.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import crc32c

from pykafkad.log.config import LogConfig
from pykafkad.log.errors import (
    CorruptRecordError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
)
from pykafkad.log.segment import MAGIC_V2, MIN_BATCH_LENGTH
from wire.records.header import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_FLAG,
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


class ValidatedBatches(NamedTuple):
    """The batches of one append after validation, ready for ``LogSegment.append``."""

    #: (position in the buffer, size, last offset, max timestamp) per batch
    batches: list[tuple[int, int, int, int]]
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    record_count: int


def validate_and_assign_offsets(
    buf: bytearray, first_offset: int, leader_epoch: int, config: LogConfig, now: int
) -> ValidatedBatches:
    """Checks the framing of the (non-empty) batches in ``buf`` and patches each one's
    baseOffset (consecutive from ``first_offset``) and partitionLeaderEpoch in place; under
    LogAppendTime also stamps ``now`` as maxTimestamp. Raises before anything is appended."""
    total = len(buf)
    if total > config.segment_bytes:
        raise RecordBatchTooLargeError(
            f"Message batch size is {total} bytes which exceeds the maximum configured "
            f"segment size of {config.segment_bytes}."
        )
    log_append_time = config.log_append_time
    next_offset = first_offset
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
    return ValidatedBatches(batches, next_offset - 1, max_ts, offset_of_max, record_count)
