"""Record sets and v2 batches: walking, produce-side validation, CRC, decoding and building.

The produce path checks here the 61-byte header plus one CRC32C pass (C code); the records
inside are walked afterwards by ``wire.records.scan`` (see pykafkad.log.record_validation).
Which check answers which code,
and in which order, follows Kafka's broker (``ProduceRequest.validateRecords``,
``UnifiedLog.analyzeAndValidateRecords``, ``LogValidator.validateBatch``,
``ByteBufferLogInputStream.nextBatchSize``):

* record set framing, size below the v2 header, CRC mismatch        -> CORRUPT_MESSAGE
* magic 0/1 (Produce v3+ carries magic 2 only), no batch, more than one batch, baseOffset != 0,
  recordCount <= 0 or != lastOffsetDelta + 1, control batch from a client, producer id without
  a base sequence                                                    -> INVALID_RECORD
* compression id 5..7: UNKNOWN_SERVER_ERROR from a client (Kafka lets an IllegalArgumentException
  escape), UNSUPPORTED_COMPRESSION_TYPE elsewhere
* batch larger than ``max.message.bytes``                            -> MESSAGE_TOO_LARGE
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import Any

import crc32c

from wire.errors import ErrorCode
from wire.records import codecs
from wire.records.errors import InvalidRecordError, corrupt, invalid
from wire.records.header import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_MASK,
    CONTROL_FLAG,
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    TIMESTAMP_TYPE_FLAG,
    TRANSACTIONAL_FLAG,
    BatchHeader,
)
from wire.records.record import Record, decode_records_section, encode_record

MAGIC = 2
#: smallest batchLength of a v2 batch (its header without baseOffset and batchLength)
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD
#: below this batchLength a record set is garbage whatever its magic (Kafka's RECORD_OVERHEAD_V0)
_MIN_LEGACY_LENGTH = 14
NO_TIMESTAMP = -1
CREATE_TIME = 0
LOG_APPEND_TIME = 1

_HEADER = struct.Struct(">qiibIhiqqqhii")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_MAX_TIMESTAMP_OFFSET = 35

Buffer = bytes | bytearray | memoryview


def _view(buf: Buffer) -> memoryview:
    return buf if isinstance(buf, memoryview) else memoryview(buf)


def _check_magic(magic: int) -> None:
    if magic == MAGIC:
        return
    if magic >= 0x80:
        magic -= 0x100
    if magic in (0, 1):
        raise invalid(f"record batch has magic {magic}; only magic 2 is supported")
    raise corrupt(f"invalid magic {magic} in record batch")


# -- walking a record set ---------------------------------------------------------------------


def _batch_size(mv: memoryview, pos: int, end: int) -> int | None:
    """Size of the batch at ``pos``, None when only part of it is there; raises on garbage."""
    rem = end - pos
    if rem < LOG_OVERHEAD:
        return None
    (length,) = _I32.unpack_from(mv, pos + 8)
    if length < _MIN_LEGACY_LENGTH:
        raise corrupt(f"record batch length {length} is below the minimum record overhead")
    if rem <= MAGIC_OFFSET:
        return None
    _check_magic(mv[pos + MAGIC_OFFSET])
    if length < MIN_BATCH_LENGTH:
        raise corrupt(f"record batch length {length} is shorter than the v2 batch header")
    size = LOG_OVERHEAD + length
    return size if rem >= size else None


def iter_batch_headers(buf: Buffer, *, strict: bool = False) -> Iterator[tuple[int, BatchHeader]]:
    """Yields ``(position, header)`` of each batch of a record set.

    A trailing partial batch ends the walk silently (a Fetch response may end in one), unless
    ``strict``, where it is CORRUPT_MESSAGE. Garbage (a length below any batch, a bad magic) raises
    in both modes, as Kafka's record set reader does.
    """
    mv = _view(buf)
    pos = 0
    end = len(mv)
    while pos < end:
        size = _batch_size(mv, pos, end)
        if size is None:
            if strict:
                raise corrupt(f"partial record batch at byte {pos} of {end}")
            return
        yield pos, BatchHeader(mv, pos)
        pos += size


# -- CRC ----------------------------------------------------------------------------------------


def compute_crc(buf: Buffer, pos: int = 0, size: int | None = None) -> int:
    """CRC32C of the batch at ``pos`` from its attributes to its end (what the header stores)."""
    mv = _view(buf)
    if size is None:
        size = LOG_OVERHEAD + _I32.unpack_from(mv, pos + 8)[0]
    return crc32c.crc32c(mv[pos + ATTRIBUTES_OFFSET : pos + size])


def rewrite_crc(buf: bytearray | memoryview, pos: int = 0, size: int | None = None) -> int:
    """Recomputes and stores the CRC in place, after the broker changed covered fields."""
    crc = compute_crc(buf, pos, size)
    _U32.pack_into(buf, pos + CRC_OFFSET, crc)
    return crc


def set_log_append_time(buf: bytearray | memoryview, pos: int, timestamp: int) -> None:
    """Turns the batch at ``pos`` into LogAppendTime with ``timestamp``, in place.

    As Kafka's ``DefaultRecordBatch.setMaxTimestamp``: the attributes are rebuilt from the codec,
    transactional and control bits plus the timestamp-type bit, maxTimestamp becomes the append
    time, baseTimestamp (the first record's create time) stays, and the CRC is recomputed. Readers
    then report maxTimestamp as every record's timestamp.
    """
    header = BatchHeader(buf, pos)
    if header.is_log_append_time and header.max_timestamp == timestamp:
        return
    keep = COMPRESSION_MASK | TRANSACTIONAL_FLAG | CONTROL_FLAG
    attributes = (header.attributes & keep) | TIMESTAMP_TYPE_FLAG
    _I16.pack_into(buf, pos + ATTRIBUTES_OFFSET, attributes)
    _I64.pack_into(buf, pos + _MAX_TIMESTAMP_OFFSET, timestamp)
    rewrite_crc(buf, pos, header.size)


def _check_crc(mv: memoryview, pos: int, size: int, header: BatchHeader) -> None:
    computed = crc32c.crc32c(mv[pos + ATTRIBUTES_OFFSET : pos + size])
    if computed != header.crc:
        raise corrupt(f"record batch is corrupt (stored crc {header.crc}, computed {computed})")


# -- produce-side validation --------------------------------------------------------------------


def validate_batch(
    buf: Buffer,
    pos: int = 0,
    *,
    from_client: bool = True,
    max_size: int | None = None,
) -> BatchHeader:
    """Checks the batch at ``pos`` as Kafka does before appending it; returns its header.

    Header fields and one CRC pass only. ``from_client`` adds the checks Kafka applies to
    producer batches (log recovery and replication skip them): baseOffset 0, a record count that
    matches lastOffsetDelta, no control batch, a base sequence whenever there is a producer id.
    ``max_size`` is the topic's ``max.message.bytes``.
    """
    mv = _view(buf)
    end = len(mv)
    if end - pos <= MAGIC_OFFSET:
        raise corrupt("record batch shorter than its magic byte")
    size = _batch_size(mv, pos, end)
    if size is None:
        raise corrupt("record batch is truncated")
    header = BatchHeader(mv, pos)
    if header.compression > codecs.ZSTD:
        if from_client:  # Kafka's broker fails on the codec id with an unexpected exception
            raise InvalidRecordError(
                ErrorCode.UNKNOWN_SERVER_ERROR, f"unknown compression codec {header.compression}")
        raise codecs.unsupported(header.compression)
    if from_client and header.base_offset != 0:
        raise invalid(f"a produced record batch must have baseOffset 0, not {header.base_offset}")
    if max_size is not None and size > max_size:
        raise InvalidRecordError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"record batch of {size} bytes exceeds max.message.bytes {max_size}",
        )
    _check_crc(mv, pos, size, header)
    if from_client:
        count_from_offsets = header.last_offset_delta + 1
        if count_from_offsets <= 0:
            raise invalid(f"record batch has an invalid lastOffsetDelta {header.last_offset_delta}")
        if header.record_count <= 0:
            raise invalid(f"invalid record count {header.record_count} in record batch")
        if count_from_offsets != header.record_count:
            raise invalid(
                f"lastOffsetDelta {header.last_offset_delta} does not match "
                f"record count {header.record_count}"
            )
        if header.is_control:
            raise invalid("clients are not allowed to write control records")
        if header.producer_id >= 0 and header.base_sequence < 0:
            raise invalid(
                f"invalid sequence {header.base_sequence} with producer id {header.producer_id}"
            )
    return header


def validate_produce_records(
    records: Buffer, *, max_size: int | None = None, allow_zstd: bool = True
) -> BatchHeader:
    """One partition's records of a Produce v3+ request: exactly one valid client batch.

    ``allow_zstd=False`` for Produce v0-6, which Kafka refuses zstd on. As Kafka's record set
    reader does, a trailing partial batch is ignored (the caller appends only ``header.size``
    bytes), while trailing bytes that cannot start a batch are CORRUPT_MESSAGE.
    """
    mv = _view(records)
    end = len(mv)
    if _batch_size(mv, 0, end) is None:
        raise invalid("produce records must hold one record batch")
    header = validate_batch(mv, 0, max_size=max_size)
    if not allow_zstd and header.compression == codecs.ZSTD:
        raise InvalidRecordError(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "zstd needs Produce v7 or later"
        )
    size = header.size
    if size != end and _batch_size(mv, size, end) is not None:
        raise invalid("produce records must hold exactly one record batch")
    return header


# -- decoding -----------------------------------------------------------------------------------


def decode_records(
    batch: Buffer,
    pos: int = 0,
    *,
    max_decompressed_size: int = codecs.DEFAULT_MAX_DECOMPRESSED_SIZE,
    verify_crc: bool = False,
) -> list[Record]:
    """All records of the batch at ``pos``, with absolute offsets and timestamps.

    Under LogAppendTime every record's timestamp is the batch's maxTimestamp, as clients read it.
    """
    mv = _view(batch)
    end = len(mv)
    if end - pos < HEADER_SIZE:
        raise corrupt("record batch shorter than its header")
    size = _batch_size(mv, pos, end)
    if size is None:
        raise corrupt("record batch is truncated")
    header = BatchHeader(mv, pos)
    if verify_crc:
        _check_crc(mv, pos, size, header)
    count = header.record_count
    if count < 0:
        raise invalid(f"invalid record count {count} in record batch")
    if count == 0:
        return []
    section = mv[pos + HEADER_SIZE : pos + size]
    codec = header.compression
    if codec == codecs.NONE:
        data = bytes(section)
    else:
        data = codecs.decompress(codec, section, max_decompressed_size)
    return decode_records_section(
        data,
        count,
        header.base_offset,
        header.base_timestamp,
        header.max_timestamp if header.is_log_append_time else None,
    )


# -- building -----------------------------------------------------------------------------------


def _fields(rec: Any) -> tuple[Any, Any, Any, int | None, int | None, int]:
    if isinstance(rec, tuple):
        key, value, headers, timestamp, offset_delta = (tuple(rec) + (None,) * 5)[:5]
        return key, value, headers or (), timestamp, offset_delta, 0
    return (
        rec.key,
        rec.value,
        getattr(rec, "headers", None) or (),
        getattr(rec, "timestamp", None),
        getattr(rec, "offset_delta", None),
        getattr(rec, "attributes", 0) or 0,
    )


def build_batch(
    records: Iterable[Any],
    *,
    base_offset: int = 0,
    compression: int = codecs.NONE,
    timestamp_type: int = CREATE_TIME,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
    compression_level: int | None = None,
) -> bytes:
    """Encodes one v2 batch, as Kafka's MemoryRecordsBuilder would.

    ``records`` are ``Record`` objects (or anything with ``key``/``value`` and optionally
    ``headers``, ``timestamp``, ``offset_delta``) or tuples ``(key, value[, headers[, timestamp[,
    offset_delta]]])``. A missing timestamp is the batch's ``base_timestamp`` (else -1); a missing
    offset delta is the previous one plus one. ``base_timestamp`` defaults to the first record's;
    ``max_timestamp`` to the largest record timestamp (pass the append time for LogAppendTime);
    ``last_offset_delta`` to the last record's (a compacted batch keeps its original one).
    ``compression_level`` is the codec's level (None: its default).
    """
    if compression not in codecs.CODEC_NAMES:
        raise ValueError(f"unknown compression codec {compression}")
    items = [_fields(r) for r in records]
    if not items:
        compression = codecs.NONE  # as Kafka writes an empty batch
    if base_timestamp is None:
        base_timestamp = items[0][3] if items and items[0][3] is not None else NO_TIMESTAMP
    section = bytearray()
    max_ts = NO_TIMESTAMP
    prev_delta = -1
    for key, value, headers, timestamp, offset_delta, attributes in items:
        if timestamp is None:
            timestamp = base_timestamp
        if offset_delta is None:
            offset_delta = prev_delta + 1
        if offset_delta <= prev_delta or offset_delta > 0x7FFFFFFF:
            raise ValueError(f"offset delta {offset_delta} does not follow {prev_delta}")
        prev_delta = offset_delta
        if timestamp > max_ts:
            max_ts = timestamp
        ts_delta = timestamp - base_timestamp
        if not -(1 << 63) <= ts_delta < (1 << 63):
            raise ValueError(f"timestamp {timestamp} is too far from the base {base_timestamp}")
        encode_record(section, offset_delta, ts_delta, key, value, headers, attributes)
    if last_offset_delta is None:
        last_offset_delta = max(prev_delta, 0)
    elif last_offset_delta < prev_delta:
        raise ValueError(f"last offset delta {last_offset_delta} is before a record's {prev_delta}")
    if max_timestamp is None:
        max_timestamp = max_ts
    payload = codecs.compress(compression, section, compression_level) if items else b""
    attributes = compression & COMPRESSION_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_FLAG
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG
    if is_control:
        attributes |= CONTROL_FLAG
    out = bytearray(HEADER_SIZE + len(payload))
    _HEADER.pack_into(
        out,
        0,
        base_offset,
        len(out) - LOG_OVERHEAD,
        partition_leader_epoch,
        MAGIC,
        0,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(items),
    )
    out[HEADER_SIZE:] = payload
    rewrite_crc(out, 0, len(out))
    return bytes(out)
