"""The classic rebalance machinery: generations, parked answers, session and sync timers.

Kafka's behaviour, step by step (GroupMetadataManager's classic group part):

* A first member joining an Empty group starts PreparingRebalance and waits
  ``group.initial.rebalance.delay.ms`` (extended while new members keep arriving, bounded by the
  rebalance timeout) so a starting fleet forms one generation, not many.
* Later rebalances complete as soon as every known member has rejoined, or when the rebalance
  timeout expires; dynamic members that did not rejoin are then dropped.
* Completing the join phase bumps the generation, selects the protocol all members support
  with the most votes, answers every parked JoinGroup (the leader gets the member list) and
  waits for SyncGroup; the leader's SyncGroup stores the assignment in __consumer_offsets and
  makes the group Stable.  Members that do not sync within the rebalance timeout are removed.
* Heartbeats keep a member's session; a member whose session expires (no heartbeat, no
  parked request) is removed and the group rebalances.  Heartbeat answers
  REBALANCE_IN_PROGRESS while a rebalance is preparing, which makes members rejoin.
* Static members (group.instance.id) keep their place across restarts: rejoining with an
  unknown member id replaces the old id (fencing it) without a rebalance when nothing
  changed.

All of it is synchronous; parked requests are ``Pending`` values completed later, and time
comes from the injected clock through ``Timer``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.group import (
    ClassicGroup,
    GroupState,
    JoinResult,
    Member,
    SyncResult,
)
from pykafkad.coordinator.records import (
    GroupMetadataValue,
    MemberMetadata,
    Record,
    group_metadata_record,
)
from pykafkad.coordinator.timer import Timer
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.coordinator")

EMPTY, PREPARING, COMPLETING, STABLE, DEAD = (
    GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
    GroupState.STABLE, GroupState.DEAD,
)

#: appends records for a group to __consumer_offsets; raises KafkaError when it cannot
Writer = Callable[[str, list[Record]], None]


def append_error(code: int) -> int:
    """Kafka's mapping of a failed __consumer_offsets write to what clients are told."""
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
                ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE,
                ErrorCode.INVALID_FETCH_SIZE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code


def heartbeat_key(group_id: str, member_id: str) -> str:
    return f"heartbeat-{group_id}-{member_id}"


def _join_key(group_id: str) -> str:
    return f"join-{group_id}"


def _sync_key(group_id: str) -> str:
    return f"sync-{group_id}"


def group_metadata_value(group: ClassicGroup, assignment: dict[str, bytes]) -> GroupMetadataValue:
    members = []
    for m in group.members.values():
        members.append(MemberMetadata(
            member_id=m.member_id, client_id=m.client_id, client_host=m.client_host,
            session_timeout=m.session_timeout_ms, rebalance_timeout=m.rebalance_timeout_ms,
            subscription=m.metadata(group.protocol_name) if group.protocol_name else b"",
            assignment=assignment.get(m.member_id, b""),
            group_instance_id=m.group_instance_id))
    return GroupMetadataValue(
        protocol_type=group.protocol_type or "", generation=group.generation_id,
        protocol=group.protocol_name, leader=group.leader_id,
        current_state_timestamp=-1 if group.state_timestamp is None else group.state_timestamp,
        members=members)


def empty_group_metadata_value(group: ClassicGroup) -> GroupMetadataValue:
    """What Kafka writes for a group the moment it is created (newEmptyGroupMetadataRecord):
    no members, no protocol, generation 0, whoever joined first.  A restart before the first
    rebalance completes then loads an Empty group that anyone can join."""
    return GroupMetadataValue(
        protocol_type="", generation=0, protocol=None, leader=None,
        current_state_timestamp=-1 if group.state_timestamp is None else group.state_timestamp,
        members=[])


class Rebalancer:
    """Kafka's classic group machinery: generations, timers, parked answers.  The request
    entry points (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) are in ``GroupMembership``."""

    def __init__(
        self,
        config: GroupCoordinatorConfig,
        timer: Timer,
        groups: dict[str, ClassicGroup],
        write: Writer,
    ):
        self.config = config
        self.timer = timer
        self.clock = timer.clock
        self.groups = groups
        self._write = write

    # -- persistence ---------------------------------------------------------------------------
    def _store(self, group: ClassicGroup, assignment: dict[str, bytes] | None) -> int:
        """Writes the group's metadata record (``assignment`` None: the empty record of a new
        group); returns the error clients should see, or NONE."""
        value = (empty_group_metadata_value(group) if assignment is None
                 else group_metadata_value(group, assignment))
        record = group_metadata_record(group.group_id, value)
        try:
            self._write(group.group_id, [record])
        except KafkaError as e:
            log.warning("failed to store metadata of group %s: %s", group.group_id, e)
            return append_error(e.code)
        return ErrorCode.NONE

    def get_or_create(self, group_id: str) -> ClassicGroup:
        group = self.groups.get(group_id)
        if group is None:
            group = ClassicGroup(group_id, self.clock)
            self.groups[group_id] = group
        return group

    def _join_answer(self, group: ClassicGroup, member_id: str, members: list,
                     *, leader: str | None = None, skip_assignment: bool = False) -> JoinResult:
        return JoinResult(
            error=ErrorCode.NONE, member_id=member_id, generation_id=group.generation_id,
            protocol_type=group.protocol_type, protocol_name=group.protocol_name,
            leader=(group.leader_id if leader is None else leader) or "",
            skip_assignment=skip_assignment, members=members)

    # -- rebalance machinery -------------------------------------------------------------------
    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)
        else:
            self._maybe_complete_join_phase(group)

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if (group.is_in(PREPARING) and group.previous_state is not EMPTY
                and group.has_all_members_joined()):
            self._complete_join(group)

    def _prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(COMPLETING):
            self._reset_and_propagate_assignment(group, ErrorCode.REBALANCE_IN_PROGRESS)
        group.pending_sync_members.clear()
        self.timer.cancel(_sync_key(group.group_id))
        initial = group.is_in(EMPTY)
        if initial:
            delay = self.config.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            gid = group.group_id
            self.timer.schedule(_join_key(gid), delay,
                                lambda: self._try_complete_initial_rebalance(gid, delay, remaining))
        group.transition_to(PREPARING)
        log.info("preparing to rebalance group %s with old generation %d (%s)",
                 group.group_id, group.generation_id, reason)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join(group)
            else:
                self._schedule_join_timeout(group)

    def _schedule_join_timeout(self, group: ClassicGroup) -> None:
        gid = group.group_id
        self.timer.schedule(_join_key(gid), group.rebalance_timeout_ms(),
                            lambda: self._complete_join_by_id(gid))

    def _try_complete_initial_rebalance(self, group_id: str, delay: int, remaining: int) -> None:
        group = self.groups.get(group_id)
        if group is None:
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.config.initial_rebalance_delay_ms, remaining)
            new_remaining = max(remaining - delay, 0)
            self.timer.schedule(
                _join_key(group_id), new_delay,
                lambda: self._try_complete_initial_rebalance(group_id, new_delay, new_remaining))
        else:
            self._complete_join(group)

    def _complete_join_by_id(self, group_id: str) -> None:
        group = self.groups.get(group_id)
        if group is not None:
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        gid = group.group_id
        self.timer.cancel(_join_key(gid))
        failed = [m for m in group.not_yet_rejoined() if not m.is_static]
        for m in failed:
            group.remove(m.member_id)
            self.timer.cancel(heartbeat_key(gid, m.member_id))
        if failed:
            log.info("group %s removed dynamic members that did not rejoin: %s",
                     gid, [m.member_id for m in failed])
        if group.is_in(DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # nobody rejoined: wait another rebalance timeout for sessions to expire
            self._schedule_join_timeout(group)
            return
        group.init_next_generation()
        if group.is_in(EMPTY):
            log.info("group %s with generation %d is now empty", gid, group.generation_id)
            self._store(group, {})
            return
        log.info("stabilized group %s generation %d (%s) with %d members", gid,
                 group.generation_id, group.protocol_name, len(group.members))
        all_members = group.current_members()
        for member in list(group.members.values()):
            leader = group.is_leader(member.member_id)
            group.complete_join(member, self._join_answer(
                group, member.member_id, all_members if leader else []))
            self._reschedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        generation = group.generation_id
        self.timer.schedule(_sync_key(gid), group.rebalance_timeout_ms(),
                            lambda: self._expire_pending_sync(gid, generation))

    def _reset_and_propagate_assignment(self, group: ClassicGroup, error: int) -> None:
        for m in group.members.values():
            m.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: ClassicGroup, error: int) -> None:
        ok = error == ErrorCode.NONE
        for member in list(group.members.values()):
            result = SyncResult(
                error=error, protocol_type=group.protocol_type if ok else None,
                protocol_name=group.protocol_name if ok else None, assignment=member.assignment)
            if group.complete_sync(member, result):
                self._reschedule_heartbeat(group, member)

    def _reschedule_heartbeat(self, group: ClassicGroup, member: Member,
                              timeout_ms: int | None = None) -> None:
        gid, mid = group.group_id, member.member_id
        self.timer.schedule(
            heartbeat_key(gid, mid),
            member.session_timeout_ms if timeout_ms is None else timeout_ms,
            lambda: self._expire_heartbeat(gid, mid))

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        if group is None or group.is_in(DEAD):
            return
        if group.is_pending_member(member_id):
            log.info("pending member %s of group %s expired", member_id, group_id)
            group.remove(member_id)
            if group.is_in(PREPARING) and group.has_all_members_joined():
                self._complete_join(group)
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return
        log.info("member %s of group %s failed its session timeout, removing it",
                 member_id, group_id)
        group.complete_join(member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member_id)
        if group.is_in(STABLE, COMPLETING):
            self._maybe_prepare_rebalance_or_complete_join(group, f"{member_id} expired")
        elif group.is_in(PREPARING) and group.has_all_members_joined():
            self._complete_join(group)

    def _expire_pending_sync(self, group_id: str, generation: int) -> None:
        group = self.groups.get(group_id)
        if group is None or generation != group.generation_id:
            return
        if group.is_in(COMPLETING, STABLE) and not group.has_received_sync_from_all():
            missing = list(group.pending_sync_members)
            for member_id in missing:
                group.remove(member_id)
                self.timer.cancel(heartbeat_key(group_id, member_id))
            log.info("group %s removed members that did not sync: %s", group_id, missing)
            self._prepare_rebalance(group, "pending sync expired")

    def reschedule_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        """An offset commit in Stable/PreparingRebalance keeps the member's session alive."""
        member = group.members.get(member_id)
        if member is not None:
            self._reschedule_heartbeat(group, member)

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.is_in(DEAD, EMPTY, PREPARING) or group.has_received_sync_from_all():
            self.timer.cancel(_sync_key(group.group_id))

    # -- loading and unloading -----------------------------------------------------------------
    def on_loaded(self) -> None:
        """After replay: sessions of the loaded members start now (they must heartbeat)."""
        for group in list(self.groups.values()):
            for member in list(group.members.values()):
                self._reschedule_heartbeat(group, member)
            if len(group.members) > self.config.max_group_size:
                self._prepare_rebalance(group, "loaded group is over group.max.size")

    def unload(self, error: int = ErrorCode.NOT_COORDINATOR) -> None:
        """Answers every parked request (shutdown): clients find the coordinator again."""
        for group in self.groups.values():
            for member in list(group.members.values()):
                group.complete_join(member, JoinResult(error, member_id=member.member_id))
                group.complete_sync(member, SyncResult(error))
