"""Produce batches whose header and CRC are right but whose records are not, the way a buggy or
hostile producer could send them; shared by the comparison tests (pykafkad and Apache Kafka get
the same bytes) and the stock-client recovery test."""

from __future__ import annotations

import struct
import time
import zlib

from wire.records import codecs
from wire.records.batch import build_batch, rewrite_crc
from wire.records.header import HEADER_SIZE, LOG_OVERHEAD
from wire.records.record import encode_record

_HEADER = struct.Struct(">qiibIhiqqqhii")


def raw_batch(section: bytes, count: int, *, last_offset_delta: int | None = None,
              codec: int = codecs.NONE, compress: bool = True, base_ts: int | None = None,
              max_ts: int | None = None, attributes: int = 0) -> bytes:
    """A v2 batch around an arbitrary records ``section`` (compressed with ``codec`` unless
    ``compress`` is False), with a correct CRC."""
    ts = int(time.time() * 1000) if base_ts is None else base_ts
    payload = codecs.compress(codec, section) if compress and codec else section
    out = bytearray(HEADER_SIZE + len(payload))
    _HEADER.pack_into(out, 0, 0, len(out) - LOG_OVERHEAD, -1, 2, 0, attributes | codec,
                      count - 1 if last_offset_delta is None else last_offset_delta, ts,
                      ts if max_ts is None else max_ts, -1, -1, -1, count)
    out[HEADER_SIZE:] = payload
    rewrite_crc(out, 0, len(out))
    return bytes(out)


def record(offset_delta: int = 0, key: bytes | None = b"k", value: bytes | None = b"v",
           headers=(), ts_delta: int = 0, attributes: int = 0) -> bytes:
    out = bytearray()
    encode_record(out, offset_delta, ts_delta, key, value, headers, attributes)
    return bytes(out)


def _body(length_varint: bytes, body: bytes) -> bytes:
    return length_varint + body


def _zz(v: int) -> bytes:
    """A zigzag varint."""
    u = ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def _manual(*fields: bytes) -> bytes:
    """One record from raw body fields, prefixed by its true length."""
    body = b"".join(fields)
    return _zz(len(body)) + body


VALID = build_batch([(b"k", b"v")])
TWO = record(0) + record(1)
ONE_BODY = record(0)[1:]  # the body of a one-record section (its length varint is 1 byte)


def _patched(batch: bytes, at: int, fmt: str, value: int, crc: bool = True) -> bytes:
    out = bytearray(batch)
    struct.pack_into(fmt, out, at, value)
    if crc:
        rewrite_crc(out, 0, len(out))
    return bytes(out)


def _legacy_message(magic: int) -> bytes:
    """One magic 0/1 message (a message set of one), with a correct CRC32."""
    body = struct.pack(">bb", magic, 0)
    if magic == 1:
        body += struct.pack(">q", int(time.time() * 1000))
    body += struct.pack(">ii", -1, 1) + b"v"
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", 0, len(message)) + message


def malformed_cases() -> dict[str, bytes]:
    """name -> the records field of one partition of a Produce request."""
    rnd = bytes((i * 97 + 13) & 0xFF for i in range(40))
    return {
        "random_bytes": raw_batch(rnd, 1),
        "all_zeros": raw_batch(bytes(20), 1),
        "length_too_long": raw_batch(_zz(len(ONE_BODY) + 1) + ONE_BODY, 1),
        "length_too_short": raw_batch(_zz(len(ONE_BODY) - 1) + ONE_BODY, 1),
        "length_beyond_batch": raw_batch(_zz(200) + ONE_BODY, 1),
        "length_negative": raw_batch(_zz(-3) + ONE_BODY, 1),
        "fewer_records_than_count": raw_batch(TWO, 3),
        "more_records_than_count": raw_batch(TWO, 1),
        "trailing_bytes": raw_batch(record(0) + b"\x00\x01", 1),
        "offset_delta_gap": raw_batch(record(0) + record(2), 2, last_offset_delta=1),
        "offset_delta_gap_count_match": raw_batch(record(0) + record(2), 3, last_offset_delta=2),
        "offset_delta_not_zero": raw_batch(record(1), 1),
        "offset_delta_decreasing": raw_batch(record(1) + record(0), 2),
        "key_length_minus_two": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(-2), _zz(1), b"v",
                                                  _zz(0)), 1),
        "value_length_too_long": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(1), b"k", _zz(9),
                                                   b"v", _zz(0)), 1),
        "header_count_negative": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(1), b"k", _zz(1),
                                                   b"v", _zz(-1)), 1),
        "header_count_too_large": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(1), b"k", _zz(1),
                                                    b"v", _zz(5), _zz(1), b"h", _zz(1), b"x"), 1),
        "header_key_null": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(1), b"k", _zz(1), b"v",
                                             _zz(1), _zz(-1), _zz(1), b"x"), 1),
        "record_attributes_set": raw_batch(record(0, attributes=1), 1),
        "varint_too_long": raw_batch(_manual(b"\x00", b"\xff" * 10 + b"\x01", _zz(0), _zz(1),
                                             b"k", _zz(1), b"v", _zz(0)), 1),
        "zstd_corrupt_payload": raw_batch(b"\x28\xb5\x2f\xfd" + rnd, 1, codec=codecs.ZSTD,
                                          compress=False),
        "gzip_corrupt_payload": raw_batch(b"\x1f\x8b\x08\x00" + rnd, 1, codec=codecs.GZIP,
                                          compress=False),
        "lz4_corrupt_payload": raw_batch(b"\x04\x22\x4d\x18" + rnd, 1, codec=codecs.LZ4,
                                         compress=False),
        "snappy_corrupt_payload": raw_batch(rnd, 1, codec=codecs.SNAPPY, compress=False),
        "gzip_truncated": raw_batch(codecs.compress(codecs.GZIP, TWO)[:-6], 2, codec=codecs.GZIP,
                                    compress=False),
        "zstd_random_records": raw_batch(rnd, 1, codec=codecs.ZSTD),
        "gzip_fewer_records_than_count": raw_batch(TWO, 3, codec=codecs.GZIP),
        "zstd_more_records_than_count": raw_batch(TWO, 1, codec=codecs.ZSTD),
        "lz4_length_too_long": raw_batch(_zz(len(ONE_BODY) + 1) + ONE_BODY, 1, codec=codecs.LZ4),
        "snappy_offset_delta_gap": raw_batch(record(0) + record(2), 2, last_offset_delta=1,
                                             codec=codecs.SNAPPY),
        "gzip_raw_deflate_garbage": raw_batch(zlib.compress(b"x" * 10), 1, codec=codecs.GZIP,
                                              compress=False),
        "zstd_length_too_short": raw_batch(_zz(len(ONE_BODY) - 1) + ONE_BODY, 1, codec=codecs.ZSTD),
        "zstd_length_negative": raw_batch(_zz(-3) + ONE_BODY, 1, codec=codecs.ZSTD),
        "zstd_offset_delta_gap": raw_batch(record(0) + record(2), 2, last_offset_delta=1,
                                           codec=codecs.ZSTD),
        "gzip_offset_delta_not_zero": raw_batch(record(1), 1, codec=codecs.GZIP),
        "zstd_header_key_null": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(1), b"k", _zz(1),
                                                  b"v", _zz(1), _zz(-1), _zz(1), b"x"), 1,
                                          codec=codecs.ZSTD),
        "zstd_header_count_negative": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(1), b"k",
                                                        _zz(1), b"v", _zz(-1)), 1, codec=codecs.ZSTD),
        "zstd_value_length_too_long": raw_batch(_manual(b"\x00", _zz(0), _zz(0), _zz(1), b"k",
                                                        _zz(9), b"v", _zz(0)), 1, codec=codecs.ZSTD),
        "lz4_record_attributes_set": raw_batch(record(0, attributes=1), 1, codec=codecs.LZ4),
        "zstd_empty_section": raw_batch(b"", 1, codec=codecs.ZSTD),
        "max_timestamp_mismatch": raw_batch(TWO, 2, max_ts=5),
        "gzip_max_timestamp_mismatch": raw_batch(TWO, 2, max_ts=5, codec=codecs.GZIP),
        "valid_gzip": raw_batch(TWO, 2, codec=codecs.GZIP),
        "valid_snappy": raw_batch(TWO, 2, codec=codecs.SNAPPY),
        "valid_lz4": raw_batch(TWO, 2, codec=codecs.LZ4),
        "valid_zstd": raw_batch(TWO, 2, codec=codecs.ZSTD),
        "log_append_time_batch": build_batch([(b"k", b"v")], timestamp_type=1,
                                             max_timestamp=int(time.time() * 1000)),
        "log_append_time_batch_no_timestamp": build_batch([(b"k", b"v")], timestamp_type=1,
                                                          max_timestamp=-1),
        "zstd_log_append_time_batch": build_batch([(b"k", b"v")], timestamp_type=1,
                                                  compression=codecs.ZSTD,
                                                  max_timestamp=int(time.time() * 1000)),
        # the batch itself (header and framing)
        "crc_mismatch": _patched(VALID, 17, ">I", 12345, crc=False),
        "base_offset_not_zero": _patched(VALID, 0, ">q", 5, crc=False),
        "count_not_last_offset_delta_plus_one": _patched(VALID, 57, ">i", 2),
        "control_batch": _patched(VALID, 21, ">h", 0x20),
        "codec_6": raw_batch(TWO, 2, attributes=6),
        "producer_id_without_sequence": _patched(VALID, 43, ">q", 7),
        "magic_1": _legacy_message(1),
        "magic_0": _legacy_message(0),
        "two_batches": VALID + VALID,
        "trailing_partial_batch": VALID + VALID[:20],
        "trailing_byte": VALID + b"\x00",
        "trailing_zero_length": VALID + bytes(12),
        "truncated_batch": VALID[:-3],
        "future_timestamp": build_batch([(b"k", b"v", (), int(time.time() * 1000) + 7_200_000)]),
    }


#: what Apache Kafka 4.4.0 answers for each case of ``malformed_cases`` (a topic with default
#: configs): 87 INVALID_RECORD, -1 UNKNOWN_SERVER_ERROR (an undecodable compressed payload, a
#: compressed batch whose offset deltas are not 0, 1, 2 ..., a codec id above 4),
#: 2 CORRUPT_MESSAGE, 32 INVALID_TIMESTAMP, 0 stored (a trailing partial batch is dropped).
#: Uncompressed record offset deltas and attributes are never checked; compressed records' declared
#: lengths are ignored unless negative.
EXPECTED = {
    **dict.fromkeys([
        "random_bytes", "all_zeros", "length_too_long", "length_too_short", "length_beyond_batch",
        "length_negative", "fewer_records_than_count", "more_records_than_count",
        "trailing_bytes", "offset_delta_gap_count_match", "value_length_too_long",
        "header_count_negative", "header_count_too_large", "header_key_null", "varint_too_long",
        "zstd_random_records", "gzip_fewer_records_than_count", "zstd_more_records_than_count",
        "zstd_length_negative", "zstd_header_key_null", "zstd_header_count_negative",
        "zstd_value_length_too_long", "zstd_empty_section", "base_offset_not_zero",
        "count_not_last_offset_delta_plus_one", "control_batch", "producer_id_without_sequence",
        "magic_1", "magic_0", "two_batches", "truncated_batch"], 87),
    **dict.fromkeys(["crc_mismatch", "trailing_zero_length"], 2),
    **dict.fromkeys([
        "zstd_corrupt_payload", "gzip_corrupt_payload", "lz4_corrupt_payload",
        "snappy_corrupt_payload", "gzip_truncated", "gzip_raw_deflate_garbage",
        "snappy_offset_delta_gap", "zstd_offset_delta_gap", "gzip_offset_delta_not_zero",
        "codec_6"], -1),
    **dict.fromkeys([
        "offset_delta_gap", "offset_delta_not_zero", "offset_delta_decreasing",
        "key_length_minus_two", "record_attributes_set", "lz4_length_too_long",
        "zstd_length_too_short", "lz4_record_attributes_set", "max_timestamp_mismatch",
        "gzip_max_timestamp_mismatch", "valid_gzip", "valid_snappy", "valid_lz4",
        "valid_zstd", "log_append_time_batch", "zstd_log_append_time_batch",
        "trailing_partial_batch", "trailing_byte"], 0),
    "future_timestamp": 32,
    "log_append_time_batch_no_timestamp": 32,
}


def config_cases() -> list[tuple[str, dict, str, bytes, int]]:
    """(topic config name, topic configs, case name, records, Kafka's error code): rules that
    depend on the topic's configs."""
    now = int(time.time() * 1000)
    compact = {"cleanup.policy": "compact"}
    before = {"message.timestamp.before.max.ms": "50000"}
    gzip = {"compression.type": "gzip"}
    lat = {"message.timestamp.type": "LogAppendTime"}
    small = {"max.decompressed.message.bytes": "512"}
    zeros = bytes(4096)
    cases = malformed_cases()
    return [
        ("compact", compact, "keyless", build_batch([(None, b"v"), (b"k", b"v"), (None, b"v")]),
         87),
        ("compact", compact, "keyless_and_future", build_batch(
            [(None, b"v", (), now), (b"k", b"v", (), now + 7_200_000)]), 32),
        ("compact", compact, "zstd_keyless", build_batch(
            [(None, b"v"), (b"k", b"v")], compression=codecs.ZSTD), 87),
        ("before", before, "past", build_batch([
            (b"k", b"v", (), now - 100_000), (b"k", b"v", (), now),
            (b"k", b"v", (), now - 200_000)]), 32),
        ("before", before, "no_timestamp", build_batch([(b"k", b"v", (), -1)]), 0),
        ("before", before, "negative_timestamp", build_batch([(b"k", b"v", (), -5)]), 32),
        ("before", before, "recent", build_batch([(b"k", b"v", (), now - 1000)]), 0),
        # producers may not send LogAppendTime batches to a LogAppendTime topic
        ("lat", lat, "log_append_time_batch", cases["log_append_time_batch"], 32),
        ("lat", lat, "zstd_log_append_time_null_key", build_batch(
            [(None, b"v", (), now)], timestamp_type=1, max_timestamp=now,
            compression=codecs.ZSTD), 32),
        ("lat", lat, "gzip_log_append_time_null_value", build_batch(
            [(b"kk", None, (), now), (b"k", b"v", (), now)], timestamp_type=1, max_timestamp=now,
            compression=codecs.GZIP), 32),
        ("lat", lat, "create_time_far_future", build_batch([(b"k", b"v", (), now + 10**9)]), 0),
        # a topic that recompresses reads every record fully, so the rules change
        ("gzip", gzip, "lz4_length_too_long", cases["lz4_length_too_long"], 87),
        ("gzip", gzip, "zstd_length_too_short", cases["zstd_length_too_short"], 87),
        ("gzip", gzip, "zstd_offset_delta_gap", cases["zstd_offset_delta_gap"], 0),
        ("gzip", gzip, "offset_delta_gap", cases["offset_delta_gap"], 0),
        ("gzip", gzip, "length_too_long", cases["length_too_long"], 87),
        ("gzip", gzip, "zstd_corrupt_payload", cases["zstd_corrupt_payload"], -1),
        ("gzip", gzip, "valid", VALID, 0),
        ("gzip", gzip, "valid_zstd", cases["valid_zstd"], 0),
        ("gzip", gzip, "max_timestamp_mismatch", cases["max_timestamp_mismatch"], 0),
        # max.decompressed.message.bytes bounds each record's declared body (here 512 bytes) in
        # compressed batches only, ahead of the timestamp and key checks
        ("small", small, "gzip_large_record", build_batch(
            [(b"key", zeros)], compression=codecs.GZIP), 87),
        ("small", small, "lz4_middle_record_large", build_batch(
            [(b"k", b"v"), (b"key", zeros), (b"k", zeros[:600])], compression=codecs.LZ4), 87),
        ("small", small, "zstd_body_at_limit", build_batch(
            [(None, zeros[:505])], compression=codecs.ZSTD), 0),
        ("small", small, "zstd_body_past_limit", build_batch(
            [(None, zeros[:506])], compression=codecs.ZSTD), 87),
        ("small", small, "snappy_many_small", build_batch(
            [(b"k", zeros[:100])] * 50, compression=codecs.SNAPPY), 0),
        ("small", small, "uncompressed_large_record", build_batch([(b"key", zeros)]), 0),
        ("small", small, "gzip_large_record_past_timestamp", build_batch(
            [(b"k", b"v", (), now + 10**9), (b"key", zeros)], compression=codecs.GZIP), 87),
        ("small_gzip", {**small, **gzip}, "lz4_large_record_recompressed", build_batch(
            [(b"key", zeros)], compression=codecs.LZ4), 87),
        ("small_gzip", {**small, **gzip}, "uncompressed_large_record_recompressed",
         build_batch([(b"key", zeros)]), 0),
        ("small_compact", {**small, **compact}, "keyless_large_record", build_batch(
            [(None, b"v"), (None, zeros)], compression=codecs.GZIP), 87),
    ]
