"""The internal topic __share_group_state: the share coordinator's records of a share
partition go to the partition that owns its key
(``abs("group:topicId:partition".hashCode()) % share.coordinator.state.topic.num.partitions``).
The topic is created on first use; the share coordinator (share_coordinator.py) appends to the
partitions this node leads."""

from __future__ import annotations

import logging

import trio

from pykafkad.coordinator.share_group import state_records as sr
from wire.errors import ErrorCode, KafkaError
from wire.messages.create_topics_request import CreatableTopic, CreatableTopicConfig
from wire.records.batch import build_batch

log = logging.getLogger("pykafkad.coordinator.share")

SHARE_GROUP_STATE_TOPIC = "__share_group_state"
#: Kafka's defaults for share.coordinator.state.topic.*
NUM_PARTITIONS = 50
SEGMENT_BYTES = 104857600
_TOPIC_CONFIGS = {"cleanup.policy": "delete", "segment.bytes": str(SEGMENT_BYTES),
                  "compression.type": "producer"}


def coordinator_key(group_id: str, topic_id: bytes, partition: int) -> str:
    """SharePartitionKey.asCoordinatorKey: the topic id as Kafka prints a Uuid (base64url)."""
    import base64

    tid = base64.urlsafe_b64encode(topic_id).decode().rstrip("=")
    return f"{group_id}:{tid}:{partition}"


class ShareStateStore:
    def __init__(self, broker):
        self.broker = broker

    def num_partitions(self) -> int:
        topic = self.broker.topics.get(SHARE_GROUP_STATE_TOPIC)
        return topic.num_partitions if topic is not None else NUM_PARTITIONS

    def ensure_topic(self) -> bool:
        """Creates the topic on first use (Kafka's share coordinator does on its first
        request); False where this node cannot (a KRaft broker asks its controller)."""
        if self.broker.topics.get(SHARE_GROUP_STATE_TOPIC) is not None:
            return True
        locator = getattr(self.broker, "coordinator_locator", None)
        if locator is not None:  # a KRaft node: the active controller creates it
            config = self.broker.config
            locator.creation.create(CreatableTopic(
                name=SHARE_GROUP_STATE_TOPIC, num_partitions=NUM_PARTITIONS,
                # Kafka's default is 3 (share.coordinator.state.topic.replication.factor);
                # pykafkad follows the offsets topic's, which fits the cluster it runs
                replication_factor=config["offsets.topic.replication.factor"], assignments=[],
                configs=[CreatableTopicConfig(k, v) for k, v in _TOPIC_CONFIGS.items()]))
            return False
        try:
            self.broker.create_topic(SHARE_GROUP_STATE_TOPIC, NUM_PARTITIONS, _TOPIC_CONFIGS)
        except KafkaError as e:
            log.warning("cannot create %s (%s): share-partition state is kept in memory",
                        SHARE_GROUP_STATE_TOPIC, e)
            return False
        return True

    def append(self, index: int, key: sr.ShareStateKey, record_type: int,
               value: sr.ShareStateValue | None):
        """Appends one record (a null value: a tombstone) to the state partition this node
        leads, as an acks=all write; KafkaError when the write fails.  Returns (partition,
        the offset the ISR must reach) for ``replicated``."""
        now = self.broker.clock()
        data = None if value is None else sr.encode_value(record_type, value)
        batch = build_batch([(sr.encode_key(key), data, (), now)])
        partition = self.broker.partition(SHARE_GROUP_STATE_TOPIC, index)
        try:
            info = partition.append_as_leader(batch, now_ms=now, required_acks=-1)
        except OSError as e:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, str(e)) from None
        return partition, info.last_offset + 1

    async def replicated(self, receipt) -> int:
        """Waits until an appended record is on every ISR member (Kafka's share coordinator
        answers then); the error code otherwise."""
        if receipt is None:
            return ErrorCode.NONE
        partition, offset = receipt
        deadline = trio.current_time() + self.broker.config["request.timeout.ms"] / 1000
        return await self.broker.replicas.wait_for_acks(partition, offset, deadline)


def _apply_update(base: sr.ShareStateValue, update: sr.ShareStateValue) -> sr.ShareStateValue:
    """ShareUpdate over a snapshot: a new start offset (unless -1) and the updated batches
    replacing the offsets they cover."""
    start = base.start_offset if update.start_offset == -1 else update.start_offset
    merged: list[list[int]] = []
    for first, last, state, count in _overlay(base.state_batches, update.state_batches):
        first = max(first, start)
        if first > last:
            continue
        if merged and merged[-1][1] == first - 1 and merged[-1][2:] == [state, count]:
            merged[-1][1] = last
        else:
            merged.append([first, last, state, count])
    return sr.ShareStateValue(
        snapshot_epoch=update.snapshot_epoch, leader_epoch=update.leader_epoch,
        start_offset=start, state_batches=[tuple(m) for m in merged],
        state_epoch=base.state_epoch, create_timestamp=base.create_timestamp,
        write_timestamp=base.write_timestamp,
        delivery_complete_count=(base.delivery_complete_count
                                 if update.delivery_complete_count == -1
                                 else update.delivery_complete_count))


def _overlay(base, update) -> list[tuple[int, int, int, int]]:
    """(first, last, state, count) runs of ``base`` with ``update``'s runs written over them,
    in offset order: range arithmetic, so a write costs per batch, not per offset."""
    update = sorted(update)
    out = list(update)
    skip = 0
    for first, last, state, count in sorted(base):
        while skip < len(update) and update[skip][1] < first:
            skip += 1
        at, k = first, skip
        while at <= last and k < len(update) and update[k][0] <= last:
            if update[k][0] > at:
                out.append((at, update[k][0] - 1, state, count))
            at = max(at, update[k][1] + 1)
            k += 1
        if at <= last:
            out.append((at, last, state, count))
    return sorted(out)
