"""Committed offsets: the state replayed from OffsetCommit records, and Kafka's rules to read it.

The store changes only by replaying records (at load and after each successful append), so
what a restart rebuilds from __consumer_offsets is exactly what clients were answered.
Transactional commits (TxnOffsetCommit) stay pending per producer id until the transaction's
marker commits or aborts them; while any is pending for a partition, a fetch that requires
stable offsets answers UNSTABLE_OFFSET_COMMIT for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.coordinator.records import OffsetCommitValue

#: {group: {topic: {partition: OffsetAndMetadata}}}
GroupOffsets = dict[str, dict[str, dict[int, "OffsetAndMetadata"]]]


@dataclass
class OffsetAndMetadata:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1
    #: offset of the record in __consumer_offsets (-1 before it is written)
    record_offset: int = -1

    @classmethod
    def from_value(cls, v: OffsetCommitValue, record_offset: int = -1) -> OffsetAndMetadata:
        return cls(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp,
                   record_offset)

    def to_value(self) -> OffsetCommitValue:
        return OffsetCommitValue(self.offset, self.metadata, self.commit_timestamp,
                                 self.leader_epoch, self.expire_timestamp)

    def is_expired(self, now: int, base_timestamp: int, retention_ms: int) -> bool:
        """Kafka's OffsetExpirationConditionImpl."""
        if self.expire_timestamp >= 0:
            return now >= self.expire_timestamp
        return now - base_timestamp >= retention_ms


def _put(store: GroupOffsets, group: str, topic: str, partition: int,
         value: OffsetAndMetadata) -> None:
    store.setdefault(group, {}).setdefault(topic, {})[partition] = value


def _remove(store: GroupOffsets, group: str, topic: str, partition: int) -> bool:
    topics = store.get(group)
    if topics is None or partition not in topics.get(topic, {}):
        return False
    del topics[topic][partition]
    if not topics[topic]:
        del topics[topic]
    if not topics:
        del store[group]
    return True


class OffsetStore:
    def __init__(self) -> None:
        self.offsets: GroupOffsets = {}
        #: producer id -> offsets committed in its open transaction
        self.pending: dict[int, GroupOffsets] = {}
        #: group -> producer ids with pending offsets for it
        self.open_transactions: dict[str, set[int]] = {}

    # -- replay --------------------------------------------------------------------------------
    def replay(self, group: str, topic: str, partition: int, value: OffsetCommitValue | None,
               *, producer_id: int = -1, record_offset: int = -1) -> None:
        if value is not None:
            oam = OffsetAndMetadata.from_value(value, record_offset)
            if producer_id < 0:
                _put(self.offsets, group, topic, partition, oam)
            else:
                _put(self.pending.setdefault(producer_id, {}), group, topic, partition, oam)
                self.open_transactions.setdefault(group, set()).add(producer_id)
            return
        _remove(self.offsets, group, topic, partition)
        for pid in self.open_transactions.get(group, ()):
            _remove(self.pending.get(pid, {}), group, topic, partition)

    def replay_end_transaction(self, producer_id: int, committed: bool) -> None:
        """A transaction marker: move the producer's pending offsets to the main store (commit)
        or drop them (abort)."""
        offsets = self.pending.pop(producer_id, None)
        if not offsets:
            return
        for group, topics in offsets.items():
            pids = self.open_transactions.get(group)
            if pids is not None:
                pids.discard(producer_id)
                if not pids:
                    del self.open_transactions[group]
            if not committed:
                continue
            for topic, partitions in topics.items():
                for partition, oam in partitions.items():
                    current = self.get(group, topic, partition)
                    # a later non-transactional commit wins over an older transactional one
                    if current is None or current.record_offset < oam.record_offset:
                        _put(self.offsets, group, topic, partition, oam)

    # -- queries -------------------------------------------------------------------------------
    def get(self, group: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        return self.offsets.get(group, {}).get(topic, {}).get(partition)

    def group_offsets(self, group: str) -> dict[str, dict[int, OffsetAndMetadata]]:
        return self.offsets.get(group, {})

    def has_offsets(self, group: str) -> bool:
        return group in self.offsets

    def has_pending(self, group: str, topic: str, partition: int) -> bool:
        for pid in self.open_transactions.get(group, ()):
            if partition in self.pending.get(pid, {}).get(group, {}).get(topic, {}):
                return True
        return False

    def has_open_transactions(self, group: str) -> bool:
        return bool(self.open_transactions.get(group))

    def partitions_to_delete(self, group: str) -> list[tuple[str, int]]:
        """Every partition with a committed or pending offset for the group (DeleteGroups)."""
        out = [(t, p) for t, parts in self.group_offsets(group).items() for p in parts]
        seen = set(out)
        for pid in self.open_transactions.get(group, ()):
            for topic, parts in self.pending.get(pid, {}).get(group, {}).items():
                for p in parts:
                    if (topic, p) not in seen:
                        seen.add((topic, p))
                        out.append((topic, p))
        return out

    def groups_with_topic(self, topic: str) -> list[tuple[str, int]]:
        """(group, partition) pairs holding offsets for ``topic`` (topic deletion cleanup)."""
        return [(g, p) for g, topics in self.offsets.items() for p in topics.get(topic, {})]
