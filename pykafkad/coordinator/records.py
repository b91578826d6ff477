"""The records of __consumer_offsets, in Kafka's own schemas (group-coordinator module).

Every record is keyed; the key starts with an int16 version that says what it is:

* 0 and 1: ``OffsetCommitKey`` (group, topic, partition) -> ``OffsetCommitValue``
* 2: ``GroupMetadataKey`` (group) -> ``GroupMetadataValue`` (a classic group and its members)

Values start with their own int16 version.  A null value is a tombstone: the offset or the
group is deleted (and log compaction eventually drops the key).  As Kafka 4.1 does, offsets
are written with key version 1 and value version 4 (flexible; tagged field 0 is the topic id,
written only when known), or value version 1 when the commit carries an explicit expire
timestamp; groups with key version 2 and value version 3.  Every version (0-4) is read back,
so a topic written by Kafka replays here and one written here is readable by Kafka (checked
byte for byte against Kafka 4.1.1's own records).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wire.primitives import Reader, Writer

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 4
#: the only value version with an expire timestamp (OffsetCommit v2-v4 retention_time_ms)
OFFSET_COMMIT_VALUE_EXPIRING_VERSION = 1
GROUP_METADATA_VALUE_VERSION = 3
_FLEXIBLE = 4
#: OffsetCommitValue v4+ tagged field: the topic id
_TOPIC_ID_TAG = 0
_ZERO_UUID = bytes(16)


@dataclass(frozen=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupMetadataKey:
    group: str


@dataclass
class OffsetCommitValue:
    offset: int
    metadata: str
    commit_timestamp: int
    leader_epoch: int = -1
    expire_timestamp: int = -1
    topic_id: bytes = _ZERO_UUID


@dataclass
class MemberMetadata:
    member_id: str
    client_id: str
    client_host: str
    session_timeout: int
    rebalance_timeout: int
    subscription: bytes
    assignment: bytes
    group_instance_id: str | None = None


@dataclass
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: list[MemberMetadata] = field(default_factory=list)


class UnknownRecordKey(ValueError):
    """A key version this coordinator does not know (e.g. KIP-848 consumer group records)."""


# -- flexible/non-flexible helpers ---------------------------------------------------------------


def _str(w: Writer, v: str | None, flexible: bool) -> None:
    (w.compact_string if flexible else w.string)(v)


def _read_str(r: Reader, flexible: bool) -> str | None:
    return r.compact_nullable_string() if flexible else r.nullable_string()


def _read_bytes(r: Reader, flexible: bool) -> bytes:
    v = r.compact_nullable_bytes() if flexible else r.nullable_bytes()
    return b"" if v is None else bytes(v)


def _read_tags(r: Reader) -> dict[int, bytes]:
    tags = {}
    for _ in range(r.uvarint()):
        tag, size = r.tag_header()
        tags[tag] = r.raw(size)
    return tags


# -- keys ----------------------------------------------------------------------------------------


def encode_offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    w = Writer()
    w.int16(OFFSET_COMMIT_KEY_VERSION)
    w.string(group)
    w.string(topic)
    w.int32(partition)
    return w.getvalue()


def encode_group_metadata_key(group: str) -> bytes:
    w = Writer()
    w.int16(GROUP_METADATA_KEY_VERSION)
    w.string(group)
    return w.getvalue()


def decode_key(data: bytes) -> OffsetCommitKey | GroupMetadataKey:
    r = Reader(data)
    version = r.int16()
    if version in (0, 1):
        return OffsetCommitKey(r.string(), r.string(), r.int32())
    if version == GROUP_METADATA_KEY_VERSION:
        return GroupMetadataKey(r.string())
    raise UnknownRecordKey(f"unknown __consumer_offsets key version {version}")


# -- offset commit values ------------------------------------------------------------------------


def encode_offset_commit_value(v: OffsetCommitValue) -> bytes:
    version = (
        OFFSET_COMMIT_VALUE_EXPIRING_VERSION if v.expire_timestamp >= 0
        else OFFSET_COMMIT_VALUE_VERSION
    )
    flexible = version >= _FLEXIBLE
    w = Writer()
    w.int16(version)
    w.int64(v.offset)
    if version >= 3:
        w.int32(v.leader_epoch)
    _str(w, v.metadata, flexible)
    w.int64(v.commit_timestamp)
    if version == 1:
        w.int64(v.expire_timestamp)
    if flexible:
        w.tagged([] if v.topic_id == _ZERO_UUID else [(_TOPIC_ID_TAG, bytes(v.topic_id))])
    return w.getvalue()


def decode_offset_commit_value(data: bytes) -> OffsetCommitValue:
    r = Reader(data)
    version = r.int16()
    flexible = version >= _FLEXIBLE
    offset = r.int64()
    leader_epoch = r.int32() if version >= 3 else -1
    metadata = _read_str(r, flexible) or ""
    commit_timestamp = r.int64()
    expire_timestamp = r.int64() if version == 1 else -1
    topic_id = _ZERO_UUID
    if flexible:
        topic_id = bytes(_read_tags(r).get(_TOPIC_ID_TAG, _ZERO_UUID))
    return OffsetCommitValue(
        offset, metadata, commit_timestamp, leader_epoch, expire_timestamp, topic_id)


# -- group metadata values -----------------------------------------------------------------------


def encode_group_metadata_value(v: GroupMetadataValue) -> bytes:
    version = GROUP_METADATA_VALUE_VERSION
    w = Writer()
    w.int16(version)
    w.string(v.protocol_type)
    w.int32(v.generation)
    w.string(v.protocol)
    w.string(v.leader)
    w.int64(v.current_state_timestamp)
    w.array_length(len(v.members), False)
    for m in v.members:
        w.string(m.member_id)
        w.string(m.group_instance_id)
        w.string(m.client_id)
        w.string(m.client_host)
        w.int32(m.rebalance_timeout)
        w.int32(m.session_timeout)
        w.bytes_(m.subscription)
        w.bytes_(m.assignment)
    return w.getvalue()


def decode_group_metadata_value(data: bytes) -> GroupMetadataValue:
    r = Reader(data)
    version = r.int16()
    flexible = version >= _FLEXIBLE
    protocol_type = _read_str(r, flexible) or ""
    generation = r.int32()
    protocol = _read_str(r, flexible)
    leader = _read_str(r, flexible)
    timestamp = r.int64() if version >= 2 else -1
    members = []
    for _ in range(max(r.array_length(flexible), 0)):
        member_id = _read_str(r, flexible) or ""
        instance_id = _read_str(r, flexible) if version >= 3 else None
        client_id = _read_str(r, flexible) or ""
        client_host = _read_str(r, flexible) or ""
        rebalance_timeout = r.int32() if version >= 1 else -1
        session_timeout = r.int32()
        subscription = _read_bytes(r, flexible)
        assignment = _read_bytes(r, flexible)
        if flexible:
            _read_tags(r)
        members.append(MemberMetadata(
            member_id, client_id, client_host, session_timeout, rebalance_timeout,
            subscription, assignment, instance_id))
    if flexible:
        _read_tags(r)
    return GroupMetadataValue(protocol_type, generation, protocol, leader, timestamp, members)


# -- record pairs --------------------------------------------------------------------------------

#: one record to append: (key, value or None for a tombstone)
Record = tuple[bytes, "bytes | None"]


def offset_commit_record(group: str, topic: str, partition: int, v: OffsetCommitValue) -> Record:
    return encode_offset_commit_key(group, topic, partition), encode_offset_commit_value(v)


def offset_commit_tombstone(group: str, topic: str, partition: int) -> Record:
    return encode_offset_commit_key(group, topic, partition), None


def group_metadata_record(group: str, v: GroupMetadataValue) -> Record:
    return encode_group_metadata_key(group), encode_group_metadata_value(v)


def group_metadata_tombstone(group: str) -> Record:
    return encode_group_metadata_key(group), None
