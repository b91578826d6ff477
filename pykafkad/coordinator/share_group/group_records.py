"""Share-group records in __consumer_offsets, in Kafka 4.4's layout (group-coordinator record
types 10-15: ShareGroupMemberMetadata, ShareGroupMetadata, ShareGroupTargetAssignmentMetadata,
ShareGroupTargetAssignmentMember, ShareGroupCurrentMemberAssignment,
ShareGroupStatePartitionMetadata).  A key is the int16 record type then non-flexible strings;
a value is the int16 version 0 then a flexible struct.  Hand-written next to its schema, as
small as the state it carries."""

from __future__ import annotations

from wire.primitives import Reader, Writer

MEMBER_METADATA, GROUP_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_MEMBER, \
    STATE_PARTITIONS = 10, 11, 12, 13, 14, 15
RECORD_TYPES = frozenset(range(10, 16))
_GROUP_KEYS = (GROUP_METADATA, TARGET_METADATA, STATE_PARTITIONS)

Record = tuple[bytes, bytes | None]


def key(record_type: int, group_id: str, member_id: str | None = None) -> bytes:
    w = Writer()
    w.int16(record_type)
    w.string(group_id)
    if record_type not in _GROUP_KEYS:
        w.string(member_id or "")
    return w.getvalue()


def decode_key(data: bytes) -> tuple[int, str, str | None]:
    r = Reader(data)
    record_type = r.int16()
    group_id = r.string()
    member_id = None if record_type in _GROUP_KEYS else r.string()
    return record_type, group_id, member_id


def _value() -> Writer:
    w = Writer()
    w.int16(0)
    return w


def _partitions(w: Writer, assignment: dict[bytes, list[int]]) -> None:
    w.uvarint(len(assignment) + 1)
    for tid, parts in assignment.items():
        w.uuid(tid)
        w.uvarint(len(parts) + 1)
        for p in parts:
            w.int32(p)
        w.uvarint(0)


def member_metadata(rack_id: str | None, client_id: str, client_host: str,
                    topics: list[str]) -> bytes:
    w = _value()
    w.compact_string(rack_id)
    w.compact_string(client_id)
    w.compact_string(client_host)
    w.uvarint(len(topics) + 1)
    for t in topics:
        w.compact_string(t)
    w.uvarint(0)
    return w.getvalue()


def group_metadata(epoch: int, metadata_hash: int = 0) -> bytes:
    w = _value()
    w.int32(epoch)
    w.int64(metadata_hash)
    w.uvarint(0)
    return w.getvalue()


def target_metadata(assignment_epoch: int, timestamp: int | None) -> bytes:
    """``timestamp`` None: no AssignmentTimestamp (Kafka writes none for an empty group)."""
    w = _value()
    w.int32(assignment_epoch)
    if timestamp is None:
        w.uvarint(0)
        return w.getvalue()
    w.uvarint(1)  # tagged AssignmentTimestamp (tag 0)
    w.uvarint(0)
    w.uvarint(8)
    w.int64(timestamp)
    return w.getvalue()


def target_member(assignment: dict[bytes, list[int]]) -> bytes:
    w = _value()
    _partitions(w, assignment)
    w.uvarint(0)
    return w.getvalue()


def current_member(epoch: int, previous_epoch: int, assignment: dict[bytes, list[int]]) -> bytes:
    w = _value()
    w.int32(epoch)
    w.int32(previous_epoch)
    w.int8(0)  # MemberState.STABLE
    _partitions(w, assignment)
    w.uvarint(0)
    return w.getvalue()


#: topic id -> (topic name, partitions): the share-state partitions of one kind
StateTopics = dict[bytes, tuple[str, set[int]]]


def state_partitions(initializing: StateTopics, initialized: StateTopics,
                     deleting: dict[bytes, str]) -> bytes:
    """ShareGroupStatePartitionMetadata: the partitions whose share state is being
    initialized, is initialized, and the topics whose state is being deleted."""
    w = _value()
    for topics in (initializing, initialized):
        w.uvarint(len(topics) + 1)
        for tid in sorted(topics):
            name, parts = topics[tid]
            w.uuid(tid)
            w.compact_string(name)
            w.uvarint(len(parts) + 1)
            for p in sorted(parts):
                w.int32(p)
            w.uvarint(0)
    w.uvarint(len(deleting) + 1)
    for tid in sorted(deleting):
        w.uuid(tid)
        w.compact_string(deleting[tid])
        w.uvarint(0)
    w.uvarint(0)
    return w.getvalue()


def decode_state_partitions(value: bytes) -> tuple[StateTopics, StateTopics, dict[bytes, str]]:
    r = Reader(value)
    r.int16()
    out: list[StateTopics] = []
    for _ in range(2):
        topics: StateTopics = {}
        for _ in range(r.uvarint() - 1):
            tid, name = r.uuid(), r.compact_string()
            topics[tid] = (name, {r.int32() for _ in range(r.uvarint() - 1)})
            _skip_tags(r)
        out.append(topics)
    deleting = {}
    for _ in range(r.uvarint() - 1):
        tid = r.uuid()
        deleting[tid] = r.compact_string()
        _skip_tags(r)
    return out[0], out[1], deleting


def decode_group_metadata(value: bytes) -> tuple[int, int]:
    """(group epoch, metadata hash) of ShareGroupMetadata."""
    r = Reader(value)
    r.int16()
    return r.int32(), r.int64()


def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        r.uvarint()
        r._need(r.uvarint())


def decode_group_epoch(value: bytes) -> int:
    r = Reader(value)
    r.int16()
    return r.int32()


def decode_member_metadata(value: bytes) -> tuple[str | None, str, str, list[str]]:
    r = Reader(value)
    r.int16()
    rack = r.compact_nullable_string()
    client_id, host = r.compact_string(), r.compact_string()
    topics = [r.compact_string() for _ in range(r.uvarint() - 1)]
    return rack, client_id, host, topics


def decode_target_member(value: bytes) -> dict[bytes, list[int]]:
    r = Reader(value)
    r.int16()
    return _read_partitions(r)


def decode_current_member(value: bytes) -> tuple[int, dict[bytes, list[int]]]:
    r = Reader(value)
    r.int16()
    epoch = r.int32()
    r.int32()
    r.int8()
    return epoch, _read_partitions(r)


def _read_partitions(r: Reader) -> dict[bytes, list[int]]:
    out = {}
    for _ in range(r.uvarint() - 1):
        tid = r.uuid()
        out[tid] = [r.int32() for _ in range(r.uvarint() - 1)]
        _skip_tags(r)
    return out
