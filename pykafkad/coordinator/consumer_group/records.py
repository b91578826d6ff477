"""A consumer group's records in __consumer_offsets, in Kafka 4.4's schemas.

A key starts with its int16 record type (Kafka's CoordinatorRecordType), a value with its
int16 version (0, flexible).  Types: 3 ConsumerGroupMetadata (group epoch), 4
ConsumerGroupPartitionMetadata (read and ignored: Kafka 4.4 no longer writes it),
5 ConsumerGroupMemberMetadata (subscription), 6 ConsumerGroupTargetAssignmentMetadata,
7 ConsumerGroupTargetAssignmentMember, 8 ConsumerGroupCurrentMemberAssignment, 16 ConsumerGroupRegularExpression (what a
subscribed regex matched; its key names the regex where the others name a member).  A null
value
is a tombstone.  Kafka 4.4's tagged fields are written as it writes them: the member
record's classic metadata (tag 0, online migration; a null for consumer-protocol members), the
group record's metadata hash (tag 0, KIP-1101), the target assignment's timestamp (tag 0,
KIP-1263; both left out when 0) and each assigned topic's partition assignment epochs in the
current assignment (tag 0 of TopicPartitions, KIP-1251).  Unknown tags are skipped when read.
"""

from __future__ import annotations

from pykafkad.coordinator.consumer_group.group import (
    STABLE,
    UNRELEASED_PARTITIONS,
    UNREVOKED_PARTITIONS,
    AssignmentEpochs,
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
REGULAR_EXPRESSION = 16
TYPES = frozenset([*range(GROUP_METADATA, CURRENT_MEMBER_ASSIGNMENT + 1), REGULAR_EXPRESSION])
#: the types whose key names a member (or, for 16, a regex) after the group
_SECOND_KEY_FIELD = (MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT,
                     REGULAR_EXPRESSION)
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
    member_id = r.string() if kind in _SECOND_KEY_FIELD else None
    return kind, group_id, member_id


def _value() -> Writer:
    w = Writer()
    w.int16(0)
    return w


def _end(w: Writer) -> bytes:
    w.uvarint(0)  # no tagged fields
    return w.getvalue()


def _end_with_int64_tag(w: Writer, value: int) -> bytes:
    """Ends a value whose only tagged field is an int64 at tag 0, left out at its default 0."""
    if value == 0:
        return _end(w)
    w.uvarint(1)
    w.uvarint(0)
    w.uvarint(8)
    w.int64(value)
    return w.getvalue()


def _int64_tag(r: Reader) -> int:
    out = 0
    for _ in range(r.uvarint()):
        tag, size = r.tag_header()
        body = r.raw(size)
        if tag == 0 and size == 8:
            out = int.from_bytes(body, "big", signed=True)
    return out


def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        _, size = r.tag_header()
        r.raw(size)


def _java_uuid_bucket(topic_id: bytes, table: int) -> int:
    """The bucket of a java.util.HashMap of ``table`` buckets holding Kafka's Uuid."""
    h = int.from_bytes(topic_id[:8], "big") ^ int.from_bytes(topic_id[8:], "big")
    x = ((h >> 32) ^ h) & 0xFFFFFFFF
    return (x ^ (x >> 16)) & (table - 1)


def _java_map_table(n: int, initial: int) -> int:
    """The buckets of a java.util.HashMap that started with ``initial`` and holds ``n``."""
    table = initial
    while n > table * 3 // 4:
        table *= 2
    return table


def _in_java_map_order(parts: Partitions, initial: int) -> list[tuple[bytes, set[int]]]:
    """The topics as Kafka iterates its Map<Uuid, Set<Integer>> when it writes them: by hash
    bucket (the id's order where two share one)."""
    items = [(t, ps) for t, ps in parts.items() if ps]
    table = _java_map_table(len(items), initial)
    return sorted(items, key=lambda item: (_java_uuid_bucket(item[0], table), item[0]))


#: the assignors' maps are sized for their topics; the reconciled assignment's start at 16
TARGET_MAP = 2
CURRENT_MAP = 16


def _write_partitions(w: Writer, parts: Partitions,
                      epochs: AssignmentEpochs | None = None,
                      initial_table: int = CURRENT_MAP) -> None:
    """Kafka's TopicPartitions list, in the order Kafka's map gives; with ``epochs``, each
    topic carries its partitions' assignment epochs (tag 0, aligned with the partitions)
    as Kafka 4.4 writes them."""
    items = _in_java_map_order(parts, initial_table)
    w.array_length(len(items), True)
    for topic_id, ps in items:
        w.uuid(topic_id)
        ordered = sorted(ps)
        w.array_length(len(ordered), True)
        for p in ordered:
            w.int32(p)
        if epochs is None:
            w.uvarint(0)
            continue
        known = epochs.get(topic_id, {})
        tag = Writer()
        tag.array_length(len(ordered), True)
        for p in ordered:
            tag.int32(known.get(p, 0))
        body = tag.getvalue()
        w.uvarint(1)
        w.uvarint(0)
        w.uvarint(len(body))
        w.raw(body)


def _read_partitions(r: Reader, epochs: AssignmentEpochs | None = None) -> Partitions:
    out: Partitions = {}
    for _ in range(max(r.array_length(True), 0)):
        topic_id = r.uuid()
        ordered = [r.int32() for _ in range(max(r.array_length(True), 0))]
        out[topic_id] = set(ordered)
        for _ in range(r.uvarint()):
            tag, size = r.tag_header()
            body = Reader(r.raw(size))
            if tag == 0 and epochs is not None:
                n = body.array_length(True)
                if n == len(ordered):  # Kafka ignores epochs not aligned with the partitions
                    epochs[topic_id] = {p: body.int32() for p in ordered}
    return out


def epoch_value(epoch: int) -> bytes:
    w = _value()
    w.int32(epoch)
    return _end(w)


def read_epoch(data: bytes) -> int:
    r = Reader(data)
    r.int16()
    return r.int32()


def group_metadata_value(epoch: int, metadata_hash: int) -> bytes:
    """ConsumerGroupMetadataValue: the group epoch and the subscribed topics' hash."""
    w = _value()
    w.int32(epoch)
    return _end_with_int64_tag(w, metadata_hash)


def read_group_metadata(data: bytes) -> tuple[int, int]:
    """(epoch, metadata hash) of a ConsumerGroupMetadataValue."""
    r = Reader(data)
    r.int16()
    epoch = r.int32()
    return epoch, _int64_tag(r)


def target_metadata_value(epoch: int, timestamp_ms: int) -> bytes:
    """ConsumerGroupTargetAssignmentMetadataValue: the assignment epoch and when the
    assignment was computed (wall clock ms)."""
    w = _value()
    w.int32(epoch)
    return _end_with_int64_tag(w, timestamp_ms)


def read_target_metadata(data: bytes) -> tuple[int, int]:
    """(assignment epoch, assignment timestamp) of a target assignment metadata value."""
    return read_group_metadata(data)


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
    _write_partitions(w, parts, initial_table=TARGET_MAP)
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
    _write_partitions(w, m.assigned, m.assignment_epochs)
    _write_partitions(w, m.pending_revocation, m.assignment_epochs)
    return _end(w)


def read_current_assignment(m: ConsumerGroupMember, data: bytes) -> None:
    r = Reader(data)
    r.int16()
    m.member_epoch = r.int32()
    m.previous_member_epoch = r.int32()
    m.state = STATES.get(r.int8(), STABLE)
    epochs: AssignmentEpochs = {}
    m.assigned = _read_partitions(r, epochs)
    pending_epochs: AssignmentEpochs = {}
    m.pending_revocation = _read_partitions(r, pending_epochs)
    # Kafka's assignmentFromTopicPartitions: without epochs, the member's (0 when negative)
    fallback = max(m.member_epoch, 0)
    m.assignment_epochs = {}
    for parts, known in ((m.assigned, epochs), (m.pending_revocation, pending_epochs)):
        for t, ps in parts.items():
            got = known.get(t) or {p: fallback for p in ps}
            m.assignment_epochs.setdefault(t, {}).update(got)


def regex_value(topics: set[str], version: int, timestamp_ms: int) -> bytes:
    """ConsumerGroupRegularExpressionValue: the topics a regex matched, the metadata version
    it was resolved at and when.  Kafka writes its topics in a Java set's order; sorted here
    (the readers, both brokers', treat them as a set)."""
    w = _value()
    w.array_length(len(topics), True)
    for name in sorted(topics):
        w.compact_string(name)
    w.int64(version)
    w.int64(timestamp_ms)
    return _end(w)


def read_regex(data: bytes) -> tuple[set[str], int, int]:
    r = Reader(data)
    r.int16()
    topics = {r.compact_string() for _ in range(max(r.array_length(True), 0))}
    return topics, r.int64(), r.int64()
