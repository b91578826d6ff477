"""Kafka's metadata record framing: every record type at every version round trips, and what
is not a metadata record is refused with Kafka's messages."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykafkad.metadata.serde import MetadataParseError, decode_record, encode_record
from tests.wire.test_generated import struct_strategy
from wire.metadata import RECORD_TYPES
from wire.metadata.feature_level_record import FeatureLevelRecord
from wire.metadata.topic_record import TopicRecord

CASES = [(cls, v) for cls in RECORD_TYPES.values()
         for v in range(cls.LOWEST_VERSION, cls.HIGHEST_VERSION + 1)]


@pytest.mark.parametrize("cls,version", CASES, ids=[f"{c.__name__}-v{v}" for c, v in CASES])
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_record_round_trips(cls, version, data) -> None:
    record = data.draw(struct_strategy(cls, version))
    value = encode_record(record, version)
    decoded, decoded_version = decode_record(value)
    assert (decoded, decoded_version) == (record, version)
    assert encode_record(decoded, version) == value


def test_framing_is_kafkas() -> None:
    # frame version 1, type 12, version 0, then the body: as in a snapshot Kafka 4.4 wrote
    value = encode_record(FeatureLevelRecord("metadata.version", 33))
    assert value == bytes.fromhex("010c00") + b"\x11metadata.version" + bytes.fromhex("002100")


def test_default_version_is_the_highest() -> None:
    record, version = decode_record(encode_record(TopicRecord("t", bytes(range(16)))))
    assert version == TopicRecord.HIGHEST_VERSION


@pytest.mark.parametrize("value,message", [
    (bytes([0, 2, 0]), "Could not deserialize metadata record with frame version 0. Note that "
                       "upgrades from the preview release of KRaft in 2.8 to newer versions are "
                       "not supported."),
    (bytes([2, 2, 0]), "Could not deserialize metadata record due to unknown frame version "
                       "2(only frame version 1 is supported)"),
    (bytes([1, 99, 0]), "Unknown metadata id 99"),
    (bytes([1, 2, 7]), "Failed to deserialize record with type 2: Can't read version 7 of "
                       "TopicRecord"),
    (bytes([1, 0x80, 0x80, 0x04]), "Value for type was too large."),
    (bytes([1]), "Error while reading type"),
    (bytes([1, 2, 0, 2]), "Failed to deserialize record with type 2"),
])
def test_bad_values_are_refused_with_kafkas_message(value: bytes, message: str) -> None:
    with pytest.raises(MetadataParseError) as e:
        decode_record(value)
    assert str(e.value).startswith(message)


def test_trailing_bytes_are_garbage() -> None:
    with pytest.raises(MetadataParseError, match=r"^Found 2 byte\(s\) of garbage after 2$"):
        decode_record(encode_record(TopicRecord("t", bytes(16))) + b"xx")


def test_encode_refuses_a_version_the_record_does_not_have() -> None:
    with pytest.raises(ValueError, match="Can't write version 5 of TopicRecord"):
        encode_record(TopicRecord("t", bytes(16)), 5)


@settings(max_examples=300, deadline=None)
@given(blob=st.binary(max_size=40))
def test_any_bytes_decode_or_raise_metadata_parse_error(blob: bytes) -> None:
    try:
        decode_record(blob)
    except MetadataParseError:
        pass
