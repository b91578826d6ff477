"""A consumer group's records in __consumer_offsets, in Kafka 4.4's schemas.

A key starts with its int16 record type (Kafka's CoordinatorRecordType), a value with its
int16 version (0, flexible).  Types: 3 ConsumerGroupMetadata (group epoch), 4
ConsumerGroupPartitionMetadata (read and ignored: Kafka 4.4 no longer writes it),
5 ConsumerGroupMemberMetadata (subscription), 6 ConsumerGroupTargetAssignmentMetadata,
7 ConsumerGroupTargetAssignmentMember, 8 ConsumerGroupCurrentMemberAssignment.  A null value
is a tombstone.  A member's classic metadata (online migration; a null for consumer-protocol
members) is the member record's tagged field 0, written as Kafka 4.4 writes it; the other optional tagged fields (metadata hash, assignment
timestamp) are not written and are skipped when read.
"""

from __future__ import annotations

from pykafkad.coordinator.consumer_group.group import (
    STABLE,
    UNRELEASED_PARTITIONS,
    UNREVOKED_PARTITIONS,
    ClassicMemberMetadata,
    ConsumerGroupMember,
    Partitions,
)
from wire.primitives import Reader, Writer

GROUP_METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_ASSIGNMENT_METADATA = 6
TARGET_ASSIGNMENT_MEMBER = 7
CURRENT_MEMBER_ASSIGNMENT = 8
TYPES = frozenset(range(GROUP_METADATA, CURRENT_MEMBER_ASSIGNMENT + 1))
#: Kafka's MemberState bytes
STATE_BYTES = {STABLE: 0, UNREVOKED_PARTITIONS: 1, UNRELEASED_PARTITIONS: 2}
STATES = {v: k for k, v in STATE_BYTES.items()}


def record_type(key: bytes) -> int:
    return int.from_bytes(key[:2], "big", signed=True) if len(key) >= 2 else -1


def key(kind: int, group_id: str, member_id: str | None = None) -> bytes:
    w = Writer()
    w.int16(kind)
    w.string(group_id)
    if member_id is not None:
        w.string(member_id)
    return w.getvalue()


def decode_key(data: bytes) -> tuple[int, str, str | None]:
    r = Reader(data)
    kind = r.int16()
    group_id = r.string()
    member_id = r.string() if kind in (MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER,
                                        CURRENT_MEMBER_ASSIGNMENT) else None
    return kind, group_id, member_id


def _value() -> Writer:
    w = Writer()
    w.int16(0)
    return w


def _end(w: Writer) -> bytes:
    w.uvarint(0)  # no tagged fields
    return w.getvalue()


def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        _, size = r.tag_header()
        r.raw(size)


def _write_partitions(w: Writer, parts: Partitions) -> None:
    items = sorted((t, ps) for t, ps in parts.items() if ps)
    w.array_length(len(items), True)
    for topic_id, ps in items:
        w.uuid(topic_id)
        w.array_length(len(ps), True)
        for p in sorted(ps):
            w.int32(p)
        w.uvarint(0)


def _read_partitions(r: Reader) -> Partitions:
    out: Partitions = {}
    for _ in range(max(r.array_length(True), 0)):
        topic_id = r.uuid()
        out[topic_id] = {r.int32() for _ in range(max(r.array_length(True), 0))}
        _skip_tags(r)
    return out


def epoch_value(epoch: int) -> bytes:
    w = _value()
    w.int32(epoch)
    return _end(w)


def read_epoch(data: bytes) -> int:
    r = Reader(data)
    r.int16()
    return r.int32()


def member_value(m: ConsumerGroupMember) -> bytes:
    w = _value()
    w.compact_string(m.instance_id)
    w.compact_string(m.rack_id)
    w.compact_string(m.client_id)
    w.compact_string(m.client_host)
    w.array_length(len(m.subscribed_topic_names), True)
    for name in m.subscribed_topic_names:
        w.compact_string(name)
    w.compact_string(m.subscribed_topic_regex or "")  # Kafka writes "" for none
    w.int32(m.rebalance_timeout_ms)
    w.compact_string(m.server_assignor)
    # tagged field 0, ClassicMemberMetadata, a nullable struct: Kafka 4.4 writes it for every
    # member, a presence byte (0: null) then the struct
    tag = Writer()
    if m.classic is None:
        tag.int8(0)
    else:
        tag.int8(1)
        tag.int32(m.classic.session_timeout_ms)
        tag.array_length(len(m.classic.protocols), True)
        for name, metadata in m.classic.protocols:
            tag.compact_string(name)
            tag.compact_bytes(metadata)
            tag.uvarint(0)
        tag.uvarint(0)
    body = tag.getvalue()
    w.uvarint(1)
    w.uvarint(0)
    w.uvarint(len(body))
    w.raw(body)
    return w.getvalue()


def read_member(m: ConsumerGroupMember, data: bytes) -> None:
    r = Reader(data)
    r.int16()
    m.instance_id = r.compact_nullable_string()
    m.rack_id = r.compact_nullable_string()
    m.client_id = r.compact_nullable_string() or ""
    m.client_host = r.compact_nullable_string() or ""
    m.subscribed_topic_names = [r.compact_nullable_string() or ""
                                for _ in range(max(r.array_length(True), 0))]
    m.subscribed_topic_regex = r.compact_nullable_string() or None
    m.rebalance_timeout_ms = r.int32()
    m.server_assignor = r.compact_nullable_string()
    m.classic = None
    for _ in range(r.uvarint()):
        tag, size = r.tag_header()
        body = r.raw(size)
        if tag == 0:
            m.classic = _read_classic(Reader(body))


def _read_classic(r: Reader) -> ClassicMemberMetadata | None:
    if r.int8() <= 0:
        return None
    session_timeout_ms = r.int32()
    protocols = []
    for _ in range(max(r.array_length(True), 0)):
        name = r.compact_string()
        metadata = bytes(r.compact_bytes())
        _skip_tags(r)
        protocols.append((name, metadata))
    return ClassicMemberMetadata(session_timeout_ms, protocols)


def target_member_value(parts: Partitions) -> bytes:
    w = _value()
    _write_partitions(w, parts)
    return _end(w)


def read_target_member(data: bytes) -> Partitions:
    r = Reader(data)
    r.int16()
    return _read_partitions(r)


def current_assignment_value(m: ConsumerGroupMember) -> bytes:
    w = _value()
    w.int32(m.member_epoch)
    w.int32(m.previous_member_epoch)
    w.int8(STATE_BYTES[m.state])
    _write_partitions(w, m.assigned)
    _write_partitions(w, m.pending_revocation)
    return _end(w)


def read_current_assignment(m: ConsumerGroupMember, data: bytes) -> None:
    r = Reader(data)
    r.int16()
    m.member_epoch = r.int32()
    m.previous_member_epoch = r.int32()
    m.state = STATES.get(r.int8(), STABLE)
    m.assigned = _read_partitions(r)
    m.pending_revocation = _read_partitions(r)
