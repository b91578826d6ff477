"""The records of ``__transaction_state``: Kafka's TransactionLogKey and TransactionLogValue.

Key (version 0): ``version int16 = 0 | transactional_id string``.
Value version 0 (written, as Kafka does without transaction.version 2)::

    version int16 | producer_id int64 | producer_epoch int16 | transaction_timeout_ms int32
    | status int8 | partitions nullable array<topic string, partition_ids array<int32>>
    | last_update_timestamp_ms int64 | start_timestamp_ms int64

Version 1 (flexible: compact strings and arrays, tagged previous/next producer id and client
transaction version) is read as well. A null value is a tombstone: the id expired.
The partition of a transactional id is ``abs(javaHash(id)) % transaction.state.log.num.partitions``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum

from wire.primitives import Reader

TRANSACTION_STATE_TOPIC = "__transaction_state"
KEY_VERSION = 0
VALUE_VERSION = 0

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
#: Kafka's TransactionMetadata: an epoch this high is exhausted and a new producer id is issued
MAX_EPOCH = 0x7FFF


class TxnState(IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        return _NAMES[self]

    @classmethod
    def from_name(cls, name: str) -> TxnState | None:
        return _BY_NAME.get(name)


_NAMES = {
    TxnState.EMPTY: "Empty",
    TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead",
    TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {v: k for k, v in _NAMES.items()}


@dataclass
class TransactionMetadata:
    """Kafka's TransactionMetadata for one transactional id (what the log value holds plus the
    previous producer id and epoch that make a retried InitProducerId idempotent)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    txn_timeout_ms: int
    state: TxnState
    partitions: set[tuple[str, int]] = field(default_factory=set)
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    last_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_PRODUCER_EPOCH

    def copy(self) -> TransactionMetadata:
        return TransactionMetadata(
            self.transactional_id, self.producer_id, self.producer_epoch, self.txn_timeout_ms,
            self.state, set(self.partitions), self.txn_start_timestamp,
            self.txn_last_update_timestamp, self.last_producer_id, self.last_producer_epoch)

    @property
    def epoch_exhausted(self) -> bool:
        return self.producer_epoch >= MAX_EPOCH - 1


def encode_key(transactional_id: str) -> bytes:
    raw = transactional_id.encode()
    return struct.pack(">hh", KEY_VERSION, len(raw)) + raw


def decode_key(key: bytes) -> str | None:
    """The transactional id, or None for a key of an unknown version."""
    r = Reader(key)
    if r.int16() != KEY_VERSION:
        return None
    return r.string()


def encode_value(txn: TransactionMetadata) -> bytes:
    out = bytearray(struct.pack(
        ">hqhib", VALUE_VERSION, txn.producer_id, txn.producer_epoch, txn.txn_timeout_ms,
        int(txn.state)))
    if txn.state == TxnState.EMPTY:
        out += struct.pack(">i", -1)
    else:
        by_topic: dict[str, list[int]] = {}
        for topic, p in sorted(txn.partitions):
            by_topic.setdefault(topic, []).append(p)
        out += struct.pack(">i", len(by_topic))
        for topic, parts in by_topic.items():
            raw = topic.encode()
            out += struct.pack(">h", len(raw)) + raw
            out += struct.pack(f">i{len(parts)}i", len(parts), *parts)
    out += struct.pack(">qq", txn.txn_last_update_timestamp, txn.txn_start_timestamp)
    return bytes(out)


def decode_value(transactional_id: str, value: bytes) -> TransactionMetadata:
    r = Reader(value)
    version = r.int16()
    if version not in (0, 1):
        raise ValueError(f"unknown TransactionLogValue version {version}")
    flexible = version >= 1
    pid = r.int64()
    epoch = r.int16()
    timeout = r.int32()
    state = TxnState(r.int8())
    partitions: set[tuple[str, int]] = set()
    n = r.array_length(flexible)
    for _ in range(max(n, 0)):
        topic = r.compact_string() if flexible else r.string()
        for _ in range(r.array_length(flexible)):
            partitions.add((topic, r.int32()))
        if flexible:
            _skip_tags(r)
    last_update = r.int64()
    start = r.int64()
    txn = TransactionMetadata(
        transactional_id, pid, epoch, timeout, state, partitions, start, last_update)
    if flexible:
        for _ in range(r.uvarint()):
            tag, size = r.tag_header()
            data = r.raw(size)
            if tag == 0 and size == 8:
                txn.last_producer_id = struct.unpack(">q", data)[0]
    return txn


def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        _, size = r.tag_header()
        r.raw(size)
