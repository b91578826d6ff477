"""The records of ``__transaction_state``: Kafka's TransactionLogKey and TransactionLogValue.

Key (version 0): ``version int16 = 0 | transactional_id string``.
Value version 0 (written, as Kafka does while transaction.version is below 2)::

    version int16 | producer_id int64 | producer_epoch int16 | transaction_timeout_ms int32
    | status int8 | partitions nullable array<topic string, partition_ids array<int32>>
    | last_update_timestamp_ms int64 | start_timestamp_ms int64

Version 1 (written once transaction.version 2 is finalized, as Kafka 4.4 does; flexible:
compact strings and arrays) adds tagged fields: 0 PreviousProducerId (the producer id before
the transition), 1 NextProducerId (the id an epoch overflow moves to), 2
ClientTransactionVersion; each is left out at its default (-1, -1, 0), as Kafka's serializer
does.  A null value is a tombstone: the id expired.
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
#: the flexible value version Kafka writes from transaction.version 2 on
FLEXIBLE_VALUE_VERSION = 1

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
    #: transaction version 2: the producer id an epoch overflow moves to once the
    #: transaction completes (set in PrepareCommit/PrepareAbort only)
    next_producer_id: int = NO_PRODUCER_ID
    #: the transaction version of the client's last transaction (2: an epoch bump per end)
    client_transaction_version: int = 0

    def copy(self) -> TransactionMetadata:
        return TransactionMetadata(
            self.transactional_id, self.producer_id, self.producer_epoch, self.txn_timeout_ms,
            self.state, set(self.partitions), self.txn_start_timestamp,
            self.txn_last_update_timestamp, self.last_producer_id, self.last_producer_epoch,
            self.next_producer_id, self.client_transaction_version)

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


def encode_value(txn: TransactionMetadata, version: int = VALUE_VERSION,
                 previous_producer_id: int = NO_PRODUCER_ID) -> bytes:
    """``version`` 0, or 1 (flexible) with ``previous_producer_id``, the producer id before
    this transition, in tag 0."""
    flexible = version >= FLEXIBLE_VALUE_VERSION
    out = bytearray(struct.pack(
        ">hqhib", version, txn.producer_id, txn.producer_epoch, txn.txn_timeout_ms,
        int(txn.state)))
    if txn.state == TxnState.EMPTY:
        out += _uvarint(0) if flexible else struct.pack(">i", -1)
    else:
        by_topic: dict[str, list[int]] = {}
        for topic, p in sorted(txn.partitions):
            by_topic.setdefault(topic, []).append(p)
        out += _uvarint(len(by_topic) + 1) if flexible else struct.pack(">i", len(by_topic))
        for topic, parts in by_topic.items():
            raw = topic.encode()
            if flexible:
                out += _uvarint(len(raw) + 1) + raw + _uvarint(len(parts) + 1)
                out += struct.pack(f">{len(parts)}i", *parts) + b"\x00"
            else:
                out += struct.pack(">h", len(raw)) + raw
                out += struct.pack(f">i{len(parts)}i", len(parts), *parts)
    out += struct.pack(">qq", txn.txn_last_update_timestamp, txn.txn_start_timestamp)
    if flexible:
        tags = []
        if previous_producer_id != NO_PRODUCER_ID:
            tags.append((0, struct.pack(">q", previous_producer_id)))
        if txn.next_producer_id != NO_PRODUCER_ID:
            tags.append((1, struct.pack(">q", txn.next_producer_id)))
        if txn.client_transaction_version:
            tags.append((2, struct.pack(">h", txn.client_transaction_version)))
        out += _uvarint(len(tags))
        for tag, data in tags:
            out += _uvarint(tag) + _uvarint(len(data)) + data
    return bytes(out)


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
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
            elif tag == 1 and size == 8:
                txn.next_producer_id = struct.unpack(">q", data)[0]
            elif tag == 2 and size == 2:
                txn.client_transaction_version = struct.unpack(">h", data)[0]
    return txn


def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        _, size = r.tag_header()
        r.raw(size)
