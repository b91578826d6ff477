"""The share coordinator's records in __share_group_state, in Kafka 4.4's layout
(share-coordinator ShareSnapshotKey/Value = record type 0, ShareUpdateKey/Value = 1): a key is
the int16 record type then (group id, topic id, partition); a value is the int16 version 0
then a flexible struct.  Small enough to keep as a hand-written codec next to its schema."""

from __future__ import annotations

from dataclasses import dataclass, field

from wire.primitives import Reader, Writer

SNAPSHOT, UPDATE = 0, 1
#: tag of DeliveryCompleteCount (KIP-1226), a tagged field of both values
_DELIVERY_COMPLETE_TAG = 0


@dataclass(frozen=True)
class ShareStateKey:
    record_type: int
    group_id: str
    topic_id: bytes
    partition: int


@dataclass
class ShareStateValue:
    """ShareSnapshotValue (``state_epoch``, timestamps) or ShareUpdateValue."""

    snapshot_epoch: int
    leader_epoch: int
    start_offset: int
    state_batches: list[tuple[int, int, int, int]] = field(default_factory=list)
    state_epoch: int = 0
    create_timestamp: int = -1
    write_timestamp: int = -1
    delivery_complete_count: int = -1


def encode_key(key: ShareStateKey) -> bytes:
    w = Writer()
    w.int16(key.record_type)
    w.string(key.group_id)
    w.uuid(key.topic_id)
    w.int32(key.partition)
    return w.getvalue()


def decode_key(data: bytes) -> ShareStateKey:
    r = Reader(data)
    record_type = r.int16()
    if record_type not in (SNAPSHOT, UPDATE):
        raise ValueError(f"unknown __share_group_state record type {record_type}")
    return ShareStateKey(record_type, r.string(), r.uuid(), r.int32())


def encode_value(record_type: int, v: ShareStateValue) -> bytes:
    w = Writer()
    w.int16(0)
    w.int32(v.snapshot_epoch)
    if record_type == SNAPSHOT:
        w.int32(v.state_epoch)
    w.int32(v.leader_epoch)
    w.int64(v.start_offset)
    if record_type == SNAPSHOT:
        w.int64(v.create_timestamp)
        w.int64(v.write_timestamp)
    w.uvarint(len(v.state_batches) + 1)
    for first, last, state, count in v.state_batches:
        w.int64(first)
        w.int64(last)
        w.int8(state)
        w.int16(count)
        w.uvarint(0)
    if v.delivery_complete_count != -1:
        w.uvarint(1)
        w.uvarint(_DELIVERY_COMPLETE_TAG)
        w.uvarint(4)
        w.int32(v.delivery_complete_count)
    else:
        w.uvarint(0)
    return w.getvalue()


def decode_value(record_type: int, data: bytes) -> ShareStateValue:
    r = Reader(data)
    version = r.int16()
    if version != 0:
        raise ValueError(f"unknown __share_group_state value version {version}")
    v = ShareStateValue(snapshot_epoch=r.int32(), leader_epoch=0, start_offset=0)
    if record_type == SNAPSHOT:
        v.state_epoch = r.int32()
    v.leader_epoch = r.int32()
    v.start_offset = r.int64()
    if record_type == SNAPSHOT:
        v.create_timestamp = r.int64()
        v.write_timestamp = r.int64()
    for _ in range(r.uvarint() - 1):
        first, last, state, count = r.int64(), r.int64(), r.int8(), r.int16()
        _skip_tags(r)
        v.state_batches.append((first, last, state, count))
    for _ in range(r.uvarint()):
        tag, size = r.uvarint(), r.uvarint()
        if tag == _DELIVERY_COMPLETE_TAG and size == 4:
            v.delivery_complete_count = r.int32()
        else:
            r._need(size)
    return v


def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        r.uvarint()
        r._need(r.uvarint())
