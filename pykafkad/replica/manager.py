"""The partitions this broker hosts (Kafka's ReplicaManager): the one way handlers reach a
partition, the leadership changes the metadata layer hands in (``apply``), and the waits on
replication (acks=all produces until the ISR has the batch, long-poll fetches until the HW or,
for followers, the log end moves): trio events, no polling.

Single-node mode (no metadata layer yet): every partition of a known topic is led by this
broker with replicas = ISR = [this broker], in the leader epoch its log last recorded (0 for a
new one); the Partition is made on first use, so start-up stays free of per-partition work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from pykafkad.log.errors import KafkaStorageError
from pykafkad.log.partition import PartitionLog
from pykafkad.replica.hw_checkpoint import HighWatermarkCheckpoint
from pykafkad.replica.partition import (
    AlterPartition,
    Partition,
    PartitionRegistration,
    Wakeup,
    apply_locally,
)
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.replica")

TopicPartition = tuple[str, int]


@dataclass
class LocalChanges:
    """What a metadata change means for this broker (Kafka's LocalReplicaChanges): the
    partitions it now leads or follows (with their topic id and registration) and those it no
    longer hosts (``deleted``: the topic is gone, so the log goes too)."""

    leaders: dict[TopicPartition, tuple[bytes, PartitionRegistration]] = field(default_factory=dict)
    followers: dict[TopicPartition, tuple[bytes, PartitionRegistration]] = field(default_factory=dict)
    deletes: dict[TopicPartition, bool] = field(default_factory=dict)


class ReplicaManager:
    """Partitions by (topic, index) and by topic id."""

    def __init__(
        self,
        local_broker_id: int,
        *,
        get_log: Callable[[str, int], PartitionLog | None],
        get_topic: Callable[[str], Any],
        topic_config: Callable[[Any], Any],
        clock: Callable[[], int],
        replica_lag_time_max_ms: Callable[[], int] | int = 30000,
        alter_partition: AlterPartition = apply_locally,
        single_node: bool = True,
        peek_leader_epoch: Callable[[str, int], int | None] | None = None,
        hw_checkpoint: HighWatermarkCheckpoint | None = None,
        has_log: Callable[[str, int], bool] | None = None,
    ):
        self.local_broker_id = local_broker_id
        self._get_log = get_log
        self._get_topic = get_topic
        self._topic_config = topic_config
        self.clock = clock
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self.alter_partition = alter_partition
        self.single_node = single_node
        #: the latest epoch a partition's log recorded, without opening the log (or None)
        self._peek_leader_epoch = peek_leader_epoch
        #: the log dir's replication-offset-checkpoint (None: high watermarks not persisted)
        self.hw_checkpoint = hw_checkpoint
        #: whether a partition still has a log (opened or not), for the checkpoint
        self._has_log = has_log
        self._epoch_hints: dict[TopicPartition, int] = {}
        self.partitions: dict[TopicPartition, Partition] = {}
        self.by_topic_id: dict[bytes, dict[int, Partition]] = {}
        self._hw_advanced = Wakeup()
        self._leo_advanced = Wakeup()
        #: leaderships / followerships the metadata gave whose logs could not be made yet (out
        #: of descriptors, disk full): made on the partition's next use
        self._pending: dict[TopicPartition, tuple[bytes, PartitionRegistration, bool]] = {}
        #: whether a partition's log is one the start left unopened (logs open lazily): its
        #: leadership is then made on first use too, so that a start stays quick
        self.log_unopened: Callable[[str, int], bool] = lambda _topic, _index: False
        #: whether a broker may join an ISR (a KRaft broker's metadata cache replaces it)
        self.is_replica_isr_eligible: Callable[[int], bool] = lambda _replica_id: True

    # -- lookup ----------------------------------------------------------------------------------
    def get_partition(self, topic: str, index: int) -> Partition | None:
        """The hosted partition, or None.  In single-node mode a partition of a known topic is
        made leader here on first use (its log opened: KafkaStorageError when it cannot be)."""
        partition = self.partitions.get((topic, index))
        if partition is None and (topic, index) in self._pending:
            return self._retry_pending(topic, index)
        if partition is not None or not self.single_node:
            return partition
        t = self._get_topic(topic)
        if t is None or not 0 <= index < t.num_partitions:
            return None
        plog = self._get_log(topic, index)
        if plog is None:
            return None
        partition = self._new_partition(topic, index, t.topic_id, plog)
        self._epoch_hints.pop((topic, index), None)
        epoch = plog.latest_epoch
        me = self.local_broker_id
        try:
            partition.make_leader(PartitionRegistration(
                replicas=(me,), isr=(me,), leader=me, leader_epoch=0 if epoch is None else epoch,
                partition_epoch=0))
        except OSError as e:  # the epoch checkpoint could not be written: tried again next time
            self.forget(topic, index)
            raise KafkaStorageError(
                f"Error while making {topic}-{index} leader in dir {plog.dir.parent}: {e}") from e
        return partition

    def _single_node_epoch(self, topic: str, index: int) -> int:
        """The epoch a partition not made yet will lead in: its log's latest (read once from
        the leader-epoch-checkpoint, the log staying unopened), else 0."""
        key = (topic, index)
        epoch = self._epoch_hints.get(key)
        if epoch is None:
            peeked = self._peek_leader_epoch(topic, index) if self._peek_leader_epoch else None
            epoch = self._epoch_hints[key] = peeked or 0
        return epoch

    def get_partition_or_error(self, topic: str, index: int) -> Partition:
        """Kafka's getPartitionOrError: UNKNOWN_TOPIC_OR_PARTITION for a partition no topic
        has, NOT_LEADER_OR_FOLLOWER for one of a known topic this broker does not host, and
        KAFKA_STORAGE_ERROR (raised by the log) for one whose log is offline."""
        partition = self.get_partition(topic, index)
        if partition is not None:
            return partition
        t = self._get_topic(topic)
        if t is not None and 0 <= index < t.num_partitions and not self.single_node:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

    def leader_partition_or_error(self, topic: str, index: int,
                                  current_leader_epoch: int = -1) -> Partition:
        """The partition, checked as Kafka's getPartitionOrException + localLogWithEpochOrThrow
        (epoch first, then leadership)."""
        partition = self.get_partition_or_error(topic, index)
        partition.local_log_with_epoch(current_leader_epoch)
        return partition

    def hosted(self, topic: str, index: int) -> Partition | None:
        """The Partition if it was made already (never opens a log): what Metadata reports."""
        return self.partitions.get((topic, index))

    def describe(self, topic: str, index: int) -> tuple[int, int, list[int], list[int]]:
        """(leader, leader epoch, replicas, isr) for Metadata / DescribeTopicPartitions; a
        partition not made yet in single-node mode is this broker's, epoch 0 (its log is not
        opened to answer)."""
        partition = self.partitions.get((topic, index))
        if partition is None:
            me = self.local_broker_id
            return me, self._single_node_epoch(topic, index), [me], [me]
        leader = partition.leader_id if partition.leader_id is not None else -1
        return leader, partition.leader_epoch, list(partition.replicas), list(partition.isr)

    def current_leader(self, topic: str, index: int) -> tuple[int, int]:
        """(leader id, leader epoch) for KIP-951's answers to NOT_LEADER_OR_FOLLOWER and
        FENCED_LEADER_EPOCH; (-1, -1) for a partition no topic has."""
        partition = self.partitions.get((topic, index))
        if partition is not None:
            leader = partition.leader_id
            return (-1 if leader is None else leader), partition.leader_epoch
        t = self._get_topic(topic)
        if t is None or not 0 <= index < t.num_partitions or not self.single_node:
            return -1, -1
        return self.local_broker_id, self._single_node_epoch(topic, index)

    def _new_partition(self, topic: str, index: int, topic_id: bytes,
                       plog: PartitionLog) -> Partition:
        partition = Partition(
            topic, index, topic_id, self.local_broker_id, plog, clock=self.clock,
            replica_lag_time_max_ms=self.replica_lag_time_max_ms,
            topic_config=lambda: self._topic_config(self._get_topic(topic)),
            alter_partition=self.alter_partition)
        if self.hw_checkpoint is not None and not plog.high_watermark_managed:
            # Kafka's Partition.updateHighWatermark: the checkpointed HW (0 without one),
            # clamped to the log; a leader moves it on from there as its ISR allows
            plog.update_high_watermark(self.hw_checkpoint.fetch((topic, index)) or 0)
        partition.on_high_watermark = self._on_high_watermark
        partition.on_append = self.notify_log_end
        partition.is_replica_isr_eligible = self.is_replica_isr_eligible
        self.partitions[(topic, index)] = partition
        self.by_topic_id.setdefault(topic_id, {})[index] = partition
        return partition

    def forget(self, topic: str, index: int) -> None:
        """Drops the partition (its topic was deleted, or its log removed)."""
        self._epoch_hints.pop((topic, index), None)
        self._pending.pop((topic, index), None)
        partition = self.partitions.pop((topic, index), None)
        if partition is not None:
            by_index = self.by_topic_id.get(partition.topic_id, {})
            by_index.pop(index, None)
            if not by_index:
                self.by_topic_id.pop(partition.topic_id, None)
            partition.leader_id = None
            partition.changed.fire()  # its acks=all waiters answer NOT_LEADER_OR_FOLLOWER

    def forget_topic(self, topic: str) -> None:
        for key in [k for k in self.partitions if k[0] == topic]:
            self.forget(*key)

    # -- leadership from the metadata layer ------------------------------------------------------
    def apply(self, changes: LocalChanges) -> list[Partition]:
        """Makes this broker leader / follower of the partitions ``changes`` names and drops
        the removed ones (Kafka's applyDelta); returns the partitions changed."""
        changed = []
        for leader, wanted in ((True, changes.leaders), (False, changes.followers)):
            for (topic, index), (topic_id, registration) in wanted.items():
                self._pending.pop((topic, index), None)
                # a leader, or a replica with no leader to fetch from (a restarted single
                # node's partitions until it is unfenced), whose log the start left unopened
                if (leader or registration.leader < 0) and \
                        (topic, index) not in self.partitions and self.log_unopened(topic, index):
                    self._pending[(topic, index)] = (topic_id, registration, leader)
                    continue
                try:
                    partition = self._hosted_or_new(topic, index, topic_id)
                except KafkaError as e:  # the others still change; this one on next use
                    log.warning("Cannot make %s-%d %s now: %s", topic, index,
                                "leader" if leader else "follower", e.message)
                    self._pending[(topic, index)] = (topic_id, registration, leader)
                    continue
                if (partition.make_leader(registration) if leader
                        else partition.make_follower(registration)):
                    changed.append(partition)
        for topic, index in changes.deletes:
            self.forget(topic, index)
        self.wake_all()
        return changed

    def _retry_pending(self, topic: str, index: int) -> Partition:
        """Makes a pending partition now (KafkaStorageError again while its log still cannot
        be made)."""
        topic_id, registration, leader = self._pending[(topic, index)]
        partition = self._hosted_or_new(topic, index, topic_id)
        del self._pending[(topic, index)]
        if leader:
            partition.make_leader(registration)
        else:
            partition.make_follower(registration)
        return partition

    def _hosted_or_new(self, topic: str, index: int, topic_id: bytes) -> Partition:
        partition = self.partitions.get((topic, index))
        if partition is None:
            plog = self._get_log(topic, index)
            if plog is None:
                raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR,
                                 f"no log for {topic}-{index}")
            partition = self._new_partition(topic, index, topic_id, plog)
        return partition

    # -- the leader's view of followers ----------------------------------------------------------
    def maybe_shrink_isr(self, now_ms: int | None = None) -> list[Partition]:
        """Kafka's periodic isr-expiration task (every replica.lag.time.max.ms / 2): the led
        partitions whose ISR shrank."""
        now = self.clock() if now_ms is None else now_ms
        return [p for p in list(self.partitions.values())
                if p.is_leader and p.followers and p.maybe_shrink_isr(now)]

    # -- the high watermark checkpoint ----------------------------------------------------------
    def high_watermarks(self) -> dict[TopicPartition, int] | None:
        """What Kafka's checkpointHighWatermarks writes: every hosted partition's HW. A log not
        hosted yet (single node: not used since start) keeps its checkpointed entry. None when
        no partition is hosted: Kafka leaves the file of a log dir without partitions as is."""
        checkpoint = self.hw_checkpoint
        if checkpoint is None or not self.partitions:
            return None
        has_log = self._has_log
        hws = {tp: hw for tp, hw in checkpoint.checkpointed.items()
               if tp not in self.partitions and has_log is not None and has_log(*tp)}
        for tp, partition in self.partitions.items():
            hws[tp] = partition.high_watermark
        return hws

    def checkpoint_high_watermarks(self) -> bool:
        """Writes replication-offset-checkpoint now (a clean shutdown); whether it did."""
        hws = self.high_watermarks()
        if hws is None:
            return False
        self.hw_checkpoint.write(hws)
        return True

    async def checkpoint_high_watermarks_in_thread(self) -> None:
        """The periodic checkpoint (replica.high.watermark.checkpoint.interval.ms): the HWs are
        read here, the file written and fsynced in a worker thread."""
        hws = self.high_watermarks()
        if hws is not None:
            await trio.to_thread.run_sync(self.hw_checkpoint.write, hws)

    # -- waits -----------------------------------------------------------------------------------
    def _on_high_watermark(self, partition: Partition | None) -> None:
        self._hw_advanced.fire()

    def notify_log_end(self) -> None:
        """Called after any append: wakes followers' long polls."""
        self._leo_advanced.fire()

    def wake_all(self) -> None:
        self._on_high_watermark(None)
        self.notify_log_end()

    async def wait_for_high_watermark(self, deadline: float) -> None:
        """Until some partition's HW moves, or ``deadline`` (trio time)."""
        await self._hw_advanced.wait(deadline)

    async def wait_for_log_end(self, deadline: float) -> None:
        """Until some partition's log end moves, or ``deadline``."""
        await self._leo_advanced.wait(deadline)

    async def wait_for_acks(self, partition: Partition, required_offset: int,
                            deadline: float) -> int:
        """An acks=all produce's wait (Kafka's DelayedProduce): the error code once every ISR
        member has the batch (HW >= ``required_offset``; NOT_ENOUGH_REPLICAS_AFTER_APPEND if
        the ISR fell below min.insync.replicas meanwhile), NOT_LEADER_OR_FOLLOWER when the
        leadership went, REQUEST_TIMED_OUT at the deadline."""
        while True:
            if self.partitions.get((partition.topic, partition.index)) is not partition:
                return ErrorCode.NOT_LEADER_OR_FOLLOWER
            done, error = partition.check_enough_replicas_reach_offset(required_offset)
            if done or error:
                return error
            if not await partition.changed.wait(deadline):
                return ErrorCode.REQUEST_TIMED_OUT

    async def wait_for_low_watermark(self, partition: Partition, required_offset: int,
                                     deadline: float) -> tuple[int, int]:
        """A DeleteRecords' wait (Kafka's DelayedDeleteRecords): (error, low watermark) once
        every replica's log start reached ``required_offset``; REQUEST_TIMED_OUT (with the
        leader's low watermark) at the deadline."""
        while True:
            if self.partitions.get((partition.topic, partition.index)) is not partition \
                    or not partition.is_leader:
                return ErrorCode.NOT_LEADER_OR_FOLLOWER, -1
            low = partition.low_watermark()
            if low >= required_offset:
                return ErrorCode.NONE, low
            if not await partition.changed.wait(deadline):
                return ErrorCode.REQUEST_TIMED_OUT, partition.log_start_offset
