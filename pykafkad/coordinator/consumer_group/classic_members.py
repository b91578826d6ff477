"""Members speaking the classic protocol inside a consumer group (KIP-848 online migration).

A consumer group may hold members that still use JoinGroup/SyncGroup/Heartbeat (an old client,
or a classic group converted by its first ConsumerGroupHeartbeat). Kafka serves them from the
consumer group's own state, as its GroupMetadataManager's classicGroup*ToConsumerGroup do:

* JoinGroup updates the member (its subscription read from the embedded consumer protocol),
  recomputes the target when the group epoch moved, reconciles the member one step (the
  partitions it still owns are the subscription's owned partitions) and answers at once with
  the member epoch as the generation; nobody is a leader, nothing is for the client to assign.
* SyncGroup answers the member's current partitions, or REBALANCE_IN_PROGRESS when the group
  epoch moved past it (unless it still has partitions to give up).
* Heartbeat answers REBALANCE_IN_PROGRESS whenever the member has to rejoin: the group epoch
  moved, it must revoke partitions, or partitions it waits for are free.
* A member that does not rejoin or sync within its rebalance timeout, or whose classic session
  expires, is fenced.
"""

from __future__ import annotations

import logging

from pykafkad.coordinator.consumer_group.group import (
    UNRELEASED_PARTITIONS,
    UNREVOKED_PARTITIONS,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    Partitions,
)
from pykafkad.coordinator.group import JoinResult, SyncResult
from wire.errors import ErrorCode, KafkaError
from wire.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from wire.messages.consumer_protocol_assignment import TopicPartition as AssignedPartition
from wire.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from wire.primitives import Reader, Writer

log = logging.getLogger("pykafkad.coordinator")

PROTOCOL_TYPE = "consumer"


def read_subscription(metadata: bytes) -> ConsumerProtocolSubscription:
    """The embedded consumer protocol of a JoinGroup protocol (Kafka reads newer versions as
    its highest)."""
    r = Reader(metadata)
    version = r.int16()
    if version < 0:
        raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                         f"Unsupported consumer protocol version {version}.")
    return ConsumerProtocolSubscription.read(r, min(version, 3))


def read_assignment(data: bytes) -> list[tuple[str, list[int]]]:
    if not data:
        return []
    r = Reader(data)
    version = r.int16()
    parsed = ConsumerProtocolAssignment.read(r, min(max(version, 0), 3))
    return [(tp.topic, list(tp.partitions)) for tp in parsed.assigned_partitions]


def protocol_version(metadata: bytes) -> int:
    return int.from_bytes(metadata[:2], "big", signed=True) if len(metadata) >= 2 else 0


def write_assignment(topics: list[tuple[str, list[int]]], version: int) -> bytes:
    """A ConsumerProtocolAssignment in the version of the member's subscription."""
    version = min(max(version, 0), 3)
    w = Writer()
    w.int16(version)
    ConsumerProtocolAssignment(
        assigned_partitions=[AssignedPartition(topic=t, partitions=sorted(ps))
                             for t, ps in topics],
        user_data=None).write(w, version)
    return w.getvalue()


def _join_key(group_id: str, member_id: str) -> str:
    return f"consumer-classic-join-{group_id}-{member_id}"


def _sync_key(group_id: str, member_id: str) -> str:
    return f"consumer-classic-sync-{group_id}-{member_id}"


class ClassicMembers:
    """The classic protocol's requests to a consumer group; mixed into ConsumerGroupManager."""

    # -- helpers the manager provides: settings, timer, topics, groups, _refresh_metadata,
    # _compute_target, _reconcile, _schedule_session, _fence, persist, _new_member_id

    def topic_partitions(self, parts: Partitions) -> list[tuple[str, list[int]]]:
        out = []
        for topic_id, ps in sorted(parts.items()):
            name = self.topics.name_of(topic_id)
            if name is not None and ps:
                out.append((name, sorted(ps)))
        return out

    def owned_ids(self, owned) -> list[tuple[bytes, list[int]]]:
        out = []
        for tp in owned:
            found = self.topics.lookup(tp.topic)
            if found is not None:
                out.append((found[0], list(tp.partitions)))
        return out

    def serialized_assignment(self, member: ConsumerGroupMember, parts: Partitions) -> bytes:
        assert member.classic is not None
        return write_assignment(self.topic_partitions(parts),
                                protocol_version(member.classic.protocols[0][1]))

    def _classic_member(self, group: ConsumerGroup, member_id: str,
                        instance_id: str | None) -> ConsumerGroupMember:
        """Kafka's validateConsumerGroupMember plus throwIfMemberDoesNotUseClassicProtocol."""
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group "
                                 f"{group.group_id}.")
        else:
            member = group.static_member(instance_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member with instance id {instance_id} is not a member of "
                                 f"group {group.group_id}.")
            if member.member_id != member_id:
                raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {instance_id} "
                                 f"was fenced by member {member.member_id}.")
        if member.classic is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                             f"Member {member.member_id} does not use the classic protocol.")
        return member

    # -- JoinGroup -----------------------------------------------------------------------------
    def classic_join(self, group: ConsumerGroup, req, api_version: int) -> JoinResult:
        """A JoinGroup to a non-empty consumer group (Kafka's classicGroupJoinToConsumerGroup);
        ``req`` is the coordinator's JoinRequest."""
        try:
            result = self._classic_join(group, req, api_version)
        except KafkaError as e:
            return JoinResult(e.code, member_id=req.member_id)
        if self.groups.get(group.group_id) is group:
            try:
                self.persist(group)
            except KafkaError as e:
                return JoinResult(e.code, member_id=req.member_id)
        return result

    def _classic_join(self, group: ConsumerGroup, req, api_version: int) -> JoinResult:
        gid = group.group_id
        unknown = req.member_id == ""
        member_id = self._new_member_id() if unknown else req.member_id
        existing = group.members.get(member_id) if req.group_instance_id is None \
            else group.static_member(req.group_instance_id)
        if existing is None and len(group.members) >= self.settings.max_size:
            raise KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                             "The consumer group has reached its maximum capacity of "
                             f"{self.settings.max_size} members.")
        if not group.supports_classic_protocols(req.protocol_type,
                                                {n for n, _ in req.protocols}):
            raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                             f"Member {member_id}'s protocols are not supported.")
        if unknown and req.group_instance_id is None and api_version >= 4:
            log.info("[GroupId %s] Dynamic member with unknown member id joins the consumer "
                     "group. Created a new member id %s and requesting the member to rejoin "
                     "with this id.", gid, member_id)
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
        replaced: str | None = None
        if req.group_instance_id is not None:
            instance = req.group_instance_id
            if existing is not None and unknown:
                # the instance restarted: its new member id takes the old one's place and its
                # partitions (Kafka's static member replacement)
                replaced = existing.member_id
            elif existing is None and not unknown:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Instance id {instance} is unknown.")
            elif existing is not None and existing.member_id != member_id:
                raise KafkaError(ErrorCode.FENCED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {instance} was "
                                 f"fenced by member {existing.member_id}.")
        member = existing  # None: a new member (a dynamic one with the id it was given)
        try:
            subscription = read_subscription(req.protocols[0][1])
        except Exception as e:  # noqa: BLE001 - a client's bytes
            raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                             f"Malformed consumer protocol: {e}") from None
        # a static member replaced by the last classic one turns the group classic again
        downgrade = replaced is not None and self._downgrade_allowed_on_replace(group, replaced)
        bump = False
        if replaced is not None:
            member = self._replace_static_member(group, group.members[replaced], member_id)
        elif member is None:
            member = ConsumerGroupMember(member_id, instance_id=req.group_instance_id)
            group.members[member_id] = member
            bump = True
        member.rack_id = subscription.rack_id or member.rack_id
        if req.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.client_id, member.client_host = req.client_id, req.client_host
        member.classic = ClassicMemberMetadata(req.session_timeout_ms,
                                               [(n, bytes(m)) for n, m in req.protocols])
        topics = list(subscription.topics or [])
        if sorted(topics) != sorted(member.subscribed_topic_names):
            member.subscribed_topic_names = topics
            bump = True
        if self._refresh_metadata(group) or bump:
            group.group_epoch += 1
        now = self.clock()
        if group.group_epoch > group.assignment_epoch and (
                group.assignment_time is None
                or now - group.assignment_time >= self.assignment_interval_ms(gid)):
            self._compute_target(group)
            group.assignment_time = now
        self._reconcile(group, member, self.owned_ids(subscription.owned_partitions or []))
        self.timer.cancel(_join_key(gid, member.member_id))
        result = JoinResult(
            ErrorCode.NONE, member_id=member.member_id, generation_id=member.member_epoch,
            protocol_type=PROTOCOL_TYPE, protocol_name=member.classic.protocol_name, leader="")
        if downgrade:
            self.downgrade_replaced(group)
            return result
        self._schedule_session(group, member)
        self.timer.schedule(
            _sync_key(gid, member.member_id), req.rebalance_timeout_ms,
            lambda g=gid, m=member.member_id: self._fence(
                g, m, "the member failed to sync within timeout"))
        return result

    def _downgrade_allowed_on_replace(self, group: ConsumerGroup, replaced: str) -> bool:
        """Kafka's validateOnlineDowngradeWithReplacedMemberId."""
        if not group.all_members_use_classic_protocol_except(replaced):
            return False
        if not self.settings.downgrade_enabled:
            log.info("Cannot downgrade consumer group %s to classic group because the online "
                     "downgrade is disabled.", group.group_id)
            return False
        if len(group.members) > self.classic_max_size:
            log.info("Cannot downgrade consumer group %s to classic group because its group "
                     "size is greater than classic group max size.", group.group_id)
            return False
        return True

    def _replace_static_member(self, group: ConsumerGroup, old: ConsumerGroupMember,
                               new_id: str) -> ConsumerGroupMember:
        """The new member id keeps the old member's partitions and target, at epoch 0."""
        gid = group.group_id
        log.info("[GroupId %s] Static member with instance id %s re-joins the consumer group "
                 "as member %s, replacing member %s.", gid, old.instance_id, new_id,
                 old.member_id)
        self._cancel_timers(gid, old.member_id)
        del group.members[old.member_id]
        new = ConsumerGroupMember(
            new_id, instance_id=old.instance_id, rack_id=old.rack_id, client_id=old.client_id,
            client_host=old.client_host, rebalance_timeout_ms=old.rebalance_timeout_ms,
            subscribed_topic_names=list(old.subscribed_topic_names),
            subscribed_topic_regex=old.subscribed_topic_regex,
            server_assignor=old.server_assignor, member_epoch=0, previous_member_epoch=0,
            state=old.state, assigned={t: set(ps) for t, ps in old.assigned.items()},
            pending_revocation={t: set(ps) for t, ps in old.pending_revocation.items()},
            classic=old.classic)
        group.members[new_id] = new
        if old.member_id in group.target:
            group.target[new_id] = group.target.pop(old.member_id)
        return new

    # -- SyncGroup -----------------------------------------------------------------------------
    def classic_sync(self, group: ConsumerGroup, req) -> SyncResult:
        """Kafka's classicGroupSyncToConsumerGroup: the member's current partitions."""
        try:
            member = self._classic_member(group, req.member_id, req.group_instance_id)
            if req.generation_id != member.member_epoch:
                raise KafkaError(ErrorCode.ILLEGAL_GENERATION)
            self._check_classic_protocol(member, req.protocol_type, req.protocol_name)
            if group.group_epoch > member.member_epoch and \
                    member.state != UNREVOKED_PARTITIONS:
                self._schedule_join_timeout(group, member)
                raise KafkaError(ErrorCode.REBALANCE_IN_PROGRESS)
        except KafkaError as e:
            return SyncResult(e.code)
        self.timer.cancel(_sync_key(group.group_id, member.member_id))
        self._schedule_session(group, member)
        return SyncResult(ErrorCode.NONE, req.protocol_type, req.protocol_name,
                          self.serialized_assignment(member, member.assigned))

    @staticmethod
    def _check_classic_protocol(member: ConsumerGroupMember, protocol_type: str | None,
                                protocol_name: str | None) -> None:
        assert member.classic is not None
        if protocol_type is not None and protocol_type != PROTOCOL_TYPE:
            raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if protocol_name is not None and protocol_name != member.classic.protocol_name:
            raise KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)

    # -- Heartbeat -----------------------------------------------------------------------------
    def classic_heartbeat(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                          generation_id: int) -> int:
        """Kafka's classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS makes the
        member rejoin whenever its assignment must move."""
        try:
            member = self._classic_member(group, member_id, instance_id)
        except KafkaError as e:
            return e.code
        if generation_id != member.member_epoch:
            return ErrorCode.ILLEGAL_GENERATION
        self._schedule_session(group, member)
        if member.member_epoch < group.group_epoch or member.state == UNREVOKED_PARTITIONS or (
                member.state == UNRELEASED_PARTITIONS
                and not group.waiting_on_unreleased_partition(member)):
            self._schedule_join_timeout(group, member)
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def _schedule_join_timeout(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        key = _join_key(group.group_id, member.member_id)
        if not self.timer.is_scheduled(key):
            self.timer.schedule(
                key, member.rebalance_timeout_ms,
                lambda g=group.group_id, m=member.member_id: self._fence(
                    g, m, "the classic member failed to join within the rebalance timeout"))

    # -- LeaveGroup ----------------------------------------------------------------------------
    def classic_leave(self, group: ConsumerGroup,
                      members: list[tuple[str, str | None, str | None]]):
        """Kafka's classicGroupLeaveToConsumerGroup: each leaving classic member is removed and
        the group epoch bumped once (no downgrade: that is for leaving consumer members)."""
        results = []
        removed = False
        for member_id, instance_id, reason in members:
            try:
                if instance_id is None:
                    member = group.members.get(member_id)
                    if member is None:
                        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
                else:
                    member = group.static_member(instance_id)
                    if member is None:
                        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
                    if member_id and member.member_id != member_id:
                        raise KafkaError(ErrorCode.FENCED_INSTANCE_ID)
                if member.classic is None:
                    raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
            except KafkaError as e:
                results.append((member_id, instance_id, e.code))
                continue
            log.info("[Group %s] Member %s has left group through explicit `LeaveGroup` "
                     "request; client reason: %s", group.group_id, member.member_id,
                     reason or "not provided")
            group.members.pop(member.member_id, None)
            group.target.pop(member.member_id, None)
            self._cancel_timers(group.group_id, member.member_id)
            removed = True
            results.append((member.member_id, instance_id, ErrorCode.NONE))
        if removed:
            group.group_epoch += 1
            self._refresh_metadata(group)
            if not group.members:
                group.target, group.assignment_epoch = {}, group.group_epoch
            try:
                self.persist(group)
            except KafkaError as e:
                return e.code, []
        return ErrorCode.NONE, results

    def cancel_classic_timers(self, group_id: str, member_id: str) -> None:
        self.timer.cancel(_join_key(group_id, member_id))
        self.timer.cancel(_sync_key(group_id, member_id))
