"""Where the coordinator's records live: the compacted internal topic __consumer_offsets.

Each operation's records go, as one batch, to the partition that owns the group (Kafka's
``abs(groupId.hashCode()) % partitions``), and are written before the client is answered: a
write is one ``write(2)`` into the segment, so a commit acknowledged to a client survives a
kill -9 of the broker (and an fsync'd shutdown survives more).  At start, every partition is
read back in offset order and replayed.

The topic is created on first use, as Kafka's FindCoordinator does, with Kafka's settings for
it: ``cleanup.policy=compact``, ``segment.bytes=offsets.topic.segment.bytes`` and
``compression.type=producer``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.partitioning import GROUP_METADATA_TOPIC, partition_for
from pykafkad.coordinator.records import Record
from wire.errors import ErrorCode, KafkaError
from wire.records.batch import build_batch, compute_crc, decode_records, iter_batch_headers
from wire.records.control import COMMIT, decode_control_key

log = logging.getLogger("pykafkad.coordinator")


class CorruptRecordError(Exception):
    """A stored batch that fails its CRC: the partition holding it cannot be loaded."""


@dataclass
class StoredRecord:
    offset: int
    #: the producer of a transactional batch, else -1
    producer_id: int
    key: bytes | None
    value: bytes | None
    #: a transaction marker: True commits the producer's pending records, False aborts them
    control: bool | None = None


class CoordinatorStorage(Protocol):
    def append(self, group_id: str, records: list[Record], *, producer_id: int = -1,
               producer_epoch: int = -1, transactional: bool = False) -> int:
        """Appends records atomically; returns the offset of the first.  Raises KafkaError."""

    def read_all(self) -> Iterator[StoredRecord]:
        """Every stored record, in the order it must be replayed."""

    def read_partitions(self) -> Iterator[tuple[int, Iterator[StoredRecord]]]:
        """Each partition with its records: a partition that fails to read fails alone."""

    def partition_for(self, group_id: str) -> int:
        """The partition that holds the group's records."""


class MemoryStorage:
    """Records in a list: for coordinator tests that need no disk (``fail`` injects errors)."""

    def __init__(self) -> None:
        self.records: list[StoredRecord] = []
        self.fail: int | None = None

    def append(self, group_id: str, records: list[Record], *, producer_id: int = -1,
               producer_epoch: int = -1, transactional: bool = False) -> int:
        if self.fail is not None:
            raise KafkaError(self.fail, "injected failure")
        base = len(self.records)
        pid = producer_id if transactional else -1
        for i, (key, value) in enumerate(records):
            self.records.append(StoredRecord(base + i, pid, key, value))
        return base

    def read_all(self) -> Iterator[StoredRecord]:
        return iter(list(self.records))

    def read_partitions(self) -> Iterator[tuple[int, Iterator[StoredRecord]]]:
        yield 0, self.read_all()

    def partition_for(self, group_id: str) -> int:
        return 0


class OffsetsTopicStorage:
    """__consumer_offsets in the broker's own logs (``broker`` is a pykafkad Broker)."""

    def __init__(self, broker: Any, config: GroupCoordinatorConfig, leader_epoch: int):
        self.broker = broker
        self.config = config
        self.leader_epoch = leader_epoch
        self.load_buffer_size = broker.config["offsets.load.buffer.size"]
        #: (partition, offset past it) of the last append not yet taken by take_last_write
        self.last_write: tuple[Any, int] | None = None

    @property
    def num_partitions(self) -> int:
        topic = self.broker.topics.get(GROUP_METADATA_TOPIC)
        if topic is not None:
            return topic.num_partitions
        return self.config.offsets_topic_num_partitions

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def ensure_topic(self) -> None:
        if self.broker.topics.get(GROUP_METADATA_TOPIC) is not None:
            return
        self.broker.create_topic(GROUP_METADATA_TOPIC, self.config.offsets_topic_num_partitions, {
            "cleanup.policy": "compact",
            "segment.bytes": str(self.config.offsets_topic_segment_bytes),
            "compression.type": "producer",
        })

    def append(self, group_id: str, records: list[Record], *, producer_id: int = -1,
               producer_epoch: int = -1, transactional: bool = False) -> int:
        if not records:
            return -1
        self.ensure_topic()
        now = self.broker.clock()
        batch = build_batch(
            [(key, value, (), now) for key, value in records],
            compression=self.config.offsets_topic_compression_codec,
            producer_id=producer_id, producer_epoch=producer_epoch,
            is_transactional=transactional)
        partition = self.broker.partition(GROUP_METADATA_TOPIC, self.partition_for(group_id))
        try:
            # acks=all, as Kafka's coordinator writes: NOT_ENOUGH_REPLICAS below min.insync
            info = partition.append_as_leader(batch, now_ms=now, required_acks=-1)
        except OSError as e:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, str(e)) from None
        self.last_write = (partition, info.last_offset + 1)
        return info.base_offset

    def take_last_write(self) -> tuple[Any, int] | None:
        """(partition, offset just past it) of the last append, once: what a commit's answer
        waits to see replicated."""
        written, self.last_write = self.last_write, None
        return written

    def read_all(self) -> Iterator[StoredRecord]:
        for _, records in self.read_partitions():
            yield from records

    def read_partitions(self) -> Iterator[tuple[int, Iterator[StoredRecord]]]:
        topic = self.broker.topics.get(GROUP_METADATA_TOPIC)
        if topic is None:
            return
        for p in range(topic.num_partitions):
            plog = self.broker.logs.get(GROUP_METADATA_TOPIC, p)
            if plog is not None:
                yield p, self._read_partition(plog)

    def _read_partition(self, plog: Any) -> Iterator[StoredRecord]:
        offset = plog.log_start_offset
        end = plog.log_end_offset
        while offset < end:
            data = plog.read(offset, self.load_buffer_size).to_bytes()
            if not data:
                break
            progressed = False
            for pos, header in iter_batch_headers(data):
                if header.next_offset <= offset:
                    continue
                if compute_crc(data, pos, header.size) != header.crc:
                    raise CorruptRecordError(
                        f"the batch at offset {header.base_offset} of {plog.dir.name} is "
                        "corrupt (CRC mismatch)")
                progressed = True
                offset = header.next_offset
                pid = header.producer_id if header.is_transactional else -1
                records = decode_records(data, pos)
                if header.is_control:
                    for rec in records:
                        yield StoredRecord(rec.offset, header.producer_id, None, None,
                                           control=decode_control_key(rec.key) == COMMIT)
                    continue
                for rec in records:
                    yield StoredRecord(rec.offset, pid, rec.key, rec.value)
            if not progressed:
                log.warning("cannot read %s past offset %d", plog.dir.name, offset)
                break


async def commit_replicated(broker: Any, storage: Any) -> int:
    """Waits until the coordinator's last append (taken from ``storage`` right after the
    operation that wrote it) is in every ISR member's log, as Kafka answers an offset commit
    only once its records are committed; the error its partitions get (NONE when replicated,
    COORDINATOR_NOT_AVAILABLE after ``offsets.commit.timeout.ms`` or with too few replicas,
    NOT_COORDINATOR when the leadership went)."""
    import trio

    from pykafkad.coordinator.rebalance import append_error

    take = getattr(storage, "take_last_write", None)
    written = take() if take is not None else None
    if written is None:
        return ErrorCode.NONE
    partition, offset = written
    deadline = trio.current_time() + broker.config["offsets.commit.timeout.ms"] / 1000
    return append_error(await broker.replicas.wait_for_acks(partition, offset, deadline))
