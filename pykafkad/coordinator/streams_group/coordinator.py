"""The streams groups of one group coordinator (Kafka's GroupMetadataManager, streams part):
StreamsGroupHeartbeat, StreamsGroupDescribe, the member sessions, and the checks OffsetCommit
makes against a streams member's epoch.  Synchronous, on the classic coordinator's clock and
timer; the handler creates the internal topics this answers as missing."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pykafkad.coordinator.streams_group import persistence
from pykafkad.coordinator.streams_group import topology as topo
from pykafkad.coordinator.streams_group.assignor import AssignorMember, TaskSets, assign
from pykafkad.coordinator.streams_group.group import (
    UNREVOKED_TASKS,
    StreamsGroup,
    StreamsMember,
)
from pykafkad.coordinator.timer import Timer
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.coordinator.streams")

GROUP_TYPE_STREAMS = "streams"
PROTOCOL_TYPE = "streams"
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
#: Kafka's defaults for what a heartbeat answer carries
TASK_OFFSET_INTERVAL_MS = 60_000
ACCEPTABLE_RECOVERY_LAG = 10_000


@dataclass(frozen=True)
class StreamsConfig:
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    initial_rebalance_delay_ms: int = 3_000
    num_standby_replicas: int = 0

    @classmethod
    def from_broker(cls, config: Any) -> StreamsConfig:
        def get(key: str, default: int) -> int:
            try:
                value = config[key]
            except KeyError:
                return default
            return default if value is None else int(value)
        return cls(get("group.streams.session.timeout.ms", 45_000),
                   get("group.streams.heartbeat.interval.ms", 5_000),
                   get("group.streams.initial.rebalance.delay.ms", 3_000),
                   get("group.streams.num.standby.replicas", 0))


@dataclass
class HeartbeatResult:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int = 0
    statuses: list[tuple[int, str]] = field(default_factory=list)
    #: None: unchanged since the last answer
    tasks: TaskSets | None = None
    endpoint_epoch: int = 0
    #: (host, port) -> (active partitions, standby partitions) as {topic: [partitions]}
    endpoints: list | None = None
    #: internal topics the broker must create
    create_topics: list[topo.InternalTopic] = field(default_factory=list)


def _offsets(entries) -> dict:
    """A heartbeat's TaskOffsets or TaskEndOffsets: (subtopology, partition) -> offset sum."""
    return {(t.subtopology_id, t.partition): t.offset for t in entries}


class StreamsGroups:
    def __init__(self, config: StreamsConfig, timer: Timer, clock: Callable[[], int],
                 partitions_of: Callable[[str], int | None]):
        self.config = config
        self.timer = timer
        self.clock = clock
        self.partitions_of = partitions_of
        self.groups: dict[str, StreamsGroup] = {}
        #: writes a group's records to __consumer_offsets (set by the coordinator)
        self.write: Callable[[str, list], None] | None = None
        #: per group, the records last written (or replayed): the next write is the difference
        self.persisted: dict[str, dict[bytes, bytes]] = {}
        #: a group's config overrides (IncrementalAlterConfigs on the group: streams.*)
        self.group_config: Callable[[str], dict[str, str]] = lambda _group_id: {}
        #: per group, the records replayed so far by a partition load
        self.loading: dict[str, dict[bytes, bytes | None]] = {}

    def group_ids(self) -> list[str]:
        return list(self.groups)

    def get(self, group_id: str) -> StreamsGroup | None:
        return self.groups.get(group_id)

    def list_groups(self, states_filter=(), types_filter=()) -> list[tuple[str, str, str, str]]:
        states = {s.strip().lower() for s in states_filter}
        types = {t.strip().lower() for t in types_filter}
        if types and GROUP_TYPE_STREAMS not in types:
            return []
        return [(g.group_id, PROTOCOL_TYPE, g.state, GROUP_TYPE_STREAMS)
                for g in self.groups.values() if not states or g.state.lower() in states]

    def drop(self, group_ids) -> None:
        """Forgets groups without writing anything (their partition went elsewhere)."""
        for gid in list(group_ids):
            self.persisted.pop(gid, None)
            self.loading.pop(gid, None)
            group = self.groups.pop(gid, None)
            if group is not None:
                for mid in group.members:
                    self.timer.cancel(self._session_key(gid, mid))

    def delete(self, group_id: str) -> None:
        """Deletes an empty group: tombstones for every record it had."""
        old = self.persisted.get(group_id, {})
        if old and self.write is not None:
            self.write(group_id, [(k, None) for k in old])
        self.drop([group_id])

    def _setting(self, group_id: str, name: str) -> int:
        """A group's ``streams.<name>`` override, else the broker's ``group.streams.<name>``."""
        value = self.group_config(group_id).get(f"streams.{name}")
        if value is not None:
            return int(value)
        return getattr(self.config, name.replace(".", "_"))

    # -- records -------------------------------------------------------------------------------
    def _persist(self, group: StreamsGroup) -> None:
        if self.write is None:
            return
        new = persistence.snapshot(group)
        old = self.persisted.get(group.group_id, {})
        changes = [(k, v) for k, v in new.items() if old.get(k) != v]
        changes += [(k, None) for k in old if k not in new]
        if changes:
            self.write(group.group_id, changes)
        self.persisted[group.group_id] = new

    def replay(self, group_id: str, key: bytes, value: bytes | None) -> None:
        """A record read while loading a partition (rebuilt into groups by ``finish_load``)."""
        self.loading.setdefault(group_id, {})[key] = value

    def finish_load(self) -> None:
        created = self.clock() - self.config.initial_rebalance_delay_ms
        for gid, replayed in self.loading.items():
            records = {k: v for k, v in replayed.items() if v is not None}
            group = persistence.rebuild(gid, records, created) if records else None
            if group is None:
                self.groups.pop(gid, None)
                self.persisted.pop(gid, None)
                continue
            if group.topology is not None:
                group.configured = topo.configure(group.topology, self.partitions_of)
            self.groups[gid] = group
            self.persisted[gid] = records
            for m in group.members.values():
                self._schedule_session(group, m)
        self.loading.clear()

    # -- heartbeat -----------------------------------------------------------------------------
    def heartbeat(self, req, client_id: str, client_host: str) -> HeartbeatResult:
        """Raises KafkaError for a refused request (Kafka's error and message)."""
        result = self._heartbeat(req, client_id, client_host)
        group = self.groups.get(req.group_id)
        if group is not None:
            self._persist(group)
        return result

    def _heartbeat(self, req, client_id: str, client_host: str) -> HeartbeatResult:
        self._validate(req)
        group = self.groups.get(req.group_id)
        epoch = req.member_epoch
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            if group is None or req.member_id not in group.members:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {req.member_id} is not a member of group {req.group_id}.")
            member = group.members[req.member_id]
            if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and member.instance_id is not None:
                # a static member that will come back keeps its tasks until its session ends
                if member.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    member.previous_member_epoch = member.member_epoch
                member.member_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH
                self.timer.cancel(self._revocation_key(group.group_id, member.member_id))
                return HeartbeatResult(req.member_id, epoch)
            self._remove_member(group, req.member_id)
            return HeartbeatResult(req.member_id, epoch)
        bump = False  # one new group epoch for every change this heartbeat makes
        if epoch == 0 and req.user_endpoint is not None and any(
                self.partitions_of(t) is None for sub in req.topology.subtopologies
                for t in sub.source_topics):
            # Kafka 4.4 fails such a join with UNKNOWN_SERVER_ERROR and no message (its IQ
            # endpoint answer trips over the missing topic); a Streams client sees the same here
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)
        if epoch == 0:
            if group is not None and group.topology is not None and \
                    topo.Topology.from_request(req.topology) != group.topology:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 "Topology updates are not supported yet.")
            if group is None:
                group = StreamsGroup(req.group_id, self.clock())
                self.groups[req.group_id] = group
            member = group.members.get(req.member_id)
            if member is None and req.instance_id is not None:
                member = self._replace_static_member(group, req, client_id, client_host)
            if member is None:
                member = StreamsMember(req.member_id, client_id, client_host)
                group.members[req.member_id] = member
                bump = True
            full = True
        else:
            if group is None:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                                 f"Streams group {req.group_id} not found.")
            member = group.members.get(req.member_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {req.member_id} is not a member of group {req.group_id}.")
            if epoch > member.member_epoch or (
                    epoch < member.member_epoch and not self._previous_epoch_ok(member, req)):
                raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The streams group member has a smaller member epoch ({epoch})"
                                 f" than the one known by the group coordinator "
                                 f"({member.member_epoch}). The member must abandon all its "
                                 "partitions and rejoin." if epoch < member.member_epoch else
                                 f"The streams group member has a greater member epoch ({epoch})"
                                 f" than the one known by the group coordinator "
                                 f"({member.member_epoch}). The member must abandon all its "
                                 "partitions and rejoin.")
            full = False
        statuses: list[tuple[int, str]] = []
        if req.topology is not None:
            incoming = topo.Topology.from_request(req.topology)
            if group.topology is None or incoming.epoch > group.topology.epoch:
                if group.topology is not None:
                    bump = True
                group.topology = incoming
                group.configured = None
            member.topology_epoch = incoming.epoch
        if group.topology is not None and member.topology_epoch < group.topology.epoch:
            statuses.append((topo.STALE_TOPOLOGY,
                             f"The member's topology epoch {member.topology_epoch} is behind the "
                             f"group's topology epoch {group.topology.epoch}."))
        self._update_member(group, member, req)
        if req.shutdown_application:
            group.shutdown_requested = True
        self._schedule_session(group, member)
        create: list[topo.InternalTopic] = []
        if group.topology is not None:
            configured = topo.configure(group.topology, self.partitions_of)
            if group.configured is None or configured.task_counts != group.configured.task_counts:
                if group.configured is not None or configured.ready:
                    bump = True
            group.configured = configured
            statuses.extend(configured.statuses)
            create = configured.missing_internal_topics
        if bump:
            group.group_epoch += 1
        if group.created_ms + self._setting(group.group_id, "initial.rebalance.delay.ms") \
                > self.clock():
            statuses.insert(0, (topo.ASSIGNMENT_DELAYED,
                                "Assignment delayed due to the configured initial rebalance "
                                "delay."))
            if group.group_epoch > group.target_epoch:
                # members get the group's epoch with no tasks until the delay is over
                group.target = {mid: TaskSets() for mid in group.members}
                group.target_epoch = group.group_epoch
                group.delayed_assignment = True
        else:
            if group.delayed_assignment:
                group.delayed_assignment = False
                group.group_epoch += 1
            if group.group_epoch > group.target_epoch:
                self._compute_target(group)
        owned = self._owned(req)
        before = (member.member_epoch, member.assigned.copy())
        group.reconcile(member, owned)
        self._schedule_revocation(group, member)
        if (member.member_epoch, member.assigned) != before:
            group.endpoint_epoch += 1
        if group.shutdown_requested:
            statuses.append((topo.SHUTDOWN_APPLICATION,
                             "A KafkaStreams instance encountered a fatal error and requested a "
                             "shutdown for the entire application."))
        tasks = None
        if full or member.last_sent is None or member.last_sent != member.assigned:
            tasks = member.assigned.copy()
            member.last_sent = tasks
        endpoints = None
        if full or req.endpoint_information_epoch < group.endpoint_epoch:
            endpoints = self._endpoints(group)
        return HeartbeatResult(member.member_id, member.member_epoch,
                               self._setting(group.group_id, "heartbeat.interval.ms"),
                               statuses, tasks,
                               group.endpoint_epoch, endpoints, create)

    def _replace_static_member(self, group: StreamsGroup, req, client_id: str,
                               client_host: str) -> StreamsMember | None:
        """A new member id with a known instance id takes the place (epoch, tasks) of the
        static member that left with epoch -2; one still in the group refuses it."""
        old = next((m for m in group.members.values() if m.instance_id == req.instance_id),
                   None)
        if old is None:
            return None
        if old.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise KafkaError(ErrorCode.UNRELEASED_INSTANCE_ID,
                             f"Static member {req.member_id} with instance id {req.instance_id} "
                             f"cannot join the group because the instance id is owned by "
                             f"{old.member_id} member.")
        old_id = old.member_id
        for key in (self._session_key, self._revocation_key):
            self.timer.cancel(key(group.group_id, old_id))
        del group.members[old_id]
        old.member_id, old.client_id, old.client_host = req.member_id, client_id, client_host
        old.member_epoch, old.last_sent = old.previous_member_epoch, None
        group.members[req.member_id] = old
        if old_id in group.target:
            group.target[req.member_id] = group.target.pop(old_id)
        return old

    def _validate(self, req) -> None:
        """Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid (messages as Kafka 4.4's)."""
        def invalid(msg: str):
            raise KafkaError(ErrorCode.INVALID_REQUEST, msg)
        if not req.group_id:
            invalid("GroupId can't be empty.")
        if not req.member_id:
            invalid("MemberId can't be empty.")
        if req.instance_id == "":
            invalid("InstanceId can't be empty.")
        if req.rack_id == "":
            invalid("RackId can't be empty.")
        epoch = req.member_epoch
        if epoch == 0:
            if req.rebalance_timeout_ms == -1:
                invalid("RebalanceTimeoutMs must be provided in first request.")
            if req.topology is None:
                invalid("Topology must be non-null when (re-)joining.")
            for name, tasks in (("ActiveTasks", req.active_tasks),
                                ("StandbyTasks", req.standby_tasks),
                                ("WarmupTasks", req.warmup_tasks)):
                if tasks is None or tasks:
                    invalid(f"{name} must be empty when (re-)joining.")
            if any(sub.source_topic_regex for sub in req.topology.subtopologies):
                invalid("Regular expressions for source topics are not supported yet.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and req.instance_id is None:
            invalid("InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
        if epoch != 0 and req.topology is not None:
            invalid("Topology can only be provided when (re-)joining.")
        for offsets in (req.task_offsets, req.task_end_offsets):
            seen = set()
            for t in offsets or ():
                if (t.subtopology_id, t.partition) in seen:
                    invalid("Task offsets contain a duplicate entry for subtopology "
                            f"{t.subtopology_id} and partition {t.partition}.")
                seen.add((t.subtopology_id, t.partition))

    def _update_member(self, group: StreamsGroup, m: StreamsMember, req) -> None:
        if req.process_id is not None:
            m.process_id = req.process_id
        if req.instance_id is not None:
            m.instance_id = req.instance_id
        if req.rack_id is not None:
            m.rack_id = req.rack_id
        if req.rebalance_timeout_ms > 0:
            m.rebalance_timeout_ms = req.rebalance_timeout_ms
        if req.user_endpoint is not None:
            endpoint = (req.user_endpoint.host, req.user_endpoint.port)
            if endpoint != m.user_endpoint:
                m.user_endpoint = endpoint
                group.endpoint_epoch += 1
        if req.client_tags is not None:
            m.client_tags = {kv.key: kv.value for kv in req.client_tags}
        if req.task_offsets is not None:
            m.task_offsets = _offsets(req.task_offsets)
        if req.task_end_offsets is not None:
            m.task_end_offsets = _offsets(req.task_end_offsets)

    @staticmethod
    def _previous_epoch_ok(member: StreamsMember, req) -> bool:
        """Kafka accepts the previous epoch (its answer with the new one may have been lost)
        only from a member reporting all three task lists, each within what it is assigned."""
        if member.previous_member_epoch != req.member_epoch:
            return False
        if req.active_tasks is None or req.standby_tasks is None or req.warmup_tasks is None:
            return False
        owned = StreamsGroups._owned(req)
        return (owned.active <= member.assigned.active and owned.standby <= member.assigned.standby
                and owned.warmup <= member.assigned.warmup)

    @staticmethod
    def _owned(req) -> TaskSets | None:
        if req.active_tasks is None:
            return None

        def flat(tasks):
            return {(t.subtopology_id, p) for t in tasks or () for p in t.partitions}
        return TaskSets(flat(req.active_tasks), flat(req.standby_tasks), flat(req.warmup_tasks))

    def _compute_target(self, group: StreamsGroup) -> None:
        counts = group.configured.task_counts if group.configured and group.configured.ready \
            else {}
        members = [AssignorMember(m.member_id, m.process_id, m.assigned, m.task_offsets)
                   for m in group.members.values()]
        stateful = {sub.subtopology_id for sub in group.topology.subtopologies
                    if sub.changelog_topics} if group.topology else set()
        group.target = assign(members, counts,
                              self._setting(group.group_id, "num.standby.replicas"), stateful)
        group.target_epoch = group.group_epoch

    def _endpoints(self, group: StreamsGroup) -> list:
        """One entry per member with an endpoint: the source (and repartition source) topic
        partitions of its active tasks, then of its standby and warm-up tasks."""
        sources = group.configured.source_topics if group.configured else {}

        def partitions(tasks) -> dict[str, list[int]]:
            out: dict[str, list[int]] = {}
            for sub, p in sorted(tasks):
                for t in sources.get(sub, ()):
                    out.setdefault(t, []).append(p)
            return out
        return [(m.user_endpoint, partitions(m.assigned.active),
                 partitions(m.assigned.standby | m.assigned.warmup))
                for m in group.members.values() if m.user_endpoint is not None]

    # -- sessions ------------------------------------------------------------------------------
    @staticmethod
    def _session_key(group_id: str, member_id: str) -> str:
        return f"streams-session:{group_id}:{member_id}"

    def _schedule_session(self, group: StreamsGroup, m: StreamsMember) -> None:
        gid, mid = group.group_id, m.member_id
        self.timer.schedule(self._session_key(gid, mid),
                            self._setting(gid, "session.timeout.ms"),
                            lambda: self._expire(gid, mid))

    @staticmethod
    def _revocation_key(group_id: str, member_id: str) -> str:
        return f"streams-rebalance:{group_id}:{member_id}"

    def _schedule_revocation(self, group: StreamsGroup, m: StreamsMember) -> None:
        """A member revoking tasks has its rebalance timeout to finish, or it is fenced."""
        key = self._revocation_key(group.group_id, m.member_id)
        if m.state != UNREVOKED_TASKS:
            self.timer.cancel(key)
        elif not self.timer.is_scheduled(key):
            gid, mid = group.group_id, m.member_id
            self.timer.schedule(key, max(m.rebalance_timeout_ms, 0),
                                lambda: self._expire(gid, mid, "it did not revoke its tasks "
                                                     "within its rebalance timeout"))

    def _expire(self, group_id: str, member_id: str,
                why: str = "its session expired") -> None:
        group = self.groups.get(group_id)
        if group is not None and member_id in group.members:
            log.info("[GroupId %s] Member %s fenced from the group: %s.", group_id, member_id,
                     why)
            self._remove_member(group, member_id)
            self._persist(group)

    def _remove_member(self, group: StreamsGroup, member_id: str) -> None:
        self.timer.cancel(self._session_key(group.group_id, member_id))
        self.timer.cancel(self._revocation_key(group.group_id, member_id))
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        group.group_epoch += 1
        group.endpoint_epoch += 1
        if not group.members:
            group.shutdown_requested = False
            group.target, group.target_epoch = {}, group.group_epoch
        elif group.configured is not None and group.configured.ready:
            self._compute_target(group)

    # -- offsets -------------------------------------------------------------------------------
    def validate_offset_commit(self, group_id: str, member_id: str, member_epoch: int,
                               api_version: int, transactional: bool = False) -> None:
        """Kafka's StreamsGroup.validateOffsetCommit: an admin commit (epoch < 0) only into an
        empty group; otherwise the member must exist with exactly this epoch."""
        group = self.groups[group_id]
        if member_epoch < 0 and not group.members:
            return
        if not transactional and api_version < 9 and member_epoch >= 0:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION)
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
        if member_epoch > member.member_epoch:
            raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH)
        if member_epoch < member.member_epoch:
            raise KafkaError(ErrorCode.STALE_MEMBER_EPOCH)

    def validate_offset_fetch(self, group_id: str, member_id: str, member_epoch: int) -> None:
        """Kafka's StreamsGroup.validateOffsetFetch: a named member must exist and have this
        epoch (any other answers STALE_MEMBER_EPOCH)."""
        member = self.groups[group_id].members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
        if member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.STALE_MEMBER_EPOCH)

    def is_subscribed_to(self, group_id: str, topic: str) -> bool:
        group = self.groups.get(group_id)
        if group is None or group.topology is None or not group.members:
            return False
        return any(topic in s.source_topics or topic in
                   {r.name for r in s.repartition_source_topics}
                   for s in group.topology.subtopologies)
