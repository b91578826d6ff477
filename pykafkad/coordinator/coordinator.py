"""The group coordinator: classic groups and committed offsets over __consumer_offsets.

Synchronous, with an injected clock (Kafka's GroupCoordinatorShard): every operation runs to
completion on the caller's thread, writes its records through ``storage`` before answering,
and parks JoinGroup/SyncGroup answers as ``Pending`` values that the timers or other members'
requests complete.  ``pykafkad.coordinator.runtime`` is the thin trio layer on top.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pykafkad.coordinator import migration
from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.consumer_group.manager import ConsumerGroupManager, ConsumerGroupSettings
from pykafkad.coordinator.consumer_group.records import TYPES as CONSUMER_GROUP_RECORD_TYPES
from pykafkad.coordinator.consumer_group.records import record_type
from pykafkad.coordinator.group import (
    ClassicGroup,
    GroupState,
    JoinResult,
    Member,
    Pending,
    SyncResult,
)
from pykafkad.coordinator.membership import GroupMembership, JoinRequest, SyncRequest
from pykafkad.coordinator.offsets import OffsetAndMetadata, OffsetStore
from pykafkad.coordinator.rebalance import append_error
from pykafkad.coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    Record,
    UnknownRecordKey,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    group_metadata_tombstone,
    offset_commit_record,
    offset_commit_tombstone,
)
from pykafkad.coordinator.storage import CoordinatorStorage, StoredRecord
from pykafkad.coordinator.streams_group import records as streams_records
from pykafkad.coordinator.streams_group.coordinator import StreamsConfig, StreamsGroups
from pykafkad.coordinator.timer import Timer
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.coordinator")

GROUP_TYPE_CLASSIC = "classic"
_CLEANUP_KEY = "group-metadata-expiration"


@dataclass
class CommitPartition:
    topic: str
    partition: int
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    #: OffsetCommit v1 carries the commit time; -1 means now
    commit_timestamp: int = -1


@dataclass
class CommitRequest:
    group_id: str
    partitions: list[CommitPartition]
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
    #: OffsetCommit v2-v4; -1 keeps the broker's offsets.retention.minutes
    retention_time_ms: int = -1
    api_version: int = 9


@dataclass
class FetchedOffset:
    partition: int
    offset: int = -1
    leader_epoch: int = -1
    metadata: str = ""
    error: int = ErrorCode.NONE


@dataclass
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = GROUP_TYPE_CLASSIC


@dataclass
class DescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass
class DescribedGroup:
    group_id: str
    state: str
    protocol_type: str = ""
    protocol_data: str = ""
    members: list[DescribedMember] = field(default_factory=list)
    error: int = ErrorCode.NONE
    #: DescribeGroups v6+'s message for a group of another kind
    error_message: str | None = None


#: record type -> ``fn(coordinator, key, value)`` for the records of the other group kinds
#: (registered by their packages), replayed into state they keep on this coordinator
RECORD_REPLAYERS: dict[int, Callable] = {}


class GroupCoordinator:
    def __init__(
        self,
        config: GroupCoordinatorConfig,
        storage: CoordinatorStorage,
        clock: Callable[[], int],
    ):
        self.config = config
        self.storage = storage
        self.clock = clock
        self.timer = Timer(clock)
        self.groups: dict[str, ClassicGroup] = {}
        self.offsets = OffsetStore()
        self.membership = GroupMembership(config, self.timer, self.groups, self._write_group)
        #: KIP-848 consumer groups (same group-id namespace as the classic groups)
        self.consumer_groups = ConsumerGroupManager(ConsumerGroupSettings(), self.timer, clock)
        self.consumer_groups.classic_group_state = self._classic_group_state
        self.consumer_groups.drop_empty_classic_group = self._drop_empty_classic_group
        self.consumer_groups.write = self._write_group
        self.consumer_groups.upgrade_classic_group = lambda gid: migration.upgrade(self, gid)
        self.consumer_groups.downgrade_group = lambda g, m: migration.downgrade(self, g, m)
        self.consumer_groups.downgrade_replaced = lambda g: migration.convert_to_classic(
            self, g, None)
        self.consumer_groups.classic_max_size = config.max_group_size
        self.loaded = False
        #: __consumer_offsets partitions whose load failed: their groups answer NOT_COORDINATOR
        #: (Kafka's failed coordinator shard) instead of looking empty
        self.failed_partitions: set[int] = set()
        #: on a KRaft broker, the __consumer_offsets partitions this broker leads and loaded
        #: (a group of another partition answers NOT_COORDINATOR); None: all (single node)
        self.owned_partitions: set[int] | None = None
        #: __consumer_offsets partitions led here whose load is under way: their groups
        #: answer COORDINATOR_LOAD_IN_PROGRESS (Kafka's loading coordinator shard)
        self.loading_partitions: set[int] = set()
        #: streams groups (KIP-1071) share the group-id namespace, the timer and the offsets
        self.streams = StreamsGroups(StreamsConfig(), self.timer, clock, lambda _topic: None)
        self.streams.write = self._write_group

    # -- storage -------------------------------------------------------------------------------
    def _write_group(self, group_id: str, records: list[Record]) -> None:
        self.storage.append(group_id, records)

    def _classic_group_state(self, group_id: str) -> str | None:
        group = self.groups.get(group_id)
        return None if group is None else group.state.value

    def _drop_empty_classic_group(self, group_id: str) -> None:
        """An empty classic group becomes a consumer group (its offsets stay)."""
        self._write_and_replay(group_id, [group_metadata_tombstone(group_id)])

    def _write_and_replay(self, group_id: str, records: list[Record]) -> None:
        if not records:
            return
        base = self.storage.append(group_id, records)
        for i, (key, value) in enumerate(records):
            self._replay(StoredRecord(base + i, -1, key, value), live=True)

    def load(self) -> None:
        """Replays __consumer_offsets (Kafka's partition load), then starts member sessions and
        the offset expiration cycle."""
        for partition, reader in self.storage.read_partitions():
            self._load_partition(partition, reader)
        self._after_load()

    def _load_partition(self, partition: int, reader) -> None:
        try:
            records = list(reader)
        except Exception as e:  # noqa: BLE001 - one bad partition must not stop the broker
            self.failed_partitions.add(partition)
            log.error("Failed to load metadata from __consumer_offsets-%d: %s; its groups "
                      "are unavailable", partition, e)
            return
        for rec in records:
            try:
                self._replay(rec, live=False)
            except Exception as e:  # noqa: BLE001 - one bad record must not stop the broker
                log.warning("skipping unreadable __consumer_offsets record at offset %d: %r",
                            rec.offset, e)

    def load_partition(self, partition: int, reader) -> None:
        """A KRaft broker became leader of __consumer_offsets-``partition``: its groups and
        offsets are replayed and served from here (Kafka's scheduleLoadGroupAndOffsets)."""
        self.begin_load(partition)
        self.finish_load(partition, reader)

    def begin_load(self, partition: int) -> None:
        """The partition's load starts (its records are read off the request loop): until
        ``finish_load`` its groups answer COORDINATOR_LOAD_IN_PROGRESS."""
        if self.owned_partitions is None:
            self.owned_partitions = set()
        self.owned_partitions.discard(partition)
        self.failed_partitions.discard(partition)
        self._drop_partition_state(partition)
        self.loading_partitions.add(partition)

    def finish_load(self, partition: int, records) -> None:
        """Replays the partition's records (read by then) and serves its groups from here."""
        self.loading_partitions.discard(partition)
        self._load_partition(partition, records)
        if partition not in self.failed_partitions:
            self.owned_partitions.add(partition)
        self._after_load()

    def fail_load(self, partition: int, error: Exception) -> None:
        """Reading the partition failed: its groups answer NOT_COORDINATOR."""
        self.loading_partitions.discard(partition)
        self.failed_partitions.add(partition)
        log.error("Failed to load metadata from __consumer_offsets-%d: %s; its groups "
                  "are unavailable", partition, error)

    def unload_partition(self, partition: int) -> None:
        """The leadership of __consumer_offsets-``partition`` went elsewhere: its groups are
        forgotten here (their members find the new coordinator on NOT_COORDINATOR)."""
        if self.owned_partitions is None:
            self.owned_partitions = set()
        self.owned_partitions.discard(partition)
        self.loading_partitions.discard(partition)
        self._drop_partition_state(partition)

    def _drop_partition_state(self, partition: int) -> None:
        for group_id in [g for g in self.groups if self.storage.partition_for(g) == partition]:
            self.groups.pop(group_id, None)
        self.streams.drop(g for g in self.streams.group_ids()
                          if self.storage.partition_for(g) == partition)
        for group_id in [g for g in self.consumer_groups.groups
                         if self.storage.partition_for(g) == partition]:
            self.consumer_groups.groups.pop(group_id, None)
        for group_id in [g for g in self.offsets.offsets
                         if self.storage.partition_for(g) == partition]:
            self.offsets.offsets.pop(group_id, None)
        other_kinds = getattr(self, "share_groups", {})  # replayed by RECORD_REPLAYERS
        for group_id in [g for g in other_kinds if self.storage.partition_for(g) == partition]:
            other_kinds.pop(group_id, None)

    def _after_load(self) -> None:
        self.streams.finish_load()
        for group_id in self.streams.group_ids():  # offsets replayed before the group's records
            classic = self.groups.get(group_id)
            if classic is not None and classic.is_empty:
                del self.groups[group_id]
        self.membership.on_loaded()
        self.consumer_groups.on_loaded()
        self.timer.schedule(_CLEANUP_KEY, self.config.offsets_retention_check_interval_ms,
                            self._cleanup_cycle)
        self.loaded = True
        if self.groups:
            log.info("loaded %d groups and the offsets of %d groups", len(self.groups),
                     len(self.offsets.offsets))

    def _replay(self, rec: StoredRecord, *, live: bool) -> None:
        if rec.control is not None:
            self.offsets.replay_end_transaction(rec.producer_id, rec.control)
            return
        if rec.key is None:
            return
        if len(rec.key) >= 2 and streams_records.record_type(rec.key) in streams_records.RECORD_TYPES:
            if not live:
                self.streams.replay(streams_records.decode_key(rec.key)[1], rec.key, rec.value)
            return
        if record_type(rec.key) in CONSUMER_GROUP_RECORD_TYPES:
            self.consumer_groups.replay(rec.key, rec.value)
            return
        try:
            key = decode_key(rec.key)
        except UnknownRecordKey as e:
            replay = RECORD_REPLAYERS.get(int.from_bytes(rec.key[:2], "big"))
            if replay is not None:  # another group kind's record (share groups ...)
                replay(self, rec.key, rec.value)
                return
            log.warning("skipping __consumer_offsets record at offset %d: %s", rec.offset, e)
            return
        if isinstance(key, OffsetCommitKey):
            value = None if rec.value is None else decode_offset_commit_value(rec.value)
            if value is not None and key.group not in self.groups \
                    and key.group not in self.streams.groups \
                    and key.group not in self.streams.loading \
                    and key.group not in self.consumer_groups.groups:
                # offsets without membership imply a "simple" group (assign() + commit)
                self.membership.get_or_create(key.group)
            self.offsets.replay(key.group, key.topic, key.partition, value,
                                producer_id=rec.producer_id, record_offset=rec.offset)
        elif isinstance(key, GroupMetadataKey):
            if rec.value is None:
                self.groups.pop(key.group, None)
            elif not live:
                self._load_group(key.group, decode_group_metadata_value(rec.value))

    def _load_group(self, group_id: str, v: GroupMetadataValue) -> None:
        group = ClassicGroup(
            group_id, self.clock, GroupState.STABLE if v.members else GroupState.EMPTY,
            generation_id=v.generation, protocol_type=v.protocol_type or None,
            protocol_name=v.protocol, leader_id=v.leader,
            state_timestamp=None if v.current_state_timestamp == -1 else v.current_state_timestamp)
        for m in v.members:
            rebalance_timeout = m.session_timeout if m.rebalance_timeout == -1 else m.rebalance_timeout
            group.add(Member(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                             rebalance_timeout, m.session_timeout, v.protocol_type,
                             [(v.protocol or "", m.subscription)], m.assignment))
        group.subscribed_topics = group.compute_subscribed_topics()
        self.groups[group_id] = group

    def unload(self) -> None:
        self.membership.unload()
        self.consumer_groups.unload()
        self.timer.cancel_all()

    # -- membership ----------------------------------------------------------------------------
    def join_group(self, req: JoinRequest) -> Pending[JoinResult]:
        streams = self.streams.get(req.group_id)
        if streams is not None:
            if streams.members:  # Kafka: a live streams group refuses classic members
                return Pending.completed(JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                                    member_id=""))
            self.streams.delete(req.group_id)  # an empty one becomes a classic group
        consumer_group = self.consumer_groups.groups.get(req.group_id)
        if consumer_group is not None:
            if consumer_group.members:
                # a classic member of a consumer group (online migration)
                if not (self.config.min_session_timeout_ms <= req.session_timeout_ms
                        <= self.config.max_session_timeout_ms):
                    return Pending.completed(JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT,
                                                        member_id=req.member_id))
                return Pending.completed(self.consumer_groups.classic_join(
                    consumer_group, req, req.api_version))
            self.consumer_groups.delete_group(req.group_id)  # an empty one becomes classic
        return self.membership.join_group(req)

    def sync_group(self, req: SyncRequest) -> Pending[SyncResult]:
        consumer_group = self.consumer_groups.groups.get(req.group_id)
        if consumer_group is not None:
            return Pending.completed(self.consumer_groups.classic_sync(consumer_group, req))
        return self.membership.sync_group(req)

    def is_unavailable(self, group_id: str) -> bool:
        """Whether the group's __consumer_offsets partition is not served here (not led, not
        loaded yet, or failed to load)."""
        return self.unavailable_error(group_id) != ErrorCode.NONE

    def unavailable_error(self, group_id: str) -> int:
        """NONE when the group is served here; else COORDINATOR_LOAD_IN_PROGRESS while its
        __consumer_offsets partition loads, NOT_COORDINATOR otherwise."""
        failed, owned = self.failed_partitions, self.owned_partitions
        if not failed and owned is None and not self.loading_partitions:
            return ErrorCode.NONE
        partition = self.storage.partition_for(group_id)
        if partition in self.loading_partitions:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if partition in failed or (owned is not None and partition not in owned):
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE

    def _check_available(self, group_id: str) -> None:
        code = self.unavailable_error(group_id)
        if code:
            raise KafkaError(code)

    def heartbeat(self, group_id: str, member_id: str, instance_id: str | None,
                  generation_id: int) -> int:
        code = self.unavailable_error(group_id)
        if code:
            return code
        consumer_group = self.consumer_groups.groups.get(group_id)
        if consumer_group is not None:
            return self.consumer_groups.classic_heartbeat(consumer_group, member_id, instance_id,
                                                          generation_id)
        return self.membership.heartbeat(group_id, member_id, instance_id, generation_id)

    def leave_group(self, group_id: str, members: list[tuple[str, str | None, str | None]]):
        code = self.unavailable_error(group_id)
        if code:
            return code, []
        consumer_group = self.consumer_groups.groups.get(group_id)
        if consumer_group is not None:
            return self.consumer_groups.classic_leave(consumer_group, members)
        return self.membership.leave_group(group_id, members)

    # -- offsets -------------------------------------------------------------------------------
    def commit_offsets(self, req: CommitRequest) -> list[tuple[CommitPartition, int]]:
        """Returns each partition with its error; raises KafkaError when the whole request is
        refused (its code then applies to every partition)."""
        self._check_available(req.group_id)
        group = None
        if req.group_id in self.streams.groups:
            self.streams.validate_offset_commit(req.group_id, req.member_id, req.generation_id,
                                                req.api_version)
        elif req.group_id in self.consumer_groups.groups:
            self.consumer_groups.validate_commit(req.group_id, req.member_id, req.generation_id,
                                                 req.api_version, transactional=False)
        else:
            group = self._validate_commit(req, transactional=False)
        if group is not None and group.is_in(GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            self.membership.reschedule_heartbeat(group, req.member_id)
        results, records = self._commit_records(req)
        try:
            self._write_and_replay(req.group_id, records)
        except KafkaError as e:
            raise KafkaError(append_error(e.code), e.message) from None
        return results

    def commit_transactional_offsets(
        self, req: CommitRequest, producer_id: int, producer_epoch: int
    ) -> list[tuple[CommitPartition, int]]:
        """TxnOffsetCommit (after the transaction coordinator checked the producer): the offsets
        stay pending until the transaction's marker reaches the group's partition."""
        self._check_available(req.group_id)
        if req.group_id in self.streams.groups:
            self.streams.validate_offset_commit(req.group_id, req.member_id, req.generation_id,
                                                req.api_version, transactional=True)
        elif req.group_id in self.consumer_groups.groups:
            self.consumer_groups.validate_commit(req.group_id, req.member_id, req.generation_id,
                                                 req.api_version, transactional=True)
        else:
            self._validate_commit(req, transactional=True)
        results, records = self._commit_records(req)
        if not records:
            return results
        try:
            base = self.storage.append(req.group_id, records, producer_id=producer_id,
                                       producer_epoch=producer_epoch, transactional=True)
        except KafkaError as e:
            raise KafkaError(append_error(e.code), e.message) from None
        for i, (key, value) in enumerate(records):
            self._replay(StoredRecord(base + i, producer_id, key, value), live=True)
        return results

    def _commit_records(self, req: CommitRequest):
        now = self.clock()
        expire = -1 if req.retention_time_ms == -1 else now + req.retention_time_ms
        results: list[tuple[CommitPartition, int]] = []
        records: list[Record] = []
        for p in req.partitions:
            if p.metadata is not None and len(p.metadata) > self.config.offset_metadata_max_bytes:
                results.append((p, ErrorCode.OFFSET_METADATA_TOO_LARGE))
                continue
            results.append((p, ErrorCode.NONE))
            oam = OffsetAndMetadata(
                p.offset, p.leader_epoch, p.metadata or "",
                now if p.commit_timestamp == -1 else p.commit_timestamp, expire)
            records.append(offset_commit_record(req.group_id, p.topic, p.partition, oam.to_value()))
        return results, records

    def _validate_commit(self, req: CommitRequest, *, transactional: bool) -> ClassicGroup:
        """Kafka's ClassicGroup.validateOffsetCommit (and the simple-group rule before it)."""
        group = self.groups.get(req.group_id)
        if group is None:
            if req.generation_id >= 0:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND
                                 if req.api_version >= 9 and not transactional
                                 else ErrorCode.ILLEGAL_GENERATION)
            # admin clients and assign()-only consumers commit into a "simple" group
            return self.membership.get_or_create(req.group_id)
        if group.is_in(GroupState.DEAD):
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if req.generation_id < 0 and group.is_empty:
            return group
        if req.generation_id >= 0 or req.member_id or req.group_instance_id is not None:
            group.validate_member(req.member_id, req.group_instance_id)
            if req.generation_id != group.generation_id:
                raise KafkaError(ErrorCode.ILLEGAL_GENERATION)
        elif not transactional and not group.is_empty:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
        if not transactional and group.is_in(GroupState.COMPLETING_REBALANCE):
            raise KafkaError(ErrorCode.REBALANCE_IN_PROGRESS)
        return group

    def validate_offset_fetch(self, group_id: str, member_id: str | None,
                              member_epoch: int) -> None:
        """OffsetFetch v9+ names the member: a streams group checks it (classic groups do
        not); raises KafkaError."""
        if group_id in self.streams.groups and member_id is not None and member_epoch >= 0:
            self.streams.validate_offset_fetch(group_id, member_id, member_epoch)

    def fetch_offsets(
        self, group_id: str, topics: list[tuple[str, list[int]]] | None, require_stable: bool
    ) -> list[tuple[str, list[FetchedOffset]]]:
        """``topics`` None: every committed offset of the group.  A group that does not exist
        has no offsets (no error), as in Kafka. Raises KafkaError(NOT_COORDINATOR) when the
        group's partition failed to load."""
        self._check_available(group_id)
        group = self.groups.get(group_id)
        exists = (group is not None and not group.is_in(GroupState.DEAD)) \
            or group_id in self.streams.groups or group_id in self.consumer_groups.groups
        stored = self.offsets.group_offsets(group_id) if exists else {}
        if topics is None:
            topics = [(t, sorted(parts)) for t, parts in stored.items()]
        out = []
        for topic, partitions in topics:
            answers = []
            for p in partitions:
                if require_stable and self.offsets.has_pending(group_id, topic, p):
                    answers.append(FetchedOffset(p, error=ErrorCode.UNSTABLE_OFFSET_COMMIT))
                    continue
                oam = stored.get(topic, {}).get(p)
                if oam is None:
                    answers.append(FetchedOffset(p))
                else:
                    answers.append(FetchedOffset(p, oam.offset, oam.leader_epoch, oam.metadata))
            out.append((topic, answers))
        return out

    def delete_offsets(
        self, group_id: str, topics: list[tuple[str, list[int]]]
    ) -> list[tuple[str, list[tuple[int, int]]]]:
        """OffsetDelete; raises KafkaError for a group-level error."""
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_GROUP_ID)
        if group_id in self.streams.groups:
            return self._delete_streams_offsets(group_id, topics)
        group = self.groups.get(group_id)
        consumer = self.consumer_groups
        if group_id in consumer.groups:
            subscribed = lambda topic: consumer.is_subscribed_to(group_id, topic)  # noqa: E731
        else:
            if group is None or group.is_in(GroupState.DEAD):
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND)
            if not group.is_empty and not group.uses_consumer_protocol:
                raise KafkaError(ErrorCode.NON_EMPTY_GROUP)
            subscribed = group.is_subscribed_to
        out = []
        records: list[Record] = []
        for topic, partitions in topics:
            if subscribed(topic):
                out.append((topic, [(p, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC) for p in partitions]))
                continue
            out.append((topic, [(p, ErrorCode.NONE) for p in partitions]))
            for p in partitions:
                if (self.offsets.get(group_id, topic, p) is not None
                        or self.offsets.has_pending(group_id, topic, p)):
                    records.append(offset_commit_tombstone(group_id, topic, p))
        try:
            self._write_and_replay(group_id, records)
        except KafkaError as e:
            raise KafkaError(append_error(e.code), e.message) from None
        return out

    # -- admin ---------------------------------------------------------------------------------
    def list_groups(self, states: Iterable[str] = (), types: Iterable[str] = ()) -> list[ListedGroup]:
        wanted_states = {s.strip().lower() for s in states}
        wanted_types = {t.strip().lower() for t in types}
        out = []
        for group in self.groups.values():
            if wanted_states and group.state.value.lower() not in wanted_states:
                continue
            if wanted_types and GROUP_TYPE_CLASSIC not in wanted_types:
                continue
            out.append(ListedGroup(group.group_id, group.protocol_type or "", group.state.value))
        out += [ListedGroup(*g) for g in self.streams.list_groups(states, types)]
        for gid, protocol_type, state, group_type in self.consumer_groups.list_groups(states, types):
            out.append(ListedGroup(gid, protocol_type, state, group_type))
        return out

    def describe_groups(self, group_ids: Iterable[str]) -> list[DescribedGroup]:
        out = []
        for group_id in group_ids:
            code = self.unavailable_error(group_id)
            if code:
                out.append(DescribedGroup(group_id, GroupState.DEAD.value, error=code))
                continue
            group = self.groups.get(group_id)
            if group is None and group_id in self.consumer_groups.groups:
                out.append(DescribedGroup(group_id, GroupState.DEAD.value,
                                          error=ErrorCode.GROUP_ID_NOT_FOUND,
                                          error_message=f"Group {group_id} is not a classic group."))
                continue
            if group is None:
                out.append(DescribedGroup(
                    group_id, GroupState.DEAD.value,
                    error_message=f"Group {group_id} is not a classic group."
                    if group_id in self.streams.groups else None))
                continue
            stable = group.is_in(GroupState.STABLE) and group.protocol_name is not None
            members = [
                DescribedMember(
                    m.member_id, m.group_instance_id, m.client_id, m.client_host,
                    m.metadata(group.protocol_name) if stable else b"",
                    m.assignment if stable else b"")
                for m in group.members.values()
            ]
            out.append(DescribedGroup(
                group_id, group.state.value, group.protocol_type or "",
                group.protocol_name if stable else "", members))
        return out

    def delete_groups(self, group_ids: Iterable[str]) -> list[tuple[str, int]]:
        out = []
        for group_id in group_ids:
            code = self.unavailable_error(group_id)
            if code:
                out.append((group_id, code))
                continue
            streams = self.streams.get(group_id)
            if streams is not None:
                out.append((group_id, self._delete_streams_group(group_id)))
                continue
            group = self.groups.get(group_id)
            if group_id in self.consumer_groups.groups:
                error = self.consumer_groups.delete_group(group_id)
                if error:
                    out.append((group_id, error))
                    continue
            elif group is None or group.is_in(GroupState.DEAD):
                out.append((group_id, ErrorCode.GROUP_ID_NOT_FOUND))
                continue
            elif not group.is_empty:
                out.append((group_id, ErrorCode.NON_EMPTY_GROUP))
                continue
            records = [offset_commit_tombstone(group_id, t, p)
                       for t, p in self.offsets.partitions_to_delete(group_id)]
            if group is not None:
                records.append(group_metadata_tombstone(group_id))
            try:
                self._write_and_replay(group_id, records)
            except KafkaError as e:
                out.append((group_id, append_error(e.code)))
                continue
            log.info("deleted group %s and %d offsets", group_id, len(records) - 1)
            out.append((group_id, ErrorCode.NONE))
        return out

    def _delete_streams_offsets(self, group_id: str, topics):
        """OffsetDelete on a streams group: a topic its live members read (source or
        repartition source) answers GROUP_SUBSCRIBED_TO_TOPIC, as in Kafka 4.4."""
        out = []
        records: list[Record] = []
        for topic, partitions in topics:
            if self.streams.is_subscribed_to(group_id, topic):
                out.append((topic, [(p, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC) for p in partitions]))
                continue
            out.append((topic, [(p, ErrorCode.NONE) for p in partitions]))
            records += [offset_commit_tombstone(group_id, topic, p) for p in partitions
                        if self.offsets.get(group_id, topic, p) is not None]
        try:
            self._write_and_replay(group_id, records)
        except KafkaError as e:
            raise KafkaError(append_error(e.code), e.message) from None
        return out

    def _delete_streams_group(self, group_id: str) -> int:
        if self.streams.groups[group_id].members:
            return ErrorCode.NON_EMPTY_GROUP
        records = [offset_commit_tombstone(group_id, t, p)
                   for t, p in self.offsets.partitions_to_delete(group_id)]
        try:
            self._write_and_replay(group_id, records)
        except KafkaError as e:
            return append_error(e.code)
        self.streams.delete(group_id)
        return ErrorCode.NONE

    def on_topic_deleted(self, topic: str) -> None:
        """Kafka's onPartitionsDeleted: committed offsets of a deleted topic are tombstoned."""
        by_group: dict[str, list[Record]] = {}
        for group_id, p in self.offsets.groups_with_topic(topic):
            by_group.setdefault(group_id, []).append(offset_commit_tombstone(group_id, topic, p))
        for group_id, records in by_group.items():
            try:
                self._write_and_replay(group_id, records)
            except KafkaError as e:
                log.warning("could not delete offsets of %s for group %s: %s", topic, group_id, e)

    # -- expiration ----------------------------------------------------------------------------
    def _cleanup_cycle(self) -> None:
        try:
            self.cleanup_group_metadata()
        finally:
            self.timer.schedule(_CLEANUP_KEY, self.config.offsets_retention_check_interval_ms,
                                self._cleanup_cycle)

    def cleanup_group_metadata(self) -> int:
        """Expires offsets past offsets.retention.minutes and deletes empty groups left without
        offsets (Kafka's cleanupGroupMetadata).  Returns the number of tombstones written."""
        written = 0
        now = self.clock()
        for group_id in list(self.groups):
            group = self.groups.get(group_id)
            if group is None:
                continue
            records, all_expired = self._expired_offsets(group, now)
            if all_expired and group.is_empty:
                records.append(group_metadata_tombstone(group_id))
            try:
                self._write_and_replay(group_id, records)
            except KafkaError as e:
                log.warning("offset expiration of group %s failed: %s", group_id, e)
                continue
            written += len(records)
        return written

    def _expired_offsets(self, group: ClassicGroup, now: int) -> tuple[list[Record], bool]:
        gid = group.group_id
        stored = self.offsets.group_offsets(gid)
        if not stored:
            return [], True
        # Kafka's ClassicGroup.offsetExpirationCondition: an Empty group's offsets expire a
        # retention period after it became Empty; a Stable consumer group's offsets of topics
        # it no longer subscribes to, a retention period after their commit; simple groups'
        # offsets after their commit; nothing else expires.
        if group.protocol_type is None:
            base = None
        elif group.is_empty:
            base = group.state_timestamp
        elif group.uses_consumer_protocol and group.subscribed_topics is not None \
                and group.is_in(GroupState.STABLE):
            base = None
        else:
            return [], False
        records: list[Record] = []
        all_expired = True
        for topic, partitions in stored.items():
            if group.is_subscribed_to(topic):
                all_expired = False
                continue
            for p, oam in partitions.items():
                start = oam.commit_timestamp if base is None else base
                if oam.is_expired(now, start, self.config.offsets_retention_ms) and \
                        not self.offsets.has_pending(gid, topic, p):
                    records.append(offset_commit_tombstone(gid, topic, p))
                else:
                    all_expired = False
        return records, all_expired and not self.offsets.has_open_transactions(gid)
