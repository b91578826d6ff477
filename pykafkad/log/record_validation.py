"""The per-record half of Kafka's LogValidator for a produced v2 batch: the records' structure,
their timestamps (``message.timestamp.before.max.ms`` / ``after.max.ms``), keys on compacted
topics, the batch's maxTimestamp, and the topic's ``compression.type``.

Which bytes pass and what is answered follows Kafka 4.4 case by case (checked against it):

* structure: INVALID_RECORD with no message. Uncompressed batches, and compressed ones the broker
  rewrites, are read fully (each record must fill its declared length); compressed batches kept
  as sent are read the way Kafka skims them, ignoring the declared lengths (see wire.records.scan).
* a compressed payload that does not decompress: UNKNOWN_SERVER_ERROR with no message (Kafka's
  decompression exception is not one of its API errors).
* bad timestamps or keyless records: Kafka's RecordValidationException, with ``record_errors``.
* a compressed batch kept as sent whose offset deltas are not 0, 1, 2 ...: Kafka tries to
  rewrite it from records it only skimmed and fails with UNKNOWN_SERVER_ERROR; so does this.
* ``max.decompressed.message.bytes``: in a compressed batch (only), a record whose declared body
  (its length prefix, ``sizeOfBodyInBytes``) is larger than the limit is INVALID_RECORD with no
  message and no record_errors, ahead of timestamp and key errors (Kafka's record iterator throws
  while reading it). The limit is per record: many small records may decompress to more.
* a topic ``compression.type`` other than ``producer`` and the batch's codec: the batch is
  rebuilt with the topic's codec and level, keeping timestamps, producer id/epoch/sequence and
  the transactional bit, with offset deltas renumbered from 0 (as Kafka's rebuild does).

Otherwise the batch stays the producer's bytes; only a maxTimestamp that differs from the
records' is corrected (new CRC), as Kafka's ``setMaxTimestamp`` does.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pykafkad.log.errors import RecordValidationError
from wire.errors import ErrorCode, KafkaError
from wire.records import codecs
from wire.records.batch import build_batch, rewrite_crc
from wire.records.errors import InvalidRecordError
from wire.records.header import (
    ATTRIBUTES_OFFSET,
    HEADER_SIZE,
    TIMESTAMP_TYPE_FLAG,
    BatchHeader,
)
from wire.records.record import decode_records_section
from wire.records.scan import record_summaries, scan_records

_CODECS = {"uncompressed": codecs.NONE, "gzip": codecs.GZIP, "snappy": codecs.SNAPPY,
           "lz4": codecs.LZ4, "zstd": codecs.ZSTD}
_LEVEL_CONFIGS = {codecs.GZIP: "compression.gzip.level", codecs.LZ4: "compression.lz4.level",
                  codecs.ZSTD: "compression.zstd.level"}
_NO_TIMESTAMP = -1
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_MAX_TIMESTAMP_AT = 35
#: a record's length is a varint of at most 5 bytes
_MAX_LENGTH_PREFIX = 5


def _jlong(v: int) -> int:
    """``v`` as Java's long arithmetic leaves it (two's complement wrap)."""
    return ((v + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


@dataclass(frozen=True)
class RecordPolicy:
    """The topic configs the record checks depend on."""

    log_append_time: bool = False
    timestamp_before_max_ms: int = (1 << 63) - 1
    timestamp_after_max_ms: int = 3600000
    #: the codec the topic stores, None for "producer" (keep the batch's)
    compression: int | None = None
    compression_level: int | None = None
    compacted: bool = False
    #: max.decompressed.message.bytes: the largest record body a compressed batch may hold
    max_decompressed_record: int = (1 << 31) - 1

    @classmethod
    def from_topic_config(cls, config: Mapping[str, Any]) -> RecordPolicy:
        codec = _CODECS.get(config["compression.type"])
        level = int(config[_LEVEL_CONFIGS[codec]]) if codec in _LEVEL_CONFIGS else None
        return cls(
            log_append_time=config["message.timestamp.type"] == "LogAppendTime",
            timestamp_before_max_ms=int(config["message.timestamp.before.max.ms"]),
            timestamp_after_max_ms=int(config["message.timestamp.after.max.ms"]),
            compression=codec,
            compression_level=level,
            compacted="compact" in config["cleanup.policy"],
            max_decompressed_record=int(config["max.decompressed.message.bytes"]),
        )


def validate_records(records, header: BatchHeader, policy: RecordPolicy, now: int,
                     topic_partition: str) -> tuple[Any, BatchHeader]:
    """Checks the records of one produced batch (its header and CRC already checked) and returns
    the batch to append with its header: ``records`` itself, or new bytes when maxTimestamp was
    corrected or the topic's codec differs. Raises KafkaError for a batch Kafka refuses."""
    codec = header.compression
    target = codec if policy.compression is None else policy.compression
    in_place = codec == target
    mv = memoryview(records)
    size = header.size
    count = header.record_count
    if codec == codecs.NONE:
        data = bytes(mv[HEADER_SIZE:size])
    else:
        try:
            data = _decompress(codec, mv[HEADER_SIZE:size], count, policy.max_decompressed_record)
        except InvalidRecordError as e:
            if e.code == ErrorCode.CORRUPT_MESSAGE:
                raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, None) from None
            raise
    full = codec == codecs.NONE or not in_place
    scan = scan_records(data, count, full=full)
    if codec != codecs.NONE and len(data) > policy.max_decompressed_record:
        # only then can one record's body exceed the limit: no walk on the usual path
        _check_record_sizes(data, count, policy.max_decompressed_record)
    base_ts = header.base_timestamp
    lat_batch = header.is_log_append_time
    errors = _record_errors(data, count, scan, header, policy, now, topic_partition, full)
    if errors:
        _raise_record_errors(errors)
    if not in_place:
        return _rebuild(data, header, target, policy.compression_level)
    if codec != codecs.NONE and not scan.in_order:
        # Kafka rewrites such a batch from records it only skimmed and fails doing so
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
    if policy.log_append_time:
        return records, header  # the log stamps the append time into maxTimestamp
    max_ts = max(_NO_TIMESTAMP, header.max_timestamp if lat_batch else _jlong(base_ts + scan.max_timestamp_delta))
    if max_ts == header.max_timestamp and not lat_batch:
        return records, header
    buf = bytearray(mv)
    _I16.pack_into(buf, ATTRIBUTES_OFFSET, header.attributes & ~TIMESTAMP_TYPE_FLAG)
    _I64.pack_into(buf, _MAX_TIMESTAMP_AT, max_ts)
    rewrite_crc(buf, 0, size)
    return buf, BatchHeader(buf)


def _decompress(codec: int, section, count: int, limit: int) -> bytes:
    """The batch's records, decompressed; under a small ``max.decompressed.message.bytes`` the
    decompression first stops at what ``count`` records within the limit can fill, and a
    record in that much that declares a larger body is refused at once (Kafka's iterator
    throws there), so a zip bomb is never decompressed whole."""
    cap = count * (limit + _MAX_LENGTH_PREFIX)
    if cap >= codecs.DEFAULT_MAX_DECOMPRESSED_SIZE:
        return codecs.decompress(codec, section)
    try:
        return codecs.decompress(codec, section, cap)
    except codecs.DecompressedTooLarge as e:
        try:
            _check_record_sizes(e.prefix, count, limit)
        except IndexError:  # the prefix ended before a record said too much
            pass
    # records that skim past what they declare: only the whole batch tells
    return codecs.decompress(codec, section)


def _check_record_sizes(data: bytes, count: int, limit: int) -> None:
    """Raises INVALID_RECORD (no message) if a record declares a body larger than ``limit``, as
    Kafka's DefaultRecord.readFrom does for ``max.decompressed.message.bytes``. Runs after the
    scan accepted ``data`` and walks records by their fields, as the scan found them, so it
    agrees with the skimming read of kept batches too."""
    pos = 0
    for _ in range(count):
        size, pos = _varint(data, pos)
        if size > limit:
            raise InvalidRecordError(ErrorCode.INVALID_RECORD, None)  # type: ignore[arg-type]
        _, pos = _varint(data, pos + 1)  # timestampDelta (after the attributes byte)
        _, pos = _varint(data, pos)  # offsetDelta
        for _ in range(2):  # key, value
            n, pos = _varint(data, pos)
            pos += max(n, 0)
        headers, pos = _varint(data, pos)
        for _ in range(headers):
            for _ in range(2):
                n, pos = _varint(data, pos)
                pos += max(n, 0)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint/varlong at ``pos`` and the position after it."""
    raw = shift = 0
    while True:
        b = data[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7


def _record_errors(data: bytes, count: int, scan, header: BatchHeader, policy: RecordPolicy,
                   now: int, topic_partition: str, full: bool) -> list[tuple[int, str, bool]]:
    """(index, message, is a timestamp error) per refused record, in record order."""
    keyless = scan.keyless if policy.compacted else []
    bad_ts = []
    lat_batch = header.is_log_append_time
    if policy.log_append_time:
        if lat_batch:  # Kafka: "Producer should not set timestamp type to LogAppendTime"
            bad_ts = _bad_timestamps(data, count, header, now, None, None, full)
    else:
        before = policy.timestamp_before_max_ms
        after = policy.timestamp_after_max_ms
        if lat_batch:
            lo = hi = header.max_timestamp
        else:
            lo = header.base_timestamp + scan.min_timestamp_delta
            hi = header.base_timestamp + scan.max_timestamp_delta
        if now - lo > before or hi - now > after or (lat_batch and lo == _NO_TIMESTAMP):
            bad_ts = _bad_timestamps(data, count, header, now, before, after, full)
    if not keyless and not bad_ts:
        return []
    key_message = ("Compacted topic cannot accept message without key in topic partition "
                   f"{topic_partition}")
    errors = {i: (i, key_message, False) for i in keyless}
    for i, message in bad_ts:
        errors.setdefault(i, (i, message, True))
    return [errors[i] for i in sorted(errors)]


def _bad_timestamps(data: bytes, count: int, header: BatchHeader, now: int, before: int | None,
                    after: int | None, full: bool) -> list[tuple[int, str]]:
    """The exact per-record check (Kafka's ``validateTimestamp``), in Java long arithmetic;
    ``before`` None stands for a LogAppendTime topic (no range to check)."""
    out = []
    lat_batch = header.is_log_append_time
    for i, (offset_delta, ts_delta, klen, vlen) in enumerate(record_summaries(data, count)):
        ts = header.max_timestamp if lat_batch else _jlong(header.base_timestamp + ts_delta)
        offset = header.base_offset + offset_delta
        if before is not None and ts != _NO_TIMESTAMP:
            diff = _jlong(now - ts)
            if diff > before or _jlong(-diff) > after:
                out.append((i, f"Timestamp {ts} of message with offset {offset} is out of "
                               f"range. The timestamp should be within [{_jlong(now - before)}, "
                               f"{_jlong(now + after)}]"))
        elif lat_batch:
            # the record as Kafka prints it: fully read, or only skimmed (sizes, -1 for null)
            if full:
                record = (f"DefaultRecord(offset={offset}, timestamp={ts}, "
                          f"key={max(klen, 0)} bytes, value={max(vlen, 0)} bytes)")
            else:
                record = (f"PartialDefaultRecord(offset={offset}, timestamp={ts}, "
                          f"key={klen} bytes, value={vlen} bytes)")
            out.append((i, f"Invalid timestamp type in message {record}. Producer should not "
                           "set timestamp type to LogAppendTime."))
    return out


def _raise_record_errors(errors: list[tuple[int, str, bool]]) -> None:
    record_errors = [(i, message) for i, message, _ in errors]
    if any(is_ts for _, _, is_ts in errors):
        raise RecordValidationError(
            ErrorCode.INVALID_TIMESTAMP,
            "One or more records have been rejected due to invalid timestamp", record_errors)
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in record_errors[:3])
    raise RecordValidationError(
        ErrorCode.INVALID_RECORD,
        f"One or more records have been rejected due to {len(errors)} record errors in total, "
        f"and only showing the first three errors at most: [{shown}]", record_errors)


def _rebuild(data: bytes, header: BatchHeader, codec: int, level: int | None):
    """The batch rewritten with the topic's codec, as Kafka's ``buildRecordsAndAssignOffsets``."""
    records = decode_records_section(
        data, header.record_count, 0, header.base_timestamp,
        header.max_timestamp if header.is_log_append_time else None)
    for i, r in enumerate(records):
        r.offset_delta = i
    try:
        batch = build_batch(
            records, compression=codec, compression_level=level,
            producer_id=header.producer_id, producer_epoch=header.producer_epoch,
            base_sequence=header.base_sequence, is_transactional=header.is_transactional)
    except (ValueError, struct.error):  # timestamps a long cannot hold (Kafka's would wrap)
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, None) from None
    return batch, BatchHeader(batch)
