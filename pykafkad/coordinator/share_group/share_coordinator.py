"""The share coordinator (Kafka's ShareCoordinatorShard): the keeper of share-partition state on
the leader of each __share_group_state partition.

Share-partition leaders reach it with InitializeShareGroupState, ReadShareGroupState,
WriteShareGroupState, DeleteShareGroupState and ReadShareGroupStateSummary.  A key's first
state is written as a ShareSnapshot; each later write as a ShareUpdate delta holding only the
batches written, until ``share.coordinator.snapshot.update.records.per.snapshot`` updates have
followed the last snapshot, when the merged state is written as a new snapshot (its snapshot
epoch one higher).  A partition's records are replayed when this node is found leading it at a
new leader epoch, so a successor carries on from what its predecessor wrote.
"""

from __future__ import annotations

import logging

from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.partitioning import partition_for
from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.coordinator.share_group.state_store import (
    SHARE_GROUP_STATE_TOPIC,
    ShareStateStore,
    _apply_update,
    coordinator_key,
)
from pykafkad.coordinator.storage import OffsetsTopicStorage
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.coordinator.share")

Key = tuple[str, bytes, int]
#: Kafka's default of share.coordinator.snapshot.update.records.per.snapshot
UPDATES_PER_SNAPSHOT = 500


class ShareCoordinator:
    def __init__(self, broker, store: ShareStateStore):
        self.broker = broker
        self.store = store
        self.states: dict[Key, sr.ShareStateValue] = {}
        #: ShareUpdate records since the key's last snapshot: at the setting's value, the next
        #: write is a snapshot
        self.update_counts: dict[Key, int] = {}
        self.leader_epochs: dict[Key, int] = {}
        #: state partition -> the leader epoch it was loaded at
        self.loaded: dict[int, int] = {}

    def updates_per_snapshot(self) -> int:
        value = self.broker.config.ignored.get(
            "share.coordinator.snapshot.update.records.per.snapshot")
        try:
            return UPDATES_PER_SNAPSHOT if value is None else int(value)
        except ValueError:
            return UPDATES_PER_SNAPSHOT

    def index_of(self, key: Key) -> int:
        return partition_for(coordinator_key(*key), self.store.num_partitions())

    # -- leadership and loading ----------------------------------------------------------------
    def check(self, key: Key) -> int:
        """NONE when this node leads the key's state partition (loading it if it took the
        leadership since), else COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR."""
        if self.broker.topics.get(SHARE_GROUP_STATE_TOPIC) is None:
            self.store.ensure_topic()
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        index = self.index_of(key)
        try:
            partition = self.broker.replicas.get_partition_or_error(SHARE_GROUP_STATE_TOPIC, index)
            partition.local_log_with_epoch(-1, require_leader=True)
        except KafkaError:
            self.loaded.pop(index, None)
            return ErrorCode.NOT_COORDINATOR
        epoch = self.broker.replicas.current_leader(SHARE_GROUP_STATE_TOPIC, index)[1]
        if self.loaded.get(index) != epoch:
            self._load(index)
            self.loaded[index] = epoch
        return ErrorCode.NONE

    def load_led(self) -> None:
        """Loads every state partition this node leads (what the admin APIs describe)."""
        topic = self.broker.topics.get(SHARE_GROUP_STATE_TOPIC)
        if topic is None:
            return
        for index in range(topic.num_partitions):
            leader, epoch = self.broker.replicas.current_leader(SHARE_GROUP_STATE_TOPIC, index)
            if leader == self.broker.node_id and self.loaded.get(index) != epoch:
                self._load(index)
                self.loaded[index] = epoch

    def _load(self, index: int) -> None:
        """Replays the state partition's records (Kafka's replay of ShareSnapshot and
        ShareUpdate records)."""
        for key in [k for k in self.states if self.index_of(k) == index]:
            self._drop(key)
        plog = self.broker.logs.get(SHARE_GROUP_STATE_TOPIC, index)
        if plog is None:
            return
        reader = OffsetsTopicStorage(
            self.broker, GroupCoordinatorConfig.from_broker(self.broker.config), -1)
        count = 0
        for rec in reader._read_partition(plog):  # noqa: SLF001 - the shared log reader
            if rec.key is None:
                continue
            try:
                key = sr.decode_key(rec.key)
                value = None if rec.value is None else sr.decode_value(key.record_type, rec.value)
            except Exception as e:  # noqa: BLE001 - skip what this version cannot read
                log.warning("skipping %s-%d record at %d: %s", SHARE_GROUP_STATE_TOPIC, index,
                            rec.offset, e)
                continue
            self._replay((key.group_id, key.topic_id, key.partition), key.record_type, value)
            count += 1
        log.info("Loaded %d records of %s-%d", count, SHARE_GROUP_STATE_TOPIC, index)

    def _replay(self, key: Key, record_type: int, value: sr.ShareStateValue | None) -> None:
        if value is None:
            self._drop(key)
            return
        self.leader_epochs[key] = max(self.leader_epochs.get(key, value.leader_epoch),
                                      value.leader_epoch)
        if record_type == sr.SNAPSHOT:
            self.states[key] = value
            self.update_counts[key] = 0
            return
        base = self.states.get(key)
        self.states[key] = value if base is None else _apply_update(base, value)
        self.update_counts[key] = self.update_counts.get(key, 0) + 1

    def _drop(self, key: Key) -> None:
        self.states.pop(key, None)
        self.update_counts.pop(key, None)
        self.leader_epochs.pop(key, None)

    def _append(self, key: Key, record_type: int, value: sr.ShareStateValue | None):
        """Writes and applies one record; the receipt to wait on (``store.replicated``)."""
        receipt = self.store.append(self.index_of(key), sr.ShareStateKey(record_type, *key),
                                    record_type, value)
        self._replay(key, record_type, value)
        return receipt

    # -- the APIs ------------------------------------------------------------------------------
    def read(self, key: Key, leader_epoch: int) -> sr.ShareStateValue:
        """ReadShareGroupState: FENCED_LEADER_EPOCH for a reader older than the last writer;
        a newer leader epoch is remembered (later writes of older leaders are fenced)."""
        state = self.states.get(key)
        if state is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             "Read operation on uninitialized share partition not allowed.")
        if leader_epoch != -1:
            if self.leader_epochs.get(key, -1) > leader_epoch:
                raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
            self.leader_epochs[key] = leader_epoch
        return state

    def summary(self, key: Key) -> sr.ShareStateValue | None:
        return self.states.get(key)

    def write(self, key: Key, state_epoch: int, leader_epoch: int, start_offset: int,
              batches: list[tuple[int, int, int, int]], delivery_complete_count: int = -1):
        """WriteShareGroupState: a ShareUpdate of the batches written, or a snapshot of the
        merged state after enough updates (or at a new state epoch); INVALID_REQUEST for a
        share partition never initialized, as Kafka answers."""
        if leader_epoch != -1 and self.leader_epochs.get(key, -1) > leader_epoch:
            raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
        current = self.states.get(key)
        if current is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             "Write operation on uninitialized share partition not allowed.")
        if state_epoch != -1 and current.state_epoch > state_epoch:
            raise KafkaError(ErrorCode.FENCED_STATE_EPOCH)
        now = self.broker.clock()
        if state_epoch > current.state_epoch:
            # a new state epoch (offsets altered): the old batches are gone
            value = sr.ShareStateValue(
                snapshot_epoch=current.snapshot_epoch + 1,
                leader_epoch=leader_epoch, start_offset=start_offset,
                state_batches=_apply_update(sr.ShareStateValue(0, 0, start_offset), sr.ShareStateValue(
                    0, leader_epoch, start_offset, list(batches))).state_batches,
                state_epoch=max(state_epoch, 0), create_timestamp=now, write_timestamp=now,
                delivery_complete_count=delivery_complete_count)
            return self._append(key, sr.SNAPSHOT, value)
        if self.update_counts.get(key, 0) >= self.updates_per_snapshot():
            merged = _apply_update(current, sr.ShareStateValue(
                0, leader_epoch, start_offset, list(batches)))
            value = sr.ShareStateValue(
                snapshot_epoch=current.snapshot_epoch + 1,
                leader_epoch=current.leader_epoch if leader_epoch == -1 else leader_epoch,
                start_offset=merged.start_offset, state_batches=merged.state_batches,
                state_epoch=current.state_epoch if state_epoch == -1 else state_epoch,
                create_timestamp=current.create_timestamp, write_timestamp=now,
                delivery_complete_count=delivery_complete_count)
            return self._append(key, sr.SNAPSHOT, value)
        return self._append(key, sr.UPDATE, sr.ShareStateValue(
            snapshot_epoch=current.snapshot_epoch, leader_epoch=leader_epoch,
            start_offset=start_offset, state_batches=list(batches),
            delivery_complete_count=delivery_complete_count))

    def initialize(self, key: Key, state_epoch: int, start_offset: int):
        """InitializeShareGroupState: a fresh snapshot at the state epoch."""
        current = self.states.get(key)
        if current is not None and current.state_epoch > state_epoch:
            raise KafkaError(ErrorCode.FENCED_STATE_EPOCH)
        now = self.broker.clock()
        return self._append(key, sr.SNAPSHOT, sr.ShareStateValue(
            snapshot_epoch=0 if current is None else current.snapshot_epoch + 1,
            leader_epoch=0, start_offset=start_offset, state_epoch=state_epoch,
            create_timestamp=now, write_timestamp=now,
            # Kafka 4.4: unknown (-1) until the leader picks the start, else none done yet
            delivery_complete_count=-1 if start_offset == -1 else 0))

    def delete(self, key: Key):
        """DeleteShareGroupState: a tombstone for the key's snapshot, as Kafka's share
        coordinator writes (the updates before it are replayed, then the tombstone drops
        the state)."""
        if key not in self.states:
            return None
        return self._append(key, sr.SNAPSHOT, None)
