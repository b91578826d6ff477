"""Record batches: our codec against itself, against kafka-python's, and against garbage."""

from __future__ import annotations

import contextlib
import gzip
import os
import struct

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import codec as kcodec
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from wire.errors import ErrorCode, RemoteProtocolError
from wire.records import codecs
from wire.records.batch import (
    build_batch,
    compute_crc,
    decode_records,
    iter_batch_headers,
    rewrite_crc,
    set_log_append_time,
    validate_batch,
    validate_produce_records,
)
from wire.records.control import (
    ABORT,
    COMMIT,
    EndTxnMarker,
    build_control_batch,
    decode_control_key,
    decode_end_txn_marker_value,
    read_end_txn_marker,
)
from wire.records.errors import InvalidRecordError
from wire.records.header import HEADER_SIZE, BatchHeader
from wire.records.record import Record

ALL_CODECS = [codecs.NONE, codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD]

SAMPLE = [
    Record(b"key-0", b"value " * 40, [("h1", b"v1"), ("null", None)], 1_700_000_000_000),
    Record(None, b"null key", [], 1_700_000_000_005),
    Record(b"null value", None, [("", b"")], 1_699_999_999_000),
    Record(b"", b"", [("\u00e9t\u00e9", b"\x00\xff")], 1_700_000_000_010),
]

_LAST_OFFSET_DELTA = 23
_RECORD_COUNT = 57


def _code(exc_info: pytest.ExceptionInfo[InvalidRecordError]) -> ErrorCode:
    return exc_info.value.code


def _content(records):
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in records]


def _patch(batch: bytes, offset: int, fmt: str, value: int, fix_crc: bool = True) -> bytearray:
    out = bytearray(batch)
    struct.pack_into(fmt, out, offset, value)
    if fix_crc:
        rewrite_crc(out)
    return out


# -- our own round trips ------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_round_trip_every_codec(codec):
    batch = build_batch(SAMPLE, base_offset=0, compression=codec)
    header = validate_batch(batch)
    assert header.compression == codec
    assert header.record_count == 4
    assert header.last_offset_delta == 3
    assert header.base_timestamp == SAMPLE[0].timestamp
    assert header.max_timestamp == max(r.timestamp for r in SAMPLE)
    assert header.size == len(batch)
    assert header.crc == compute_crc(batch)
    records = decode_records(batch, verify_crc=True)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in records] == [
        (r.key, r.value, r.headers, r.timestamp) for r in SAMPLE
    ]
    assert [r.offset for r in records] == [0, 1, 2, 3]
    assert [r.offset_delta for r in records] == [0, 1, 2, 3]
    assert records[2].timestamp_delta == SAMPLE[2].timestamp - SAMPLE[0].timestamp


def test_offsets_and_producer_fields_resolve_against_the_batch():
    batch = build_batch(
        [(b"a", b"1", None, 10), (b"b", b"2", None, 30, 5), (b"c", b"3")],
        base_offset=1000,
        producer_id=42,
        producer_epoch=3,
        base_sequence=7,
        partition_leader_epoch=9,
        is_transactional=True,
        base_timestamp=5,
        last_offset_delta=_LAST_OFFSET_DELTA,
    )
    header = validate_batch(batch, from_client=False)
    assert (header.base_offset, header.partition_leader_epoch) == (1000, 9)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (42, 3, 7)
    assert header.is_transactional and not header.is_control
    assert header.last_offset_delta == _LAST_OFFSET_DELTA
    assert header.base_timestamp == 5
    assert header.max_timestamp == 30
    records = decode_records(batch)
    assert [(r.offset, r.timestamp) for r in records] == [(1000, 10), (1005, 30), (1006, 5)]


def test_empty_batch_keeps_its_offset_range():
    batch = build_batch([], base_offset=10, last_offset_delta=4, compression=codecs.ZSTD)
    header = BatchHeader(batch)
    assert (header.record_count, header.last_offset_delta, header.compression) == (0, 4, 0)
    assert header.base_timestamp == -1
    assert decode_records(batch, verify_crc=True) == []


def test_non_utf8_header_keys_survive_a_rewrite():
    raw_key = b"\xff\xfek"
    batch = build_batch([Record(b"k", b"v", [(raw_key, b"x")], 1)])
    (record,) = decode_records(batch)
    assert record.headers[0][0].encode("utf-8", "surrogateescape") == raw_key
    assert build_batch([record]) == batch


def test_builder_refuses_programming_errors():
    with pytest.raises(ValueError):
        build_batch([(b"a", b"b", None, 0, 3), (b"a", b"b", None, 0, 3)])
    with pytest.raises(ValueError):
        build_batch([(b"a", b"b")], compression=7)
    with pytest.raises(ValueError):
        build_batch([(b"a", b"b"), (b"c", b"d")], last_offset_delta=0)


_binary = st.one_of(st.none(), st.binary(max_size=40))
_records = st.lists(
    st.builds(
        Record,
        key=_binary,
        value=_binary,
        headers=st.lists(st.tuples(st.text(max_size=8), _binary), max_size=3),
        timestamp=st.integers(min_value=-1, max_value=2**45),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(records=_records, codec=st.sampled_from(ALL_CODECS), base_offset=st.integers(0, 2**40))
def test_round_trip_property(records, codec, base_offset):
    batch = build_batch(records, base_offset=base_offset, compression=codec)
    validate_batch(batch, from_client=False)
    decoded = decode_records(batch, verify_crc=True)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in decoded] == [
        (r.key, r.value, r.headers, r.timestamp) for r in records
    ]
    assert [r.offset for r in decoded] == list(range(base_offset, base_offset + len(records)))


# -- kafka-python interoperability --------------------------------------------------------------

KP_CODECS = [
    c
    for c, available in [
        (codecs.NONE, True),
        (codecs.GZIP, kcodec.has_gzip()),
        (codecs.SNAPPY, kcodec.has_snappy()),
        (codecs.LZ4, kcodec.has_lz4()),
        (codecs.ZSTD, kcodec.has_zstd()),
    ]
    if available
]


def test_kafka_python_supports_every_codec_here():
    assert KP_CODECS == ALL_CODECS


def _kafka_python_batch(codec, records, producer=None):
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    if producer:
        builder.set_producer_state(*producer)
    for i, r in enumerate(records):
        builder.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=r.headers)
    return bytes(builder.build())


@pytest.mark.parametrize("codec", KP_CODECS)
def test_kafka_python_batches_decode_here(codec):
    records = SAMPLE * 5  # compressible, so kafka-python keeps the codec
    batch = _kafka_python_batch(codec, records, producer=(77, 2, 100, False))
    header = validate_batch(batch)
    assert header.compression == codec
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (77, 2, 100)
    assert validate_produce_records(batch).record_count == len(records)
    decoded = decode_records(batch, verify_crc=True)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in decoded] == [
        (r.key, r.value, r.headers, r.timestamp) for r in records
    ]
    assert [r.offset for r in decoded] == list(range(len(records)))


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_our_batches_decode_in_kafka_python(codec):
    batch = build_batch(
        SAMPLE, base_offset=500, compression=codec, producer_id=1, producer_epoch=0, base_sequence=0
    )
    kp = MemoryRecords(batch).next_batch()
    assert kp.validate_crc()
    assert (kp.base_offset, kp.compression_type, kp.records_count) == (500, codec, 4)
    assert (kp.producer_id, kp.producer_epoch, kp.base_sequence) == (1, 0, 0)
    got = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in kp]
    assert got == _content(decode_records(batch))
    assert [r.timestamp_type for r in MemoryRecords(batch).next_batch()] == [0] * 4


def test_kafka_python_reads_a_fetch_response_of_several_batches():
    batches = [
        build_batch(SAMPLE, base_offset=i * 4, compression=c) for i, c in enumerate(ALL_CODECS)
    ]
    record_set = b"".join(batches)
    offsets = []
    mr = MemoryRecords(record_set + batches[0][:30])  # a fetch may end in a partial batch
    while (b := mr.next_batch()) is not None:
        assert b.validate_crc()
        offsets += [r.offset for r in b]
    assert offsets == list(range(20))
    positions = [pos for pos, _ in iter_batch_headers(record_set + batches[0][:30])]
    assert positions == [sum(len(b) for b in batches[:i]) for i in range(5)]


# -- snappy framings ----------------------------------------------------------------------------


def _recompressed(batch: bytes, codec: int, payload: bytes) -> bytes:
    """The same batch with its records section replaced by ``payload`` (as another client would)."""
    out = bytearray(batch[:HEADER_SIZE]) + payload
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">h", out, 21, codec)
    rewrite_crc(out)
    return bytes(out)


def test_raw_and_xerial_snappy_both_decode():
    plain = build_batch(SAMPLE * 3)
    section = plain[HEADER_SIZE:]
    raw = _recompressed(plain, codecs.SNAPPY, bytes(cramjam.snappy.compress_raw(section)))
    xerial = build_batch(SAMPLE * 3, compression=codecs.SNAPPY)
    assert xerial[HEADER_SIZE:].startswith(codecs.XERIAL_MAGIC)
    assert raw[HEADER_SIZE : HEADER_SIZE + 8] != codecs.XERIAL_MAGIC
    kp_xerial = _recompressed(plain, codecs.SNAPPY, kcodec.snappy_encode(section))
    expected = _content(decode_records(plain))
    for batch in (raw, xerial, kp_xerial):
        validate_batch(batch)
        assert _content(decode_records(batch, verify_crc=True)) == expected


def test_xerial_blocks_and_repeated_stream_headers():
    data = bytes(range(256)) * 600  # several 32 KiB blocks
    framed = codecs.compress(codecs.SNAPPY, data)
    assert codecs.decompress(codecs.SNAPPY, framed) == data
    assert codecs.decompress(codecs.SNAPPY, kcodec.snappy_encode(data)) == data
    assert codecs.decompress(codecs.SNAPPY, framed + framed) == data + data
    assert kcodec.snappy_decode(framed) == data


# -- codecs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_codec_round_trip_and_bomb_limit(codec):
    data = bytes(300_000)
    packed = codecs.compress(codec, data)
    assert codecs.decompress(codec, packed) == data
    assert codecs.decompress(codec, packed, max_size=len(data)) == data
    with pytest.raises(InvalidRecordError) as e:
        codecs.decompress(codec, packed, max_size=len(data) - 1)
    assert _code(e) == ErrorCode.MESSAGE_TOO_LARGE


@pytest.mark.parametrize("codec", ALL_CODECS[1:])
def test_codec_garbage_and_truncation_are_corrupt(codec):
    packed = codecs.compress(codec, bytes(range(256)) * 100)
    for bad in (b"", b"garbage!" * 4, packed[: len(packed) // 2], packed + b"junk"):
        with pytest.raises(InvalidRecordError) as e:
            codecs.decompress(codec, bad)
        assert _code(e) == ErrorCode.CORRUPT_MESSAGE


def test_codecs_read_what_other_writers_write():
    data = b"hello kafka " * 1000
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert codecs.decompress(codecs.ZSTD, no_size + no_size) == data + data
    assert codecs.decompress(codecs.GZIP, gzip.compress(data) + gzip.compress(data)) == data * 2
    linked = lz4.frame.compress(data, block_linked=True, content_checksum=True)
    assert codecs.decompress(codecs.LZ4, linked + linked) == data * 2
    assert codecs.decompress(codecs.LZ4, kcodec.lz4_encode(data)) == data
    assert kcodec.lz4_decode(codecs.compress(codecs.LZ4, data)) == data
    assert kcodec.zstd_decode(codecs.compress(codecs.ZSTD, data)) == data
    assert kcodec.gzip_decode(codecs.compress(codecs.GZIP, data)) == data


def test_unknown_codec():
    for fn in (codecs.compress, codecs.decompress):
        with pytest.raises(InvalidRecordError) as e:
            fn(5, b"x")
        assert _code(e) == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


@pytest.mark.parametrize("size", [(1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3_500_000])
def test_lz4_decompresses_in_steps_with_the_same_bound(size):
    """Output past one decompression step (1 MiB): several frames, the bomb limit at the same
    byte, a truncated frame still corrupt."""
    data = os.urandom(1000) * (size // 1000) + bytes(size % 1000)
    packed = codecs.compress(codecs.LZ4, data)
    assert codecs.decompress(codecs.LZ4, packed + packed) == data + data
    assert codecs.decompress(codecs.LZ4, packed, max_size=size) == data
    assert codecs.decompress(codecs.LZ4, packed + packed, max_size=2 * size) == data + data
    for payload, limit in ((packed, size - 1), (packed + packed, size + 1),
                           (packed + packed, 2 * size - 1)):
        with pytest.raises(InvalidRecordError) as e:
            codecs.decompress(codecs.LZ4, payload, max_size=limit)
        assert _code(e) == ErrorCode.MESSAGE_TOO_LARGE
    with pytest.raises(InvalidRecordError) as e:
        codecs.decompress(codecs.LZ4, packed[:-5])
    assert _code(e) == ErrorCode.CORRUPT_MESSAGE


def test_lz4_writes_independent_blocks_as_java_requires():
    frame = codecs.compress(codecs.LZ4, bytes(200_000))
    flg, bd = frame[4], frame[5]
    assert flg & 0x20  # block independence
    assert not flg & 0x08  # no content size, like Java's Lz4BlockOutputStream
    assert (bd >> 4) & 7 == 4  # 64 KiB blocks


# -- control batches ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [ABORT, COMMIT])
def test_control_batch_as_clients_read_it(kind):
    batch = build_control_batch(kind, 4000, 5, 17, 1234, 3, 1_700_000_000_000)
    header = validate_batch(batch, from_client=False)
    assert header.attributes == 0x30  # transactional + control, uncompressed, CreateTime
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (4000, 5, -1)
    assert (header.base_offset, header.partition_leader_epoch, header.record_count) == (1234, 3, 1)
    assert header.base_timestamp == header.max_timestamp == 1_700_000_000_000
    (record,) = decode_records(batch, verify_crc=True)
    assert record.key == struct.pack(">hh", 0, kind)  # librdkafka insists on 4 bytes, version 0
    assert record.value == struct.pack(">hi", 0, 17)
    assert record.headers == []
    assert read_end_txn_marker(batch) == EndTxnMarker(kind, 17)
    kp = MemoryRecords(batch).next_batch()
    assert kp.validate_crc() and kp.is_control_batch and kp.is_transactional
    (kp_record,) = list(kp)
    assert (kp_record.type, kp_record.version, kp_record.offset) == (kind, 0, 1234)
    assert kp_record.commit == (kind == COMMIT)


def test_control_record_parsing_rules():
    assert decode_control_key(struct.pack(">hh", 3, 1)) == COMMIT  # newer versions read as 0
    assert decode_end_txn_marker_value(struct.pack(">hi", 0, 9) + b"extra") == 9
    for bad in (None, b"\x00\x00\x00", struct.pack(">hh", -1, 0)):
        with pytest.raises(InvalidRecordError) as e:
            decode_control_key(bad)
        assert _code(e) == ErrorCode.INVALID_RECORD
    with pytest.raises(InvalidRecordError):
        decode_end_txn_marker_value(b"\x00\x00\x00\x00\x00")
    with pytest.raises(InvalidRecordError):
        read_end_txn_marker(build_batch(SAMPLE))
    with pytest.raises(ValueError):
        build_control_batch(2, 1, 0, 0, 0, 0, 0)


# -- produce-side validation --------------------------------------------------------------------


def test_crc_mismatch_is_corrupt():
    batch = bytearray(build_batch(SAMPLE))
    batch[-1] ^= 0x01
    with pytest.raises(InvalidRecordError) as e:
        validate_batch(batch)
    assert _code(e) == ErrorCode.CORRUPT_MESSAGE
    with pytest.raises(InvalidRecordError) as e:
        decode_records(batch, verify_crc=True)
    assert _code(e) == ErrorCode.CORRUPT_MESSAGE
    assert not MemoryRecords(bytes(batch)).next_batch().validate_crc()


def test_fields_outside_the_crc_can_be_patched():
    from wire.records.header import set_base_offset, set_partition_leader_epoch

    batch = bytearray(build_batch(SAMPLE))
    set_base_offset(batch, 0, 99)
    set_partition_leader_epoch(batch, 0, 4)
    validate_batch(batch, from_client=False)
    assert MemoryRecords(bytes(batch)).next_batch().validate_crc()


_VALID = build_batch(SAMPLE)
_PID = build_batch(SAMPLE, producer_id=5, producer_epoch=0, base_sequence=0)


@pytest.mark.parametrize(
    ("batch", "code"),
    [
        (_VALID[:40], ErrorCode.CORRUPT_MESSAGE),  # truncated
        (_patch(_VALID, 8, ">i", 10), ErrorCode.CORRUPT_MESSAGE),  # length below any batch
        (_patch(_VALID, 8, ">i", 30), ErrorCode.CORRUPT_MESSAGE),  # below the v2 header
        (_patch(_VALID, 8, ">i", len(_VALID)), ErrorCode.CORRUPT_MESSAGE),  # past the end
        (_patch(_VALID, 16, ">b", 1), ErrorCode.INVALID_RECORD),  # legacy magic
        (_patch(_VALID, 16, ">b", 0), ErrorCode.INVALID_RECORD),
        (_patch(_VALID, 16, ">b", 3), ErrorCode.CORRUPT_MESSAGE),
        (_patch(_VALID, 16, ">b", -1), ErrorCode.CORRUPT_MESSAGE),
        (_patch(_VALID, 21, ">h", 5), ErrorCode.UNKNOWN_SERVER_ERROR),  # as Kafka 4.4
        (_patch(_VALID, 0, ">q", 7, fix_crc=False), ErrorCode.INVALID_RECORD),  # baseOffset
        (_patch(_VALID, 57, ">i", 5), ErrorCode.INVALID_RECORD),  # count != lastOffsetDelta + 1
        (_patch(_VALID, 57, ">i", 0), ErrorCode.INVALID_RECORD),  # count 0
        (_patch(_VALID, 23, ">i", -2), ErrorCode.INVALID_RECORD),
        (_patch(_VALID, 21, ">h", 0x30), ErrorCode.INVALID_RECORD),  # control from a client
        (_patch(_PID, 53, ">i", -1), ErrorCode.INVALID_RECORD),  # producer id, no sequence
    ],
)
def test_validate_batch_answers_kafkas_codes(batch, code):
    with pytest.raises(InvalidRecordError) as e:
        validate_batch(batch)
    assert _code(e) == code


def test_validate_batch_size_limit_and_recovery_mode():
    with pytest.raises(InvalidRecordError) as e:
        validate_batch(_VALID, max_size=len(_VALID) - 1)
    assert _code(e) == ErrorCode.MESSAGE_TOO_LARGE
    assert validate_batch(_VALID, max_size=len(_VALID)).size == len(_VALID)
    stored = build_batch(SAMPLE, base_offset=10, last_offset_delta=9)  # e.g. compacted
    validate_batch(stored, from_client=False)
    with pytest.raises(InvalidRecordError):
        validate_batch(stored)
    assert validate_batch(_VALID + stored, len(_VALID), from_client=False).base_offset == 10


def test_validate_produce_records():
    assert validate_produce_records(memoryview(_VALID)).record_count == 4
    cases = [
        (b"", ErrorCode.INVALID_RECORD),
        (_VALID[:11], ErrorCode.INVALID_RECORD),
        (_VALID[:40], ErrorCode.INVALID_RECORD),
        (_VALID + _VALID, ErrorCode.INVALID_RECORD),
        (_VALID + bytes(12), ErrorCode.CORRUPT_MESSAGE),  # cannot start a batch
    ]
    # a trailing partial batch is ignored, as Kafka's reader does
    for tail in (b"\x00", _VALID[:11], _VALID[:20], _VALID[:-1]):
        assert validate_produce_records(_VALID + tail).size == len(_VALID)
    for records, code in cases:
        with pytest.raises(InvalidRecordError) as e:
            validate_produce_records(records)
        assert _code(e) == code, records
    zstd = build_batch(SAMPLE, compression=codecs.ZSTD)
    validate_produce_records(zstd)
    with pytest.raises(InvalidRecordError) as e:
        validate_produce_records(zstd, allow_zstd=False)
    assert _code(e) == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


def test_iter_batch_headers_partial_and_strict():
    record_set = _VALID + build_batch(SAMPLE, base_offset=4) + _VALID
    assert [h.base_offset for _, h in iter_batch_headers(record_set)] == [0, 4, 0]
    for cut in (1, 11, 12, 16, 17, 60, len(_VALID) - 1):
        partial = record_set + _VALID[:cut]
        assert len(list(iter_batch_headers(partial))) == 3
        with pytest.raises(InvalidRecordError) as e:
            list(iter_batch_headers(partial, strict=True))
        assert _code(e) == ErrorCode.CORRUPT_MESSAGE
    assert list(iter_batch_headers(b"")) == []
    with pytest.raises(InvalidRecordError):
        list(iter_batch_headers(_VALID + bytes(20)))  # a zero length is garbage, not partial


# -- malformed records --------------------------------------------------------------------------


def test_record_count_must_match_the_records():
    for count in (5, 3, -1):
        for codec in (codecs.NONE, codecs.GZIP):
            batch = _patch(build_batch(SAMPLE, compression=codec), 57, ">i", count)
            with pytest.raises(InvalidRecordError) as e:
                decode_records(batch)
            assert _code(e) == ErrorCode.INVALID_RECORD


def test_malformed_record_bodies_are_invalid_record():
    def with_section(section: bytes, count: int = 1) -> bytes:
        b = _recompressed(build_batch([(b"k", b"v")]), 0, section)
        return bytes(_patch(b, 57, ">i", count))

    def rec(body: bytes) -> bytes:
        return bytes([len(body) << 1]) + body  # a one-byte zigzag varint length

    good = build_batch([(b"k", b"v", [("h", b"x")])])[HEADER_SIZE:]
    assert good == rec(b"\x00\x00\x00\x02k\x02v\x02\x02h\x02x")
    assert decode_records(with_section(good))[0].headers == [("h", b"x")]
    bad_sections = [
        good[:-1],  # record runs past the batch
        bytes([good[0] + 2]) + good[1:] + b"\x00\x00",  # body longer than its fields
        b"\x00",  # empty record
        rec(b"\x00\x00\x00\x02k\x02v\x01"),  # negative header count
        rec(b"\x00\x00\x00\x02k\x02v\x06"),  # more headers than bytes
        rec(b"\x00\x00\x00\x02k\x02v\x02\x01\x00"),  # negative header key size
        rec(b"\x00\x00\x00\x02k\x02v\x02\x0ah\x00"),  # header key past the record
        rec(b"\x00\x00\x00\x0ak\x02v\x00"),  # key past the record
        rec(b"\x00" + b"\xff" * 10 + b"\x01" + bytes(6)),  # varlong too long
        rec(b"\x00\x00\xff\xff\xff\xff\x7f\x00\x00\x00"),  # varint beyond int32
        good + good,  # bytes left after the declared count
    ]
    for section in bad_sections:
        with pytest.raises(InvalidRecordError) as e:
            decode_records(with_section(section))
        assert _code(e) == ErrorCode.INVALID_RECORD, section


# -- LogAppendTime ------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [codecs.NONE, codecs.LZ4])
def test_log_append_time_rewrite_keeps_a_valid_crc(codec):
    produced = build_batch(
        SAMPLE,
        compression=codec,
        is_transactional=True,
        producer_id=3,
        producer_epoch=0,
        base_sequence=0,
    )
    stored = bytearray(b"xx" + produced)  # not at position 0, as inside a segment buffer
    set_log_append_time(stored, 2, 1_800_000_000_000)
    header = validate_batch(stored, 2)
    assert header.is_log_append_time and header.is_transactional
    assert header.compression == codec
    assert header.max_timestamp == 1_800_000_000_000
    assert header.base_timestamp == SAMPLE[0].timestamp  # first record's create time stays
    assert [r.timestamp for r in decode_records(stored, 2)] == [1_800_000_000_000] * 4
    kp = MemoryRecords(bytes(stored[2:])).next_batch()
    assert kp.validate_crc() and kp.timestamp_type == 1
    assert [r.timestamp for r in kp] == [1_800_000_000_000] * 4
    before = bytes(stored)
    set_log_append_time(stored, 2, 1_800_000_000_000)
    assert bytes(stored) == before


def test_build_with_log_append_time():
    batch = build_batch(SAMPLE, timestamp_type=1, max_timestamp=42)
    header = validate_batch(batch)
    assert header.is_log_append_time and header.max_timestamp == 42
    assert {r.timestamp for r in decode_records(batch)} == {42}


# -- garbage in ---------------------------------------------------------------------------------

_ALLOWED = (InvalidRecordError, RemoteProtocolError)


def _feed(data: bytes) -> None:
    for call in (
        lambda: list(iter_batch_headers(data, strict=True)),
        lambda: list(iter_batch_headers(data)),
        lambda: validate_batch(data),
        lambda: validate_batch(data, from_client=False),
        lambda: validate_produce_records(data),
        lambda: decode_records(data, max_decompressed_size=1 << 20),
        lambda: read_end_txn_marker(data),
    ):
        with contextlib.suppress(*_ALLOWED):
            call()


_FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_protocol_errors(data):
    _feed(data)


_SEEDS = [build_batch(SAMPLE[:2], compression=c) for c in ALL_CODECS] + [
    build_control_batch(COMMIT, 1, 0, 0, 0, 0, 0)
]


@_FUZZ
@given(
    seed=st.sampled_from(_SEEDS),
    edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), min_size=1, max_size=4),
    cut=st.integers(0, 400),
    fix_crc=st.booleans(),
)
def test_mutated_batches_decode_or_raise_protocol_errors(seed, edits, cut, fix_crc):
    data = bytearray(seed)
    for pos, byte in edits:
        data[pos % len(data)] = byte
    data = data[: max(cut, HEADER_SIZE)]
    if fix_crc and len(data) >= HEADER_SIZE:
        size = 12 + struct.unpack_from(">i", data, 8)[0]
        if HEADER_SIZE <= size <= len(data):
            rewrite_crc(data, 0, size)
    _feed(bytes(data))
