"""Transaction markers: the control records that end a transaction in each partition.

A marker is a batch with the transactional and control bits, the producer's id and epoch, no
sequence (-1), CreateTime, and one record whose key is ``version int16 = 0, type int16`` (0 abort,
1 commit) and whose value is ``version int16 = 0, coordinator_epoch int32``. Kafka writes exactly
this (``MemoryRecords.writeEndTransactionalMarker``); librdkafka fails the parse when the key is
not 4 bytes and skips markers whose key version is not 0, so both must be exact.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from wire.records.batch import build_batch, decode_records
from wire.records.errors import invalid
from wire.records.header import BatchHeader
from wire.records.record import Record

ABORT = 0
COMMIT = 1
CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


class EndTxnMarker(NamedTuple):
    kind: int  # ABORT or COMMIT
    coordinator_epoch: int


def encode_control_key(kind: int) -> bytes:
    return _KEY.pack(CONTROL_KEY_VERSION, kind)


def decode_control_key(key: bytes | None) -> int:
    """The control type of a control record key (Kafka's ``ControlRecordType.parseTypeId``).

    Kafka reads a newer key version as version 0 and refuses only a negative one.
    """
    if key is None or len(key) < _KEY.size:
        raise invalid(f"control record key must have at least {_KEY.size} bytes")
    version, kind = _KEY.unpack_from(key)
    if version < 0:
        raise invalid(f"invalid control record key version {version}")
    return kind


def encode_end_txn_marker_value(coordinator_epoch: int) -> bytes:
    return _VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch)


def decode_end_txn_marker_value(value: bytes | None) -> int:
    """The coordinator epoch of a marker's value (Kafka's ``EndTransactionMarker``)."""
    if value is None or len(value) < _VALUE.size:
        raise invalid(f"end transaction marker value must have at least {_VALUE.size} bytes")
    version, coordinator_epoch = _VALUE.unpack_from(value)
    if version < 0:
        raise invalid(f"invalid end transaction marker version {version}")
    return coordinator_epoch


def build_control_batch(
    kind: int,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    base_offset: int,
    partition_leader_epoch: int,
    timestamp: int,
) -> bytes:
    """An end-transaction marker batch, byte for byte as Kafka's broker writes it."""
    if kind not in (ABORT, COMMIT):
        raise ValueError(f"an end transaction marker is ABORT or COMMIT, not {kind}")
    if producer_id < 0:
        raise ValueError("an end transaction marker needs a producer id")
    record = Record(
        encode_control_key(kind), encode_end_txn_marker_value(coordinator_epoch), None, timestamp
    )
    return build_batch(
        [record],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=-1,
        partition_leader_epoch=partition_leader_epoch,
        is_transactional=True,
        is_control=True,
    )


def read_end_txn_marker(batch: bytes | bytearray | memoryview, pos: int = 0) -> EndTxnMarker:
    """The marker in a control batch (INVALID_RECORD when it is not one)."""
    records = decode_records(batch, pos)
    if not BatchHeader(batch, pos).is_control:
        raise invalid("not a control batch")
    if len(records) != 1:
        raise invalid(f"a control batch holds one record, not {len(records)}")
    kind = decode_control_key(records[0].key)
    if kind not in (ABORT, COMMIT):
        raise invalid(f"control record type {kind} is not an end transaction marker")
    return EndTxnMarker(kind, decode_end_txn_marker_value(records[0].value))
