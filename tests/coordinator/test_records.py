"""__consumer_offsets records in Kafka's schemas, and the group -> partition mapping."""

from __future__ import annotations

import pytest

from pykafkad.coordinator.partitioning import java_string_hash, kafka_abs, partition_for
from pykafkad.coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    UnknownRecordKey,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    encode_group_metadata_key,
    encode_group_metadata_value,
    encode_offset_commit_key,
    encode_offset_commit_value,
)
from wire.primitives import Writer

#: OffsetCommitValue records written by Apache Kafka 4.1.1 (offset 7 with librdkafka's
#: NUL-terminated metadata "meta-7", and offset 3 without metadata), captured from its log
KAFKA_OFFSET_VALUES = {
    "00040000000000000007ffffffff086d6574612d3700000001a20151720300":
        OffsetCommitValue(7, "meta-7\x00", 1795318444547),
    "00040000000000000003ffffffff01000001a20151726b00":
        OffsetCommitValue(3, "", 1795318444651),
}


@pytest.mark.parametrize(("s", "expected"), [
    ("", 0),
    ("hello", 99162322),
    ("polygenelubricants", -(1 << 31)),
    ("\u00e9t\u00e9", 233 * 31 * 31 + 116 * 31 + 233),
    ("\U0001F600", 0xD83D * 31 + 0xDE00),  # UTF-16 surrogate pair, as Java sees it
])
def test_java_string_hash(s, expected):
    assert java_string_hash(s) == expected


def test_partition_for_is_kafkas():
    assert kafka_abs(-(1 << 31)) == 0
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50
    # as Apache Kafka 4.1.1 placed these groups on a 5-partition __consumer_offsets
    assert partition_for("ref-group", 5) == 3
    assert partition_for("simple", 5) == 1
    assert java_string_hash("my-group") == -1906497762  # negative: Utils.abs first
    assert partition_for("my-group", 50) == 1906497762 % 50


def test_offset_commit_records_match_kafka_bytes():
    for hex_value, value in KAFKA_OFFSET_VALUES.items():
        raw = bytes.fromhex(hex_value)
        assert decode_offset_commit_value(raw) == value
        assert encode_offset_commit_value(value) == raw
    key = encode_offset_commit_key("ref-group", "t", 0)
    assert key[:2] == b"\x00\x01" and decode_key(key) == OffsetCommitKey("ref-group", "t", 0)


def test_offset_commit_value_versions():
    v = OffsetCommitValue(42, "m", 1000, leader_epoch=3)
    assert decode_offset_commit_value(encode_offset_commit_value(v)) == v
    expiring = OffsetCommitValue(42, "m", 1000, expire_timestamp=5000)
    raw = encode_offset_commit_value(expiring)
    assert raw[:2] == b"\x00\x01"
    assert decode_offset_commit_value(raw) == expiring
    with_topic_id = OffsetCommitValue(1, "", 2, topic_id=bytes(range(16)))
    assert decode_offset_commit_value(encode_offset_commit_value(with_topic_id)) == with_topic_id
    # version 0: no leader epoch, no expiry
    w = Writer()
    w.int16(0)
    w.int64(9)
    w.string("old")
    w.int64(77)
    assert decode_offset_commit_value(w.getvalue()) == OffsetCommitValue(9, "old", 77)


def test_group_metadata_round_trip_and_old_versions():
    v = GroupMetadataValue("consumer", 4, "range", "m-1", 123, [
        MemberMetadata("m-1", "c", "/127.0.0.1", 10_000, 30_000, b"sub", b"asg", "i-1"),
        MemberMetadata("m-2", "c", "/127.0.0.1", 10_000, 30_000, b"sub2", b"", None),
    ])
    raw = encode_group_metadata_value(v)
    assert raw[:2] == b"\x00\x03"
    assert decode_group_metadata_value(raw) == v
    empty = GroupMetadataValue("", 0, None, None, 99, [])
    assert decode_group_metadata_value(encode_group_metadata_value(empty)) == empty
    assert decode_key(encode_group_metadata_key("g")) == GroupMetadataKey("g")
    # version 0: no rebalance timeout, no timestamp, no instance id
    w = Writer()
    w.int16(0)
    w.string("consumer")
    w.int32(2)
    w.string("range")
    w.string("m")
    w.int32(1)
    for s in ("m", "c", "/h"):
        w.string(s)
    w.int32(5000)
    w.bytes_(b"s")
    w.bytes_(b"a")
    old = decode_group_metadata_value(w.getvalue())
    assert old.current_state_timestamp == -1
    assert old.members == [MemberMetadata("m", "c", "/h", 5000, -1, b"s", b"a", None)]


def test_flexible_group_metadata_value_is_read():
    w = Writer()
    w.int16(4)
    w.compact_string("consumer")
    w.int32(1)
    w.compact_string("range")
    w.compact_string("m")
    w.int64(5)
    w.array_length(1, True)
    for s in ("m", None, "c", "/h"):
        w.compact_string(s)
    w.int32(1)
    w.int32(2)
    w.compact_bytes(b"s")
    w.compact_bytes(b"a")
    w.tagged([(7, b"xx")])
    w.tagged([])
    v = decode_group_metadata_value(w.getvalue())
    assert v.members == [MemberMetadata("m", "c", "/h", 2, 1, b"s", b"a", None)]


def test_unknown_key_versions_are_reported():
    w = Writer()
    w.int16(3)  # a KIP-848 consumer group record
    with pytest.raises(UnknownRecordKey):
        decode_key(w.getvalue())
