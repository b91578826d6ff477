"""The consumer rebalance protocol (KIP-848) on one group coordinator: ConsumerGroupHeartbeat,
ConsumerGroupDescribe, and what offsets/admin requests need to know about consumer groups.

Like the classic coordinator it is synchronous on an injected clock: a heartbeat runs to
completion, bumps the group epoch when membership, subscriptions or the subscribed topics'
metadata change, recomputes the target assignment when the group epoch is ahead of it, and then
moves the member one step towards its target (Kafka's CurrentAssignmentBuilder): partitions
leave their old owner before anyone else gets them.
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from pykafkad.coordinator.consumer_group.assignors import ASSIGNORS
from pykafkad.coordinator.consumer_group.classic_members import ClassicMembers
from pykafkad.coordinator.consumer_group.group import (
    LEAVE_EPOCH,
    LEAVE_STATIC_EPOCH,
    STABLE,
    UNRELEASED_PARTITIONS,
    UNREVOKED_PARTITIONS,
    ConsumerGroup,
    ConsumerGroupMember,
    Partitions,
)
from pykafkad.coordinator.consumer_group.persistence import GroupRecords
from pykafkad.coordinator.metadata_hash import group_hash, topic_hash
from pykafkad.coordinator.timer import Timer
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.coordinator")

GROUP_TYPE_CONSUMER = "consumer"
PROTOCOL_TYPE = "consumer"
#: ConsumerGroupDescribe v1 MemberType of a member speaking the consumer protocol
MEMBER_TYPE_CONSUMER = 1
#: ... and of a member speaking the classic protocol (online migration)
MEMBER_TYPE_CLASSIC = 0


class TopicsView(Protocol):
    def lookup(self, name: str) -> tuple[bytes, int] | None:
        """(topic id, partition count) of an existing topic."""

    def name_of(self, topic_id: bytes) -> str | None: ...

    def names(self) -> Iterable[str]:
        """Every user topic (what a subscribed regex is matched against)."""

    def partition_racks(self, name: str) -> list[list[str]]:
        """The racks of each partition's replicas, by partition (KIP-1101's topic hash)."""

    def metadata_offset(self) -> int:
        """The metadata log offset the topics are at (a resolved regex's version)."""


class NoTopics:
    def lookup(self, name: str):
        return None

    def name_of(self, topic_id: bytes):
        return None

    def names(self):
        return ()

    def partition_racks(self, name: str):
        return []

    def metadata_offset(self) -> int:
        return 0


@dataclass(frozen=True)
class ConsumerGroupSettings:
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = 2**31 - 1
    assignors: tuple[str, ...] = ("uniform", "range")
    #: a new target assignment at most this often (Kafka 4.4 batches membership changes)
    assignment_interval_ms: int = 1000
    #: group.consumer.migration.policy (lower case)
    migration_policy: str = "bidirectional"

    @property
    def upgrade_enabled(self) -> bool:
        return self.migration_policy in ("upgrade", "bidirectional")

    @property
    def downgrade_enabled(self) -> bool:
        return self.migration_policy in ("downgrade", "bidirectional")

    @classmethod
    def from_broker(cls, config) -> ConsumerGroupSettings:
        names = config["group.consumer.assignors"]
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        return cls(config["group.consumer.session.timeout.ms"],
                   config["group.consumer.heartbeat.interval.ms"],
                   config["group.consumer.max.size"],
                   tuple(n for n in names if n in ASSIGNORS) or ("uniform",),
                   _int_config(config, "group.consumer.assignment.interval.ms", 1000),
                   str(config.get("group.consumer.migration.policy") or "bidirectional").lower())


def _int_config(config, name: str, default: int) -> int:
    try:
        return int(config[name])
    except (KeyError, TypeError, ValueError):
        return default


@dataclass
class Heartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    #: (topic id, partitions) the member owns; None when not sent
    owned: list[tuple[bytes, list[int]]] | None = None
    client_id: str = ""
    client_host: str = ""
    api_version: int = 1


@dataclass
class HeartbeatResult:
    error: int = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    #: the member's assignment when it must be sent, else None
    assignment: Partitions | None = None


@dataclass
class DescribedConsumerGroup:
    group_id: str
    error: int = ErrorCode.NONE
    message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = ""
    members: list[ConsumerGroupMember] = field(default_factory=list)
    targets: dict[str, Partitions] = field(default_factory=dict)


def _copy(p: Partitions) -> Partitions:
    return {t: set(ps) for t, ps in p.items() if ps}


def _minus(a: Partitions, b: Partitions) -> Partitions:
    return {t: ps - b.get(t, set()) for t, ps in a.items() if ps - b.get(t, set())}


def _new_member_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


class ConsumerGroupManager(ClassicMembers, GroupRecords):
    def __init__(self, settings: ConsumerGroupSettings, timer: Timer,
                 clock: Callable[[], int]):
        self.settings = settings
        self.timer = timer
        self.clock = clock
        self.groups: dict[str, ConsumerGroup] = {}
        self.topics: TopicsView = NoTopics()
        #: hooks the coordinator sets: is the id a classic group (and is it empty)?
        self.classic_group_state: Callable[[str], str | None] = lambda _gid: None
        self.drop_empty_classic_group: Callable[[str], None] = lambda _gid: None
        #: online migration hooks the coordinator sets: convert a classic group whose member
        #: sent a ConsumerGroupHeartbeat (None: not allowed), and convert a consumer group whose
        #: last consumer-protocol member leaves (True: it is a classic group now)
        self.upgrade_classic_group: Callable[[str], ConsumerGroup | None] = lambda _gid: None
        self.downgrade_group: Callable[[ConsumerGroup, str], bool] = lambda _g, _m: False
        #: ... and convert it (Stable, no rebalance) when a static member replaced the last
        #: consumer-protocol member; group.max.size of classic groups bounds that
        self.downgrade_replaced: Callable[[ConsumerGroup], None] = lambda _g: None
        self.classic_max_size = 2**31 - 1
        #: a group's config overrides (IncrementalAlterConfigs on GROUP resources)
        self.group_config: Callable[[str], dict[str, str]] = lambda _gid: {}
        #: appends records to the group's __consumer_offsets partition (raises KafkaError)
        self.write: Callable[[str, list], None] = lambda _gid, _records: None

    # -- the heartbeat -------------------------------------------------------------------------
    def heartbeat(self, hb: Heartbeat) -> HeartbeatResult:
        try:
            self._validate(hb)
            if hb.member_epoch in (LEAVE_EPOCH, LEAVE_STATIC_EPOCH):
                result = self._leave(hb)
            else:
                result = self._heartbeat(hb)
        except KafkaError as e:
            result = HeartbeatResult(e.code, e.message or None)
        group = self.groups.get(hb.group_id)
        if group is not None:
            try:
                self.persist(group)
            except KafkaError as e:
                return HeartbeatResult(e.code, e.message or None)
            self._resolve_new_regexes(group)
        return result

    def _validate(self, hb: Heartbeat) -> None:
        def invalid(msg: str):
            raise KafkaError(ErrorCode.INVALID_REQUEST, msg)
        if not hb.group_id:
            invalid("GroupId can't be empty.")
        if hb.instance_id == "":
            invalid("InstanceId can't be empty.")
        if hb.rack_id == "":
            invalid("RackId can't be empty.")
        if hb.member_epoch > 0 or hb.member_epoch == LEAVE_EPOCH:
            if not hb.member_id:
                invalid("MemberId can't be empty.")
        elif hb.member_epoch == 0:
            if hb.api_version >= 1 and not hb.member_id:
                invalid("MemberId can't be empty.")
            if hb.rebalance_timeout_ms == -1:
                invalid("RebalanceTimeoutMs must be provided in first request.")
            if hb.owned is None or hb.owned:
                invalid("TopicPartitions must be empty when (re-)joining.")
            if hb.subscribed_topic_names is None and hb.subscribed_topic_regex is None:
                invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null "
                        "when (re-)joining.")
        elif hb.member_epoch == LEAVE_STATIC_EPOCH:
            if not hb.member_id:
                invalid("MemberId can't be empty.")
            if hb.instance_id is None:
                invalid("InstanceId can't be null.")
        else:
            invalid("MemberEpoch is invalid.")
        if hb.subscribed_topic_regex is not None:
            try:
                re.compile(hb.subscribed_topic_regex)
            except re.error as e:
                raise KafkaError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                                 f"SubscribedTopicRegex `{hb.subscribed_topic_regex}` is not "
                                 f"a valid regular expression: {e}.") from None
        if hb.server_assignor is not None and hb.server_assignor not in self.settings.assignors:
            raise KafkaError(ErrorCode.UNSUPPORTED_ASSIGNOR,
                             f"ServerAssignor {hb.server_assignor} is not supported. Supported "
                             f"assignors: {', '.join(self.settings.assignors)}.")

    def _group_for(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        classic = self.classic_group_state(group_id)
        if classic is not None:
            if create and classic in ("Empty", "Dead"):
                self.drop_empty_classic_group(group_id)
            elif create and (upgraded := self.upgrade_classic_group(group_id)) is not None:
                self.groups[group_id] = upgraded
                return upgraded
            else:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                                 f"Group {group_id} is not a consumer group.")
        if not create:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                             f"Consumer group {group_id} not found.")
        # Kafka 4.4 answers a new group's first member with epoch 2: a new group starts at
        # epoch 1 with its (empty) target at 1, neither written until they change
        group = ConsumerGroup(group_id, group_epoch=1, assignment_epoch=1,
                              initial_epochs_unwritten=True)
        self.groups[group_id] = group
        return group

    def _heartbeat(self, hb: Heartbeat) -> HeartbeatResult:
        group = self._group_for(hb.group_id, create=hb.member_epoch == 0)
        bump = False
        old_assigned: Partitions | None = None
        if hb.instance_id is not None:
            member, bump, old_assigned = self._static_member(group, hb)
        else:
            member = group.members.get(hb.member_id)
            if hb.member_epoch == 0:
                if member is None:
                    if len(group.members) >= self.settings.max_size:
                        raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                         "The consumer group has reached its maximum capacity "
                                         f"of {self.settings.max_size} members.")
                    # a new member rebalances through its subscription (Kafka compares it with
                    # an empty one): a regex not resolved yet does not, until it is
                    member_id = hb.member_id or _new_member_id()
                    member = ConsumerGroupMember(member_id)
                    group.members[member_id] = member
                elif member.member_epoch != 0:
                    # a rejoin: the member gave up everything it owned
                    member.assigned, member.pending_revocation = {}, {}
                    member.assignment_epochs = {}
                    member.state, member.member_epoch = STABLE, 0
            elif member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {hb.member_id} is not a member of group "
                                 f"{hb.group_id}.")
            else:
                self._check_epoch(member, hb)
        if old_assigned is None:
            old_assigned = _copy(member.assigned)
        member.client_id, member.client_host = hb.client_id, hb.client_host
        if hb.rack_id is not None:
            member.rack_id = hb.rack_id
        if hb.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = hb.rebalance_timeout_ms
        if hb.subscribed_topic_names is not None and \
                sorted(hb.subscribed_topic_names) != sorted(member.subscribed_topic_names):
            member.subscribed_topic_names = list(hb.subscribed_topic_names)
            bump = True
        if hb.subscribed_topic_regex is not None and \
                (hb.subscribed_topic_regex or None) != member.subscribed_topic_regex:
            new_regex = hb.subscribed_topic_regex or None
            # Kafka's maybeUpdateRegularExpressions: a regex the group already resolved
            # rebalances now; a new one is resolved after the heartbeat, and that bumps
            bump |= new_regex in group.resolved_regexes
            member.subscribed_topic_regex = new_regex
        if hb.server_assignor is not None and hb.server_assignor != member.server_assignor:
            member.server_assignor = hb.server_assignor
            bump = True
        if self._refresh_metadata(group) or bump:
            group.group_epoch += 1
        now = self.clock()
        if group.group_epoch > group.assignment_epoch and (
                group.assignment_time is None
                or now - group.assignment_time >= self.assignment_interval_ms(group.group_id)):
            self._compute_target(group)
            group.assignment_time = now
        self._reconcile(group, member, hb.owned)
        self._schedule_session(group, member)
        result = HeartbeatResult(
            member_id=member.member_id, member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.heartbeat_interval_ms(group.group_id))
        # Kafka 4.4 sends the assignment on a join and when it changed, never otherwise
        if hb.member_epoch == 0 or member.assigned != old_assigned:
            result.assignment = _copy(member.assigned)
        return result

    def _static_member(self, group: ConsumerGroup, hb: Heartbeat):
        existing = group.static_member(hb.instance_id)
        if hb.member_epoch == 0:
            if existing is None:
                member_id = hb.member_id or _new_member_id()
                member = ConsumerGroupMember(member_id, instance_id=hb.instance_id)
                group.members[member_id] = member
                return member, False, None
            if existing.member_epoch != LEAVE_STATIC_EPOCH:
                raise KafkaError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                 f"Static member {hb.member_id} with instance id "
                                 f"{hb.instance_id} cannot join the group because the instance "
                                 f"id is owned by {existing.member_id} member.")
            # the instance rejoins: a new member id takes over the assignment and the epoch
            member_id = hb.member_id or _new_member_id()
            del group.members[existing.member_id]
            self._cancel_timers(group.group_id, existing.member_id)
            existing.member_id = member_id
            existing.member_epoch = existing.previous_member_epoch
            group.members[member_id] = existing
            for old_id in [m for m in group.target if m not in group.members]:
                group.target[member_id] = group.target.pop(old_id)
            return existing, False, {}
        if existing is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Instance id {hb.instance_id} is unknown.")
        if existing.member_id != hb.member_id:
            raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                             f"Static member {hb.member_id} with instance id {hb.instance_id} "
                             f"was fenced by member {existing.member_id}.")
        self._check_epoch(existing, hb)
        return existing, False, None

    @staticmethod
    def _check_epoch(member: ConsumerGroupMember, hb: Heartbeat) -> None:
        got, known = hb.member_epoch, member.member_epoch
        if got > known:
            raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The consumer group member has a greater member epoch ({got}) than "
                             f"the one known by the group coordinator ({known}). The member must "
                             "abandon all its partitions and rejoin.")
        if got < known:
            owned_ok = hb.owned is not None and all(
                set(ps) <= member.assigned.get(t, set()) for t, ps in hb.owned)
            if got != member.previous_member_epoch or not owned_ok:
                raise KafkaError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a smaller member epoch ({got}) "
                                 f"than the one known by the group coordinator ({known}). The "
                                 "member must abandon all its partitions and rejoin.")

    # -- metadata and the target assignment ----------------------------------------------------
    def _refresh_metadata(self, group: ConsumerGroup) -> bool:
        """Re-resolves the group's resolved regexes, forgets the ones no member subscribes to
        any more, and reads the subscribed topics' metadata; True when the epoch must be
        bumped: a regex matches other topics, or the topics' metadata hash changed (a new
        topic, partitions added, a topic deleted or re-created)."""
        subscribed = group.subscribed_regexes()
        for rx in [rx for rx in group.resolved_regexes if rx not in subscribed]:
            del group.resolved_regexes[rx]
            group.regex_resolutions.pop(rx, None)
        changed = False
        for rx, topics in self._resolve(group.resolved_regexes).items():
            if topics != group.resolved_regexes[rx]:
                group.resolved_regexes[rx] = topics
                group.regex_resolutions[rx] = (self.topics.metadata_offset(), self.clock())
                changed = True
        return self._update_metadata_hash(group) or changed

    def _resolve(self, regexes: Iterable[str]) -> dict[str, set[str]]:
        regexes = list(regexes)
        if not regexes:
            return {}
        names = [n for n in self.topics.names() if not n.startswith("__")]
        out = {}
        for rx in regexes:
            pattern = re.compile(rx)
            out[rx] = {n for n in names if pattern.fullmatch(n)}
        return out

    def _update_metadata_hash(self, group: ConsumerGroup) -> bool:
        """Reads the subscribed topics' metadata and hashes it (KIP-1101); True when the
        hash differs from the one of the group's last epoch."""
        metadata, hashes = {}, {}
        for name in group.subscribed_topics():
            found = self.topics.lookup(name)
            if found is not None:
                metadata[name] = found
                hashes[name] = topic_hash(found[0], name, self._racks(name, found[1]))
        group.subscription_metadata = metadata
        new_hash = group_hash(hashes)
        if new_hash == group.metadata_hash:
            return False
        group.metadata_hash = new_hash
        return True

    def _racks(self, name: str, partitions: int) -> list[list[str]]:
        racks = list(self.topics.partition_racks(name) or [])
        return (racks + [[] for _ in range(partitions)])[:partitions]

    def _resolve_new_regexes(self, group: ConsumerGroup) -> None:
        """Kafka resolves a regex a member brought after its heartbeat (an asynchronous task)
        and then writes what it matched and bumps the group epoch, apart from the heartbeat's
        own bump: the same two bumps and records here."""
        if self.groups.get(group.group_id) is not group:
            return
        new = [rx for rx in group.subscribed_regexes() if rx not in group.resolved_regexes]
        if not new:
            return
        bump = False
        for rx, topics in self._resolve(new).items():
            group.resolved_regexes[rx] = topics
            group.regex_resolutions[rx] = (self.topics.metadata_offset(), self.clock())
            bump |= bool(topics)
        if self._update_metadata_hash(group) or bump:
            group.group_epoch += 1
        try:
            self.persist(group)
        except KafkaError as e:
            log.warning("could not write the regexes of %s: %s", group.group_id, e)

    def _compute_target(self, group: ConsumerGroup) -> None:
        meta = group.subscription_metadata or {}
        subscriptions = {}
        for m in group.members.values():
            names = set(m.subscribed_topic_names)
            if m.subscribed_topic_regex is not None:
                names |= group.resolved_regexes.get(m.subscribed_topic_regex, set())
            subscriptions[m.member_id] = {meta[n][0] for n in names if n in meta}
        partitions = {tid: n for tid, n in meta.values()}
        assignor = ASSIGNORS[group.preferred_assignor(self.settings.assignors[0])]
        group.target = assignor(subscriptions, partitions, group.target)
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp = self.clock()

    # -- reconciliation ------------------------------------------------------------------------
    def _reconcile(self, group: ConsumerGroup, member: ConsumerGroupMember,
                   owned: list[tuple[bytes, list[int]]] | None) -> None:
        if member.state == UNREVOKED_PARTITIONS:
            still_owned = owned is None or any(
                set(ps) & member.pending_revocation.get(t, set()) for t, ps in owned)
            if still_owned:
                return
            member.pending_revocation = {}
            self.timer.cancel(_rebalance_key(group.group_id, member.member_id))
        # Kafka 4.4 moves a member only towards the part of its target it still subscribes
        # to: partitions of a topic it dropped are revoked at once, before a new target
        subscribed = self._subscribed_topic_ids(group, member)
        target = {t: ps for t, ps in group.target.get(member.member_id, {}).items()
                  if t in subscribed}
        if member.state == STABLE and member.member_epoch == group.assignment_epoch and \
                all(t in subscribed for t in member.assigned):
            return
        kept = {t: member.assigned.get(t, set()) & ps for t, ps in target.items()}
        kept = {t: ps for t, ps in kept.items() if ps}
        revoke = _minus(member.assigned, target)
        client_owns = owned is None or any(set(ps) & revoke.get(t, set()) for t, ps in owned)
        if revoke and client_owns:
            # the member stays in its epoch until it says it gave the partitions up
            member.state = UNREVOKED_PARTITIONS
            member.previous_member_epoch = member.member_epoch  # Kafka's updateMemberEpoch
            member.assigned, member.pending_revocation = kept, revoke
            self.timer.schedule(
                _rebalance_key(group.group_id, member.member_id), member.rebalance_timeout_ms,
                lambda g=group.group_id, m=member.member_id: self._rebalance_expired(g, m))
            return
        new = _copy(kept)
        unreleased = False
        for t, ps in target.items():
            for p in ps - kept.get(t, set()):
                if group.owner_of(t, p, member.member_id) is None:
                    new.setdefault(t, set()).add(p)
                else:
                    unreleased = True
        member.assigned = new
        member.pending_revocation = {}
        member.state = UNRELEASED_PARTITIONS if unreleased else STABLE
        # as Kafka's CurrentAssignmentBuilder: every step records the epoch it came from
        member.previous_member_epoch = member.member_epoch
        member.member_epoch = group.assignment_epoch

    @staticmethod
    def _subscribed_topic_ids(group: ConsumerGroup, member: ConsumerGroupMember) -> set[bytes]:
        names = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex is not None:
            names |= group.resolved_regexes.get(member.subscribed_topic_regex, set())
        meta = group.subscription_metadata or {}
        return {meta[n][0] for n in names if n in meta}

    # -- leaving and fencing -------------------------------------------------------------------
    def _leave(self, hb: Heartbeat) -> HeartbeatResult:
        group = self._group_for(hb.group_id, create=False)
        if hb.instance_id is not None:
            member = group.static_member(hb.instance_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Instance id {hb.instance_id} is unknown.")
            if member.member_id != hb.member_id:
                raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                                 f"Static member {hb.member_id} with instance id "
                                 f"{hb.instance_id} was fenced by member {member.member_id}.")
        else:
            member = group.members.get(hb.member_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {hb.member_id} is not a member of group "
                                 f"{hb.group_id}.")
        if hb.member_epoch == LEAVE_STATIC_EPOCH:
            # the static member keeps its assignment for a while: the same instance may return
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = LEAVE_STATIC_EPOCH
            self.timer.cancel(_rebalance_key(group.group_id, member.member_id))
        elif not self.downgrade_group(group, member.member_id):
            self.remove_member(group, member.member_id)
        return HeartbeatResult(member_id=hb.member_id, member_epoch=hb.member_epoch)

    def remove_member(self, group: ConsumerGroup, member_id: str) -> None:
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        self._cancel_timers(group.group_id, member_id)
        group.group_epoch += 1
        self._refresh_metadata(group)
        if not group.members:
            # nothing to assign: an empty group's target is current at once (Kafka writes
            # its epoch without an assignment timestamp)
            group.target, group.assignment_epoch = {}, group.group_epoch
            group.assignment_timestamp = 0

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self.timer.cancel(_session_key(group_id, member_id))
        self.timer.cancel(_rebalance_key(group_id, member_id))
        self.cancel_classic_timers(group_id, member_id)

    def cancel_all_timers(self, group: ConsumerGroup) -> None:
        for member_id in group.members:
            self._cancel_timers(group.group_id, member_id)

    def _group_setting(self, group_id: str, name: str, default: int) -> int:
        """The group's ``consumer.<name>`` config, else the broker's
        ``group.consumer.<name>`` (Kafka reads it at each use, so a change applies at once)."""
        value = self.group_config(group_id).get(f"consumer.{name}")
        return default if value is None else int(value)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._group_setting(group_id, "heartbeat.interval.ms",
                                   self.settings.heartbeat_interval_ms)

    def assignment_interval_ms(self, group_id: str) -> int:
        return self._group_setting(group_id, "assignment.interval.ms",
                                   self.settings.assignment_interval_ms)

    def _session_timeout_ms(self, group_id: str, member: ConsumerGroupMember) -> int:
        """A classic member keeps the session timeout of its JoinGroup."""
        if member.classic is not None:
            return member.classic.session_timeout_ms
        return self._group_setting(group_id, "session.timeout.ms",
                                   self.settings.session_timeout_ms)

    @staticmethod
    def _new_member_id() -> str:
        return _new_member_id()

    def _schedule_session(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        self.timer.schedule(
            _session_key(group.group_id, member.member_id),
            self._session_timeout_ms(group.group_id, member),
            lambda g=group.group_id, m=member.member_id: self._fence(g, m, "session timeout"))

    def _fence(self, group_id: str, member_id: str, why: str) -> None:
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            return
        log.info("[GroupId %s] Member %s fenced from the group because of the %s.",
                 group_id, member_id, why)
        try:
            if self.downgrade_group(group, member_id):
                return
        except KafkaError as e:
            log.warning("could not downgrade %s to a classic group: %s", group_id, e)
        self.remove_member(group, member_id)
        try:
            self.persist(group)
        except KafkaError as e:
            log.warning("could not write the fencing of %s in %s: %s", member_id, group_id, e)

    def _rebalance_expired(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if member is not None and member.state == UNREVOKED_PARTITIONS:
            self._fence(group_id, member_id, "rebalance timeout")

    # -- admin views ---------------------------------------------------------------------------
    def group_ids(self) -> list[str]:
        return list(self.groups)

    def list_groups(self, states: Iterable[str] = (), types: Iterable[str] = ()):
        """(group_id, protocol_type, group_state, group_type) of each consumer group."""
        wanted_states = {s.strip().lower() for s in states}
        wanted_types = {t.strip().lower() for t in types}
        if wanted_types and GROUP_TYPE_CONSUMER not in wanted_types:
            return []
        out = []
        for g in self.groups.values():
            state = g.state
            if wanted_states and state.lower() not in wanted_states:
                continue
            out.append((g.group_id, PROTOCOL_TYPE, state, GROUP_TYPE_CONSUMER))
        return out

    def describe(self, group_id: str) -> DescribedConsumerGroup:
        group = self.groups.get(group_id)
        if group is None:
            message = (f"Group {group_id} is not a consumer group."
                       if self.classic_group_state(group_id) is not None
                       else f"Group {group_id} not found.")
            return DescribedConsumerGroup(group_id, ErrorCode.GROUP_ID_NOT_FOUND, message)
        return DescribedConsumerGroup(
            group_id, state=group.state, group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor=group.preferred_assignor(self.settings.assignors[0]),
            members=list(group.members.values()), targets=group.target)

    def delete_group(self, group_id: str) -> int:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        del self.groups[group_id]
        try:
            self.persist(group)
        except KafkaError as e:
            self.groups[group_id] = group
            return e.code
        return ErrorCode.NONE

    def is_subscribed_to(self, group_id: str, topic: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and topic in group.subscribed_topics()

    # -- offsets -------------------------------------------------------------------------------
    def validate_commit(self, group_id: str, member_id: str, member_epoch: int,
                        api_version: int, transactional: bool) -> None:
        """Kafka's ConsumerGroup.validateOffsetCommit: the generation id is the member epoch."""
        group = self.groups[group_id]
        if member_epoch < 0 and not group.members:
            return
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
        if not transactional and api_version < 9 and member.classic is None:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION,
                             "OffsetCommit version 9 or above must be used by members using "
                             "the modern group protocol")
        if member_epoch != member.member_epoch:
            raise KafkaError(ErrorCode.ILLEGAL_GENERATION if member.classic is not None
                             else ErrorCode.STALE_MEMBER_EPOCH)
        self.timer.schedule(
            _session_key(group_id, member_id), self._session_timeout_ms(group_id, member),
            lambda g=group_id, m=member_id: self._fence(g, m, "session timeout"))

    def unload(self) -> None:
        self.groups.clear()

    # -- loading ---------------------------------------------------------------------------------
    def on_loaded(self) -> None:
        """After a load every member's session starts afresh (as in Kafka)."""
        for group in self.groups.values():
            for m in group.members.values():
                if not self.timer.is_scheduled(_session_key(group.group_id, m.member_id)):
                    self._schedule_session(group, m)


def _session_key(group_id: str, member_id: str) -> str:
    return f"consumer-session-{group_id}-{member_id}"


def _rebalance_key(group_id: str, member_id: str) -> str:
    return f"consumer-rebalance-{group_id}-{member_id}"
