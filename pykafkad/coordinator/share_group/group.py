"""Share-group membership on the group coordinator (ShareGroupHeartbeat, ShareGroupDescribe):
members join with a client-chosen member id at epoch 0, leave at epoch -1, and are fenced after
``share.session.timeout.ms`` without a heartbeat.  There is no revocation: a new target
assignment is handed out on each member's next heartbeat.

A partition is assigned only once its share state is initialized, as Kafka's group
coordinator does: a heartbeat that finds subscribed partitions without share state records
them as initializing (ShareGroupStatePartitionMetadata) and hands them back for
InitializeShareGroupState at the group epoch; once that succeeded they are recorded as
initialized and the group epoch is bumped, so the assignor hands them out.  The group epoch
also follows the subscribed topics' metadata hash (KIP-1101).

The assignment is Kafka's simple share assignor for a homogeneous subscription: partitions are
spread round robin over the members, and when there are more members than partitions each
partition goes to several members (so every member gets work).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from pykafkad.coordinator.metadata_hash import group_hash
from pykafkad.coordinator.share_group import group_records as gr
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.share")

EMPTY, STABLE, DEAD = "Empty", "Stable", "Dead"
#: Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET
UNINITIALIZED_START_OFFSET = -1
LEAVE_EPOCH = -1


@dataclass
class ShareMember:
    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None
    subscribed_topic_names: list[str]
    member_epoch: int = 0
    #: topic id -> partitions
    assignment: dict[bytes, list[int]] = field(default_factory=dict)
    last_heartbeat_ms: int = 0


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, dict[bytes, list[int]]] = field(default_factory=dict)
    #: what the target was computed from: topic name -> (topic id, partition count)
    subscribed_metadata: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    #: KIP-1101's hash of the subscribed topics, as of the last group epoch
    metadata_hash: int = 0
    #: topic id -> (name, partitions) whose share state is being initialized / is initialized
    initializing: gr.StateTopics = field(default_factory=dict)
    initialized: gr.StateTopics = field(default_factory=dict)
    #: topic id -> name of the topics whose share state is being deleted
    deleting: dict[bytes, str] = field(default_factory=dict)

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topic_names}


def new_group(group_id: str) -> ShareGroup:
    """A share group made by its first member or by AlterShareGroupOffsets: at epoch 1, as
    Kafka 4.4 makes it (its first ShareGroupMetadata is at epoch 2, and the state epoch of
    offsets altered before any member joined is 1; both seen on the reference broker)."""
    return ShareGroup(group_id, group_epoch=1, assignment_epoch=1)


def simple_assignment(members: list[str], partitions: list[tuple[bytes, int]]
                      ) -> dict[str, dict[bytes, list[int]]]:
    """Round robin of the partitions over the members (sorted, so every coordinator computes
    the same); with more members than partitions, partitions are shared."""
    out: dict[str, dict[bytes, list[int]]] = {m: {} for m in members}
    if not members or not partitions:
        return out
    n = max(len(members), len(partitions))
    for i in range(n):
        topic_id, p = partitions[i % len(partitions)]
        parts = out[members[i % len(members)]].setdefault(topic_id, [])
        if p not in parts:
            parts.append(p)
    for assignment in out.values():
        for parts in assignment.values():
            parts.sort()
    return out


@dataclass
class HeartbeatResult:
    error: int = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: dict[bytes, list[int]] | None = None
    #: share partitions (topic id, partition, start offset) to initialize now, at
    #: ``state_epoch``
    initialize: list[tuple[bytes, int, int]] = field(default_factory=list)
    state_epoch: int = 0


class ShareGroupCoordinator:
    """Every share group of this coordinator (in memory; see the README for what is not
    persisted yet)."""

    def __init__(self, clock: Callable[[], int], topic_lookup: Callable[[str], tuple[bytes, int] | None],
                 session_timeout_ms: Callable[[str], int], heartbeat_interval_ms: Callable[[str], int],
                 max_size: int = 200, groups: dict[str, ShareGroup] | None = None,
                 write: Callable[[str, list[gr.Record]], None] | None = None,
                 topic_hash: Callable[[str], int | None] | None = None):
        self.clock = clock
        self.topic_lookup = topic_lookup
        #: a topic's KIP-1101 hash (None for no such topic)
        self.topic_hash = topic_hash
        #: (group id, topic id, partition) whose InitializeShareGroupState this coordinator
        #: has sent and not yet seen answered (others still initializing are sent again)
        self._initializing: set[tuple[str, bytes, int]] = set()
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_size = max_size
        #: the groups (shared with the group coordinator, which replays their records)
        self.groups: dict[str, ShareGroup] = {} if groups is None else groups
        #: appends a group's records to __consumer_offsets (raises KafkaError)
        self.write = write
        self._pending: dict[str, list[gr.Record]] = {}

    def _record(self, group_id: str, record_type: int, member_id: str | None,
                value: bytes | None) -> None:
        self._pending.setdefault(group_id, []).append(
            (gr.key(record_type, group_id, member_id), value))

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        if self.write is not None:
            for group_id, records in pending.items():
                self.write(group_id, records)

    def _member_gone(self, group: ShareGroup, member_id: str) -> None:
        for record_type in (gr.CURRENT_MEMBER, gr.TARGET_MEMBER, gr.MEMBER_METADATA):
            self._record(group.group_id, record_type, member_id, None)

    def group_ids(self) -> list[str]:
        return list(self.groups)

    def expire_members(self) -> None:
        now = self.clock()
        for group in self.groups.values():
            timeout = self.session_timeout_ms(group.group_id)
            gone = [m for m in group.members.values() if now - m.last_heartbeat_ms > timeout]
            for m in gone:
                del group.members[m.member_id]
                self._member_gone(group, m.member_id)
            if gone:
                self._bump(group)
        try:
            self._flush()
        except KafkaError as e:  # the members are gone here; their tombstones come later
            log.warning("cannot write the share-group records of expired members: %s", e)

    def heartbeat(self, group_id: str, member_id: str, member_epoch: int, rack_id: str | None,
                  subscribed: list[str] | None, client_id: str, client_host: str) -> HeartbeatResult:
        if not group_id:
            return HeartbeatResult(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
        if not member_id:
            return HeartbeatResult(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        if member_epoch == 0 and not subscribed:
            return HeartbeatResult(ErrorCode.INVALID_REQUEST,
                                   "SubscribedTopicNames must be set in first request.")
        if member_epoch < LEAVE_EPOCH:
            return HeartbeatResult(ErrorCode.INVALID_REQUEST,
                                   f"MemberEpoch is {member_epoch}, but must be greater than or equal to -1.")
        self.expire_members()
        now = self.clock()
        group = self.groups.get(group_id)
        if member_epoch == LEAVE_EPOCH:
            if group is not None and group.members.pop(member_id, None) is not None:
                self._member_gone(group, member_id)
                self._bump(group)
                self._flush()
            return HeartbeatResult(member_id=member_id, member_epoch=LEAVE_EPOCH)
        if group is None:
            if member_epoch != 0:
                return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND,
                                       f"Group {group_id} not found.")
            group = self.groups[group_id] = new_group(group_id)
        member = group.members.get(member_id)
        if member is None:
            if member_epoch != 0:
                return HeartbeatResult(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {member_id} is not a member of group {group_id}.")
            if len(group.members) >= self.max_size:
                return HeartbeatResult(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The share group has reached its maximum capacity of {self.max_size} members.")
            member = group.members[member_id] = ShareMember(
                member_id, client_id, client_host, rack_id, sorted(set(subscribed or [])))
            self._record(group_id, gr.MEMBER_METADATA, member_id, gr.member_metadata(
                rack_id, client_id, client_host, member.subscribed_topic_names))
            self._bump(group)
        elif member_epoch not in (0, member.member_epoch):
            return HeartbeatResult(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a smaller member epoch ({member_epoch}) than the "
                f"one known by the group coordinator ({member.member_epoch}). The member must "
                "abandon all its partitions and rejoin." if member_epoch < member.member_epoch else
                f"The share group member has a greater member epoch ({member_epoch}) than the "
                f"one known by the group coordinator ({member.member_epoch}). The member must "
                "abandon all its partitions and rejoin.")
        elif subscribed is not None and sorted(set(subscribed)) != member.subscribed_topic_names:
            member.subscribed_topic_names = sorted(set(subscribed))
            self._record(group_id, gr.MEMBER_METADATA, member_id, gr.member_metadata(
                member.rack_id, client_id, client_host, member.subscribed_topic_names))
            self._bump(group)
        member.last_heartbeat_ms = now
        member.client_id, member.client_host = client_id, client_host
        if rack_id is not None:
            member.rack_id = rack_id
        if self._group_hash(group) != group.metadata_hash or (
                group.group_epoch == group.assignment_epoch and self._unassigned(group)):
            self._bump(group)
        if group.group_epoch > group.assignment_epoch:
            self._assign(group)
        send = None
        if member.member_epoch != group.assignment_epoch or member_epoch == 0:
            previous = member.member_epoch
            member.member_epoch = group.assignment_epoch
            member.assignment = group.target.get(member_id, {})
            send = member.assignment
            self._record(group_id, gr.CURRENT_MEMBER, member_id, gr.current_member(
                member.member_epoch, previous, member.assignment))
        initialize = self._start_initialize(group)
        try:
            self._flush()
        except KafkaError:
            for tid, p, _ in initialize:  # not recorded: the next heartbeat starts them again
                self._initializing.discard((group_id, tid, p))
            raise
        return HeartbeatResult(member_id=member_id, member_epoch=member.member_epoch,
                               heartbeat_interval_ms=self.heartbeat_interval_ms(group_id),
                               assignment=send, initialize=initialize,
                               state_epoch=group.group_epoch)

    def _state_partitions_record(self, group: ShareGroup) -> None:
        self._record(group.group_id, gr.STATE_PARTITIONS, None, gr.state_partitions(
            group.initializing, group.initialized, group.deleting))

    def _start_initialize(self, group: ShareGroup) -> list[tuple[bytes, int, int]]:
        """The subscribed partitions whose share state is neither initialized nor being
        initialized by this coordinator: recorded as initializing (the heartbeat's last
        record, as Kafka writes it) and returned for InitializeShareGroupState, with their
        start offset: -1 (the leader resolves share.auto.offset.reset), but 0 for a new
        partition of a topic already initialized, whose every record is to be read (as
        Kafka 4.4 does after CreatePartitions)."""
        out = []
        for name, (tid, n) in sorted(self._metadata(group).items()):
            done = group.initialized.get(tid, (name, set()))[1]
            start = 0 if done else UNINITIALIZED_START_OFFSET
            for p in range(n):
                if p not in done and (group.group_id, tid, p) not in self._initializing:
                    out.append((tid, p, start))
                    self._initializing.add((group.group_id, tid, p))
                    group.initializing.setdefault(tid, (name, set()))[1].add(p)
        if out:
            self._state_partitions_record(group)
        return out

    def initialized(self, group_id: str, done: list[tuple[bytes, int]],
                    failed: list[tuple[bytes, int]]) -> None:
        """The answer of InitializeShareGroupState: ``done`` partitions become initialized
        (the next heartbeat bumps the group epoch, so the assignor hands them out),
        ``failed`` ones stop initializing (a later heartbeat sends them again)."""
        for tid, p in done + failed:
            self._initializing.discard((group_id, tid, p))
        group = self.groups.get(group_id)
        if group is None:
            return
        changed = False
        for tid, p in done + failed:
            entry = group.initializing.get(tid)
            if entry is None or p not in entry[1]:
                continue
            entry[1].discard(p)
            if not entry[1]:
                del group.initializing[tid]
            if (tid, p) in done:
                group.initialized.setdefault(tid, (entry[0], set()))[1].add(p)
            changed = True
        if not changed:
            return
        self._state_partitions_record(group)  # the next heartbeat bumps the group epoch
        self._flush()

    def record_initializing(self, group_id: str, topic_id: bytes, name: str,
                            partitions: list[int]) -> None:
        """Share partitions AlterShareGroupOffsets is about to initialize: recorded as
        initializing (``initialized`` records the outcome), as Kafka records them, so a
        member that joins later does not initialize them again over the altered offsets."""
        group = self.groups.get(group_id)
        if group is None or not partitions:
            return
        group.initializing.setdefault(topic_id, (name, set()))[1].update(partitions)
        for p in partitions:
            self._initializing.add((group_id, topic_id, p))
        self._state_partitions_record(group)
        self._flush()

    def record_deleting(self, group_id: str, topic_id: bytes, name: str) -> None:
        """DeleteShareGroupOffsets of a topic: its share partitions leave the group's lists
        and the topic is recorded deleting until its share state is gone, as Kafka records
        it (the group epoch stays)."""
        group = self.groups.get(group_id)
        if group is None:
            return
        group.initializing.pop(topic_id, None)
        group.initialized.pop(topic_id, None)
        self._initializing = {k for k in self._initializing
                              if k[0] != group_id or k[1] != topic_id}
        group.deleting = {**group.deleting, topic_id: name}
        self._state_partitions_record(group)
        self._flush()

    def record_deleted(self, group_id: str, topic_id: bytes) -> None:
        """The topic's share state is deleted: it leaves the group's deleting list."""
        group = self.groups.get(group_id)
        if group is None or topic_id not in group.deleting:
            return
        group.deleting = {t: n for t, n in group.deleting.items() if t != topic_id}
        self._state_partitions_record(group)
        self._flush()

    def _metadata(self, group: ShareGroup) -> dict[str, tuple[bytes, int]]:
        out = {}
        for name in sorted(group.subscribed_topics()):
            found = self.topic_lookup(name)
            if found is not None:
                out[name] = found
        return out

    def _unassigned(self, group: ShareGroup) -> bool:
        """Whether a partition's share state was initialized since the target assignment
        (the assignor hands every initialized partition to some member): the next heartbeat
        bumps the group epoch for it, also on a coordinator that loaded the group."""
        if not group.members:
            return False
        targeted = {(tid, p) for a in group.target.values() for tid, ps in a.items()
                    for p in ps}
        return any((tid, p) not in targeted
                   for tid, n in self._metadata(group).values()
                   for p in group.initialized.get(tid, ("", set()))[1] if p < n)

    def _group_hash(self, group: ShareGroup) -> int:
        """KIP-1101's metadata hash of the group's subscribed topics (those that exist)."""
        if self.topic_hash is None:
            return 0
        hashes = {}
        for name in group.subscribed_topics():
            h = self.topic_hash(name)
            if h is not None:
                hashes[name] = h
        return group_hash(hashes)

    def _bump(self, group: ShareGroup) -> None:
        """A membership, subscription, metadata or share-state change: a new group epoch."""
        group.group_epoch += 1
        group.metadata_hash = self._group_hash(group)
        group.subscribed_metadata = self._metadata(group)
        self._record(group.group_id, gr.GROUP_METADATA, None,
                     gr.group_metadata(group.group_epoch, group.metadata_hash))
        if not group.members:  # nobody heartbeats to an empty group: its target now
            self._assign(group)

    def _assign(self, group: ShareGroup) -> None:
        """The target assignment at the group epoch, computed on a member's heartbeat after
        a bump (as Kafka's) over the partitions whose share state is initialized."""
        members = sorted(group.members)
        partitions = [(tid, p) for _, (tid, n) in sorted(group.subscribed_metadata.items())
                      for p in sorted(group.initialized.get(tid, ("", set()))[1]) if p < n]
        homogeneous = {}
        for m in members:
            subs = set(group.members[m].subscribed_topic_names)
            homogeneous[m] = [(tid, p) for tid, p in partitions
                              if any(group.subscribed_metadata[t][0] == tid for t in subs)]
        target: dict[str, dict[bytes, list[int]]] = {m: {} for m in members}
        # members with the same subscription share its partitions
        by_subscription: dict[tuple, list[str]] = {}
        for m in members:
            by_subscription.setdefault(tuple(homogeneous[m]), []).append(m)
        for parts, ms in by_subscription.items():
            target.update(simple_assignment(ms, list(parts)))
        gid = group.group_id
        for m, assignment in target.items():
            if group.target.get(m) != assignment:
                self._record(gid, gr.TARGET_MEMBER, m, gr.target_member(assignment))
        # Kafka stamps the assignment time only when there are members to assign to
        self._record(gid, gr.TARGET_METADATA, None, gr.target_metadata(
            group.group_epoch, self.clock() if members else None))
        group.target = target
        group.assignment_epoch = group.group_epoch

    def describe(self, group_id: str) -> ShareGroup:
        self.expire_members()
        group = self.groups.get(group_id)
        if group is None:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        return group

    def delete(self, group_id: str) -> int:
        self.expire_members()
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        # the share state's topics are recorded as deleting first, as Kafka does
        deleting = {tid: name for tid, (name, _) in {**group.initializing,
                                                     **group.initialized}.items()}
        if deleting:
            group.initializing, group.initialized = {}, {}
            group.deleting = {**group.deleting, **deleting}
            self._state_partitions_record(group)
        for record_type in (gr.TARGET_METADATA, gr.STATE_PARTITIONS, gr.GROUP_METADATA):
            self._record(group_id, record_type, None, None)
        self._flush()
        del self.groups[group_id]
        return ErrorCode.NONE

    def list_groups(self, states_filter=(), types_filter=()):
        """(group id, protocol type, state, type) of the share groups the filters keep."""
        self.expire_members()
        states = {s.lower() for s in states_filter}
        types = {t.lower() for t in types_filter}
        if types and "share" not in types:
            return []
        return [(g.group_id, "share", g.state, "share") for g in self.groups.values()
                if not states or g.state.lower() in states]


def replay(coordinator, key: bytes, value: bytes | None) -> None:
    """Loads a share-group record of __consumer_offsets into ``coordinator.share_groups``
    (members come back with a fresh session, as Kafka's do after a load)."""
    groups: dict[str, ShareGroup] = coordinator.__dict__.setdefault("share_groups", {})
    record_type, group_id, member_id = gr.decode_key(key)
    if record_type == gr.GROUP_METADATA:
        if value is None:
            groups.pop(group_id, None)
        else:
            group = groups.setdefault(group_id, ShareGroup(group_id))
            group.group_epoch, group.metadata_hash = gr.decode_group_metadata(value)
        return
    group = groups.get(group_id)
    if group is None:
        if value is None:
            return
        group = groups[group_id] = new_group(group_id)
    if record_type == gr.TARGET_METADATA and value is not None:
        group.assignment_epoch = gr.decode_group_epoch(value)
    elif record_type == gr.STATE_PARTITIONS:
        if value is None:
            group.initializing, group.initialized, group.deleting = {}, {}, {}
        else:
            group.initializing, group.initialized, group.deleting = \
                gr.decode_state_partitions(value)
    elif record_type == gr.MEMBER_METADATA:
        if value is None:
            group.members.pop(member_id, None)
            return
        rack, client_id, host, topics = gr.decode_member_metadata(value)
        m = group.members.setdefault(member_id, ShareMember(member_id, client_id, host, rack, topics))
        m.client_id, m.client_host, m.rack_id, m.subscribed_topic_names = client_id, host, rack, topics
        m.last_heartbeat_ms = coordinator.clock()
    elif record_type == gr.TARGET_MEMBER:
        if value is None:
            group.target.pop(member_id, None)
        else:
            group.target[member_id] = gr.decode_target_member(value)
    elif record_type == gr.CURRENT_MEMBER and value is not None and member_id in group.members:
        epoch, assignment = gr.decode_current_member(value)
        group.members[member_id].member_epoch = epoch
        group.members[member_id].assignment = assignment
