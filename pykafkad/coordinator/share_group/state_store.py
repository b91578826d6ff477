"""Share-partition state in the internal topic __share_group_state (Kafka's share coordinator
persister): each change of a share partition's acknowledged state is written as a
ShareSnapshot record to the partition that owns the share partition's key
(``abs("group:topicId:partition".hashCode()) % share.coordinator.state.topic.num.partitions``)
before the client is answered, and read back at start, so a restart loses no acknowledged
state and redelivers what was unacknowledged (acquired records are stored as AVAILABLE).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.partitioning import partition_for
from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.coordinator.share_group.share_partition import SharePartition
from pykafkad.coordinator.storage import OffsetsTopicStorage
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
        #: snapshot epoch per share partition (bumped on each snapshot written)
        self.snapshot_epochs: dict[tuple[str, bytes, int], int] = {}
        self.create_timestamps: dict[tuple[str, bytes, int], int] = {}

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

    def write_snapshot(self, sp: SharePartition, leader_epoch: int) -> bool:
        """Writes the share partition's state (False: the topic is not there yet); raises
        KafkaError when the write fails."""
        if not self.ensure_topic():
            return False
        key = (sp.group_id, sp.topic_id, sp.partition)
        now = self.broker.clock()
        epoch = self.snapshot_epochs.get(key, -1) + 1
        self.snapshot_epochs[key] = epoch
        created = self.create_timestamps.setdefault(key, now)
        batches = sp.state_batches()
        done = sp.delivery_complete_count()
        value = sr.ShareStateValue(
            snapshot_epoch=epoch, leader_epoch=leader_epoch, start_offset=sp.start_offset,
            state_batches=batches, state_epoch=sp.state_epoch, create_timestamp=created,
            write_timestamp=now, delivery_complete_count=done)
        record = (sr.encode_key(sr.ShareStateKey(sr.SNAPSHOT, *key)),
                  sr.encode_value(sr.SNAPSHOT, value))
        index = partition_for(coordinator_key(*key), self.num_partitions())
        batch = build_batch([(record[0], record[1], (), now)])
        try:
            self.broker.partition(SHARE_GROUP_STATE_TOPIC, index).append_as_leader(
                batch, now_ms=now)
        except OSError as e:
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, str(e)) from None
        sp.persisted = (sp.start_offset, done)
        return True

    def write_tombstone(self, group_id: str, topic_id: bytes, partition: int) -> None:
        """Forgets a share partition's state (DeleteShareGroupState): a null-value record."""
        if self.broker.topics.get(SHARE_GROUP_STATE_TOPIC) is None:
            return
        key = (group_id, topic_id, partition)
        now = self.broker.clock()
        index = partition_for(coordinator_key(*key), self.num_partitions())
        batch = build_batch([(sr.encode_key(sr.ShareStateKey(sr.SNAPSHOT, *key)), None, (), now)])
        try:
            self.broker.partition(SHARE_GROUP_STATE_TOPIC, index).append_as_leader(
                batch, now_ms=now)
        except (OSError, KafkaError) as e:
            log.warning("cannot forget the share state of %s: %s", key, e)
        self.snapshot_epochs.pop(key, None)
        self.create_timestamps.pop(key, None)

    def load(self) -> dict[tuple[str, bytes, int], sr.ShareStateValue]:
        """The latest state of every share partition in the topic (snapshots, with any later
        updates applied)."""
        states: dict[tuple[str, bytes, int], sr.ShareStateValue] = {}
        for key, value in self._records():
            k = (key.group_id, key.topic_id, key.partition)
            if value is None:
                states.pop(k, None)
                continue
            v = sr.decode_value(key.record_type, value)
            if key.record_type == sr.SNAPSHOT:
                states[k] = v
                self.snapshot_epochs[k] = v.snapshot_epoch
                self.create_timestamps[k] = v.create_timestamp
            elif k in states:
                states[k] = _apply_update(states[k], v)
        return states

    def _records(self) -> Iterator[tuple[sr.ShareStateKey, bytes | None]]:
        topic = self.broker.topics.get(SHARE_GROUP_STATE_TOPIC)
        if topic is None:
            return
        reader = OffsetsTopicStorage(
            self.broker, GroupCoordinatorConfig.from_broker(self.broker.config), -1)
        for p in range(topic.num_partitions):
            plog = self.broker.logs.get(SHARE_GROUP_STATE_TOPIC, p)
            if plog is None:
                continue
            try:
                for rec in reader._read_partition(plog):
                    if rec.key is None:
                        continue
                    try:
                        yield sr.decode_key(rec.key), rec.value
                    except Exception as e:  # noqa: BLE001 - skip what this version can't read
                        log.warning("skipping %s-%d record at %d: %s",
                                    SHARE_GROUP_STATE_TOPIC, p, rec.offset, e)
            except Exception as e:  # noqa: BLE001 - one bad partition must not stop the broker
                log.error("cannot load %s-%d: %s", SHARE_GROUP_STATE_TOPIC, p, e)


def _apply_update(base: sr.ShareStateValue, update: sr.ShareStateValue) -> sr.ShareStateValue:
    """ShareUpdate over a snapshot: a new start offset (unless -1) and the updated batches
    replacing the offsets they cover."""
    start = base.start_offset if update.start_offset == -1 else update.start_offset
    per_offset = {}
    for batches in (base.state_batches, update.state_batches):
        for first, last, state, count in batches:
            for o in range(first, last + 1):
                per_offset[o] = (state, count)
    merged: list[list[int]] = []
    for o in sorted(x for x in per_offset if x >= start):
        state, count = per_offset[o]
        if merged and merged[-1][1] == o - 1 and merged[-1][2:] == [state, count]:
            merged[-1][1] = o
        else:
            merged.append([o, o, state, count])
    return sr.ShareStateValue(
        snapshot_epoch=update.snapshot_epoch, leader_epoch=update.leader_epoch,
        start_offset=start, state_batches=[tuple(m) for m in merged],
        state_epoch=base.state_epoch, create_timestamp=base.create_timestamp,
        write_timestamp=base.write_timestamp)
