"""Kafka's framing of a metadata record value (MetadataRecordSerde / AbstractApiMessageSerde).

Every record value in ``__cluster_metadata`` and in a snapshot is: frame version (unsigned
varint, always 1), record type (the record's api key, unsigned varint), record version
(unsigned varint), then the record body at that version. Kafka refuses any other frame version
and any bytes left after the body, and so does this reader, with Kafka's messages.
"""

from __future__ import annotations

from wire.errors import RemoteProtocolError
from wire.metadata import RECORD_TYPES
from wire.primitives import Reader, Writer

FRAME_VERSION = 1
_SHORT_MAX = 0x7FFF


class MetadataParseError(ValueError):
    """A record value that is not a metadata record this version of Kafka can read."""


def encode_record(record, version: int | None = None) -> bytes:
    """The framed bytes of ``record`` at ``version`` (None: the record's highest version)."""
    cls = type(record)
    if RECORD_TYPES.get(getattr(cls, "API_KEY", -1)) is not cls:
        raise ValueError(f"{cls.__name__} is not a metadata record")
    if version is None:
        version = cls.HIGHEST_VERSION
    elif not cls.LOWEST_VERSION <= version <= cls.HIGHEST_VERSION:
        raise ValueError(f"Can't write version {version} of {cls.__name__}")
    w = Writer()
    w.uvarint(FRAME_VERSION)
    w.uvarint(cls.API_KEY)
    w.uvarint(version)
    record.write(w, version)
    return w.getvalue()


def _unsigned_short(r: Reader, entity: str) -> int:
    try:
        value = r.uvarint()
    except Exception as e:  # truncated or over-long varint
        raise MetadataParseError(f"Error while reading {entity}") from e
    if value > _SHORT_MAX:
        raise MetadataParseError(f"Value for {entity} was too large.")
    return value


def decode_record(value: bytes | bytearray | memoryview) -> tuple[object, int]:
    """``(record, version)`` from a framed record value; MetadataParseError when it is not one."""
    if value is None:
        raise MetadataParseError("Metadata record value is null")
    r = Reader(value)
    frame_version = _unsigned_short(r, "frame version")
    if frame_version == 0:
        raise MetadataParseError(
            "Could not deserialize metadata record with frame version 0. Note that upgrades "
            "from the preview release of KRaft in 2.8 to newer versions are not supported.")
    if frame_version != FRAME_VERSION:
        raise MetadataParseError(
            f"Could not deserialize metadata record due to unknown frame version "
            f"{frame_version}(only frame version {FRAME_VERSION} is supported)")
    api_key = _unsigned_short(r, "type")
    version = _unsigned_short(r, "version")
    cls = RECORD_TYPES.get(api_key)
    if cls is None:
        raise MetadataParseError(f"Unknown metadata id {api_key}")
    if not cls.LOWEST_VERSION <= version <= cls.HIGHEST_VERSION:
        raise MetadataParseError(
            f"Failed to deserialize record with type {api_key}: "
            f"Can't read version {version} of {cls.__name__}")
    try:
        record = cls.read(r, version)
    except (RemoteProtocolError, ValueError, IndexError, UnicodeDecodeError) as e:
        raise MetadataParseError(f"Failed to deserialize record with type {api_key}: {e}") from e
    if r.remaining:
        raise MetadataParseError(f"Found {r.remaining} byte(s) of garbage after {api_key}")
    return record, version
