"""Kafka's AlterPartitionManager: a leader's ISR changes go to the active controller.

A Partition submits a change through its ``alter_partition`` callback (this object); the
callback answers None (in flight) and the change is queued.  One AlterPartition request is in
flight at a time, carrying every change queued meanwhile (Kafka batches the same way); the
answer for each partition is handed back with ``Partition.complete_alter_partition``: the
committed LeaderAndIsr, or the error (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
UNKNOWN_TOPIC_OR_PARTITION, ...: the change is dropped, and the next metadata update or ISR
check starts again).  A request that fails as a whole (no controller, NOT_CONTROLLER, a
timeout, a retriable top-level error) is sent again after a backoff, as Kafka retries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

from pykafkad.replica.partition import AlterPartitionResult, Partition
from wire.errors import ErrorCode, KafkaError
from wire.messages.alter_partition_request import (
    AlterPartitionRequest,
    BrokerState,
    PartitionData,
    TopicData,
)

log = logging.getLogger("pykafkad.kraft.alter_partition")

#: Kafka's AlterPartitionManager retries a failed request after this much
RETRY_BACKOFF_S = 0.05
#: errors that fail the whole request and are retried (Kafka: the request is re-sent)
RETRIABLE_TOP_LEVEL = {ErrorCode.NOT_CONTROLLER, ErrorCode.UNKNOWN_SERVER_ERROR,
                       ErrorCode.REQUEST_TIMED_OUT}


class AlterPartitionManager:
    """``manager(partition, new_isr, leader_epoch, partition_epoch) -> None``; ``run`` sends."""

    def __init__(self, channel: Any, broker_id: int, broker_epoch: Callable[[], int], *,
                 request_timeout_s: float = 30.0):
        self.channel = channel
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        self.request_timeout_s = request_timeout_s
        #: (topic id, partition) -> (partition, new isr, leader epoch, partition epoch)
        self._unsent: dict[tuple[bytes, int], tuple[Partition, list[int], int, int]] = {}
        self._wake = trio.Event()
        #: requests sent (tests and metrics)
        self.requests_sent = 0

    def __call__(self, partition: Partition, new_isr: list[int], leader_epoch: int,
                 partition_epoch: int) -> None:
        """Queues the change (a newer one for the same partition replaces it)."""
        self._unsent[(partition.topic_id, partition.index)] = (
            partition, list(new_isr), leader_epoch, partition_epoch)
        self._wake.set()
        return None

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            if not self._unsent:
                await self._wake.wait()
                self._wake = trio.Event()
                continue
            batch, self._unsent = self._unsent, {}
            try:
                answered = await self._send(batch)
            except Exception:  # a bug here must not stop the broker: the changes are dropped
                log.exception("AlterPartition for %d partitions failed", len(batch))
                for partition, *_ in batch.values():
                    partition.complete_alter_partition(None)
                continue
            if not answered:
                for key, item in batch.items():  # retry: keep any newer change queued since
                    self._unsent.setdefault(key, item)
                await trio.sleep(RETRY_BACKOFF_S)

    def _request(self, batch: dict) -> AlterPartitionRequest:
        by_topic: dict[bytes, list[PartitionData]] = {}
        for (topic_id, index), (_, isr, leader_epoch, partition_epoch) in batch.items():
            by_topic.setdefault(topic_id, []).append(PartitionData(
                partition_index=index, leader_epoch=leader_epoch, new_isr=isr,
                new_isr_with_epochs=[BrokerState(broker_id=r, broker_epoch=-1) for r in isr],
                leader_recovery_state=0, partition_epoch=partition_epoch))
        return AlterPartitionRequest(
            broker_id=self.broker_id, broker_epoch=self.broker_epoch(),
            topics=[TopicData(topic_id=tid, partitions=parts) for tid, parts in by_topic.items()])

    async def _send(self, batch: dict) -> bool:
        """Whether the request was answered (each partition then completed)."""
        self.requests_sent += 1
        try:
            response = await self.channel.send(self._request(batch),
                                               timeout_s=self.request_timeout_s)
        except (trio.TooSlowError, OSError) as e:
            log.info("AlterPartition for %d partitions failed: %r; retrying", len(batch), e)
            return False
        if response.error_code in RETRIABLE_TOP_LEVEL:
            log.info("AlterPartition answered %s; retrying",
                     ErrorCode(response.error_code).name)
            return False
        if response.error_code:
            for partition, *_ in batch.values():
                partition.complete_alter_partition(KafkaError(ErrorCode(response.error_code)))
            return True
        answered = set()
        for t in response.topics:
            for p in t.partitions:
                item = batch.get((t.topic_id, p.partition_index))
                if item is None:
                    continue
                answered.add((t.topic_id, p.partition_index))
                partition = item[0]
                if p.error_code:
                    log.info("AlterPartition of %s-%d: %s", partition.topic, partition.index,
                             ErrorCode(p.error_code).name)
                    partition.complete_alter_partition(KafkaError(ErrorCode(p.error_code)))
                else:
                    partition.complete_alter_partition(AlterPartitionResult(
                        list(p.isr), p.leader_epoch, p.partition_epoch))
        for key, (partition, *_) in batch.items():
            if key not in answered:  # Kafka: UNKNOWN_SERVER_ERROR for a partition left out
                partition.complete_alter_partition(KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR))
        return True
