"""The classic rebalance protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and their timers.

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
from dataclasses import dataclass

from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.group import (
    UNKNOWN_MEMBER_ID,
    ClassicGroup,
    GroupState,
    JoinResult,
    Member,
    Pending,
    Protocols,
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


@dataclass
class JoinRequest:
    group_id: str
    member_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    reason: str | None = None
    #: JoinGroup version: v4+ requires a known member id, v9+ may skip the assignment
    api_version: int = 9


@dataclass
class SyncRequest:
    group_id: str
    generation_id: int
    member_id: str
    assignments: dict[str, bytes]
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None


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


def _heartbeat_key(group_id: str, member_id: str) -> str:
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


class GroupMembership:
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
    def _store(self, group: ClassicGroup, assignment: dict[str, bytes]) -> int:
        """Writes the group's metadata record; returns the error clients should see, or NONE."""
        record = group_metadata_record(group.group_id, group_metadata_value(group, assignment))
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

    # -- JoinGroup -----------------------------------------------------------------------------
    def join_group(self, req: JoinRequest) -> Pending[JoinResult]:
        future: Pending[JoinResult] = Pending()
        if not req.group_id:
            future.complete(JoinResult(ErrorCode.INVALID_GROUP_ID, member_id=req.member_id))
            return future
        if not (self.config.min_session_timeout_ms <= req.session_timeout_ms
                <= self.config.max_session_timeout_ms):
            future.complete(JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, member_id=req.member_id))
            return future
        unknown = req.member_id == UNKNOWN_MEMBER_ID
        group = self.groups.get(req.group_id)
        is_new_group = group is None
        if group is None:
            if not unknown:
                future.complete(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=req.member_id))
                return future
            group = self.get_or_create(req.group_id)
        if not self._accept_joining_member(group, req.member_id):
            group.remove(req.member_id)
            future.complete(JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED))
        elif unknown:
            self._join_new_member(req, group, future)
        else:
            self._join_existing_member(req, group, future)
        if is_new_group and req.group_id in self.groups:
            # as Kafka: a new group is made durable at once (an empty group metadata record)
            error = self._store(group, {})
            if error:
                self.groups.pop(req.group_id, None)
                future.complete(JoinResult(error))
        return future

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        limit = self.config.max_group_size
        if group.is_in(EMPTY, DEAD):
            return True
        if group.is_in(PREPARING):
            member = group.members.get(member_id)
            return (member is not None and member.awaiting_join is not None) or \
                group.num_awaiting_join < limit
        return member_id in group.members or len(group.members) < limit

    def _join_new_member(self, req: JoinRequest, group: ClassicGroup, future: Pending) -> None:
        if group.is_in(DEAD):
            future.complete(JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(req.protocol_type, {n for n, _ in req.protocols}):
            future.complete(JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_id = group.generate_member_id(req.client_id, req.group_instance_id)
        if req.group_instance_id is not None:
            existing = group.static_member_id(req.group_instance_id)
            if existing is not None:
                log.info("static member %s of group %s rejoins with an unknown member id: "
                         "replacing member %s", req.group_instance_id, group.group_id, existing)
                self._update_static_member(req, group, existing, new_id, future)
            else:
                self._add_member(req, group, new_id, future)
        elif req.api_version >= 4:
            # KIP-394: hand out the member id first, and count the member only when it rejoins
            group.add_pending_member(new_id)
            self.timer.schedule(_heartbeat_key(group.group_id, new_id), req.session_timeout_ms,
                                lambda: self._expire_heartbeat(group.group_id, new_id))
            future.complete(JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=new_id))
        else:
            self._add_member(req, group, new_id, future)

    def _join_existing_member(self, req: JoinRequest, group: ClassicGroup, future: Pending) -> None:
        member_id = req.member_id
        if group.is_in(DEAD):
            future.complete(JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id=member_id))
            return
        if not group.supports_protocols(req.protocol_type, {n for n, _ in req.protocols}):
            future.complete(JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id))
            return
        if group.is_pending_member(member_id):
            if req.group_instance_id is not None:
                future.complete(JoinResult(ErrorCode.UNKNOWN_SERVER_ERROR, member_id=member_id))
                return
            self._add_member(req, group, member_id, future)
            return
        try:
            group.validate_member(member_id, req.group_instance_id)
        except KafkaError as e:
            future.complete(JoinResult(e.code, member_id=member_id))
            return
        member = group.member(member_id)
        if group.is_in(PREPARING):
            self._update_member(req, group, member, future)
        elif group.is_in(COMPLETING):
            if member.matches(req.protocols):
                # it probably missed the JoinGroup answer: answer the current generation again
                future.complete(self._join_answer(
                    group, member_id, group.current_members() if group.is_leader(member_id) else []))
            else:
                self._update_member(req, group, member, future)
        elif group.is_in(STABLE):
            if group.is_leader(member_id) or not member.matches(req.protocols):
                # a leader rejoining forces a rebalance (e.g. the topic metadata changed)
                self._update_member(req, group, member, future)
            else:
                future.complete(self._join_answer(group, member_id, []))
        else:
            future.complete(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id))

    def _join_answer(self, group: ClassicGroup, member_id: str, members: list,
                     *, leader: str | None = None, skip_assignment: bool = False) -> JoinResult:
        return JoinResult(
            error=ErrorCode.NONE, member_id=member_id, generation_id=group.generation_id,
            protocol_type=group.protocol_type, protocol_name=group.protocol_name,
            leader=(group.leader_id if leader is None else leader) or "",
            skip_assignment=skip_assignment, members=members)

    def _update_member(self, req: JoinRequest, group: ClassicGroup, member: Member,
                       future: Pending | None) -> None:
        group.update_member(member, req.protocols, req.rebalance_timeout_ms,
                            req.session_timeout_ms, future)
        self._maybe_prepare_rebalance_or_complete_join(group, f"member {member.member_id} rejoined")

    def _add_member(self, req: JoinRequest, group: ClassicGroup, member_id: str,
                    future: Pending) -> None:
        member = Member(member_id, req.group_instance_id, req.client_id, req.client_host,
                        req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
                        req.protocols)
        member.is_new = True
        if group.is_in(PREPARING) and group.previous_state is EMPTY:
            group.new_member_added = True  # lets the initial rebalance wait a little longer
        group.add(member, future)
        # a parked JoinGroup cannot heartbeat, and a client that gave up may retry with a new
        # id: new members get Kafka's fixed join timeout instead of their session timeout
        self._reschedule_heartbeat(group, member, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance_or_complete_join(group, f"adding new member {member_id}")

    def _update_static_member(self, req: JoinRequest, group: ClassicGroup, old_id: str,
                              new_id: str, future: Pending) -> None:
        current_leader = group.leader_id
        member = group.replace_static_member(req.group_instance_id, old_id, new_id)
        self._reschedule_heartbeat(group, member)
        old = (member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms)
        group.update_member(member, req.protocols, req.rebalance_timeout_ms,
                            req.session_timeout_ms, future)
        if group.is_in(STABLE):
            if group.protocol_name == group.select_protocol():
                # nothing the assignment depends on changed: no rebalance, just persist the id
                error = self._store(group, group.group_assignment())
                if error:
                    group.update_member(member, old[0], old[1], old[2], None)
                    restored = group.replace_static_member(req.group_instance_id, new_id, old_id)
                    self._reschedule_heartbeat(group, restored)
                    future.complete(JoinResult(
                        error, member_id=UNKNOWN_MEMBER_ID, generation_id=group.generation_id,
                        protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                        leader=current_leader or ""))
                elif req.api_version >= 9:
                    leader = group.is_leader(new_id)
                    group.complete_join(member, self._join_answer(
                        group, new_id, group.current_members() if leader else [],
                        skip_assignment=leader))
                else:
                    # the old leader id makes a rejoining leader act as a follower and keep
                    # the current assignment (KIP-345)
                    group.complete_join(member, self._join_answer(
                        group, new_id, [], leader=current_leader or ""))
            else:
                self._maybe_prepare_rebalance_or_complete_join(
                    group, f"static member {req.group_instance_id} changed the selected protocol")
        elif group.is_in(COMPLETING):
            # the leader may already be assigning with the old member id
            self._prepare_rebalance(group, f"static member {req.group_instance_id} rejoined")
        else:
            self._maybe_complete_join_phase(group)

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
            self.timer.cancel(_heartbeat_key(gid, m.member_id))
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
            _heartbeat_key(gid, mid),
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
                self.timer.cancel(_heartbeat_key(group_id, member_id))
            log.info("group %s removed members that did not sync: %s", group_id, missing)
            self._prepare_rebalance(group, "pending sync expired")

    def reschedule_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        """An offset commit in Stable/PreparingRebalance keeps the member's session alive."""
        member = group.members.get(member_id)
        if member is not None:
            self._reschedule_heartbeat(group, member)

    # -- SyncGroup -----------------------------------------------------------------------------
    def sync_group(self, req: SyncRequest) -> Pending[SyncResult]:
        future: Pending[SyncResult] = Pending()
        if not req.group_id:
            future.complete(SyncResult(ErrorCode.INVALID_GROUP_ID))
            return future
        group = self.groups.get(req.group_id)
        if group is None or group.is_empty:
            future.complete(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
            return future
        error = self._validate_sync(group, req)
        if error:
            future.complete(SyncResult(error))
        elif group.is_in(PREPARING):
            future.complete(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        elif group.is_in(COMPLETING):
            group.member(req.member_id).awaiting_sync = future
            self._remove_pending_sync_member(group, req.member_id)
            if group.is_leader(req.member_id):
                self._store_assignment(group, req)
        elif group.is_in(STABLE):
            self._remove_pending_sync_member(group, req.member_id)
            future.complete(SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name,
                                       group.member(req.member_id).assignment))
        return future

    def _validate_sync(self, group: ClassicGroup, req: SyncRequest) -> int:
        if group.is_in(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(req.member_id, req.group_instance_id)
        except KafkaError as e:
            return e.code
        if req.generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if _inconsistent(req.protocol_type, group.protocol_type) or \
                _inconsistent(req.protocol_name, group.protocol_name):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return ErrorCode.NONE

    def _store_assignment(self, group: ClassicGroup, req: SyncRequest) -> None:
        log.info("assignment received from leader %s of group %s for generation %d",
                 req.member_id, group.group_id, group.generation_id)
        assignment = {m: req.assignments.get(m, b"") for m in group.members}
        error = self._store(group, assignment)
        if not (group.is_in(COMPLETING) and req.generation_id == group.generation_id):
            return
        if error:
            self._reset_and_propagate_assignment(group, error)
            self._maybe_prepare_rebalance_or_complete_join(group, f"storing failed: {error}")
            return
        for m in group.members.values():
            m.assignment = assignment[m.member_id]
        self._propagate_assignment(group, ErrorCode.NONE)
        group.transition_to(STABLE)

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.is_in(DEAD, EMPTY, PREPARING) or group.has_received_sync_from_all():
            self.timer.cancel(_sync_key(group.group_id))

    # -- Heartbeat -----------------------------------------------------------------------------
    def heartbeat(self, group_id: str, member_id: str, instance_id: str | None,
                  generation_id: int) -> int:
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if group.is_in(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(member_id, instance_id)
        except KafkaError as e:
            return e.code
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if group.is_in(EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID
        self._reschedule_heartbeat(group, group.member(member_id))
        if group.is_in(PREPARING):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    # -- LeaveGroup ----------------------------------------------------------------------------
    def leave_group(
        self, group_id: str, members: list[tuple[str, str | None, str | None]]
    ) -> tuple[int, list[tuple[str, str | None, int]]]:
        """``members``: (member id, group instance id, reason).  Returns the top-level error and
        one (member id, group instance id, error) per member."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, []
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.NONE, [(m, i, ErrorCode.UNKNOWN_MEMBER_ID) for m, i, _ in members]
        if group.is_in(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        results = []
        left = []
        for member_id, instance_id, reason in members:
            error = ErrorCode.NONE
            if member_id == UNKNOWN_MEMBER_ID:
                # administrative removal of a static member by its instance id
                static_id = group.static_member_id(instance_id) if instance_id else None
                if static_id is None:
                    error = ErrorCode.UNKNOWN_MEMBER_ID
                else:
                    self._remove_member(group, static_id, reason)
            elif group.is_pending_member(member_id):
                group.remove(member_id)
                self.timer.cancel(_heartbeat_key(group_id, member_id))
            else:
                try:
                    group.validate_member(member_id, instance_id)
                    self._remove_member(group, member_id, reason)
                except KafkaError as e:
                    error = e.code
            results.append((member_id, instance_id, error))
            if not error:
                left.append(member_id or instance_id)
        if left:
            if group.is_in(STABLE, COMPLETING):
                self._maybe_prepare_rebalance_or_complete_join(group, f"{left} left the group")
            elif group.is_in(PREPARING):
                self._maybe_complete_join_phase(group)
        return ErrorCode.NONE, results

    def _remove_member(self, group: ClassicGroup, member_id: str, reason: str | None) -> None:
        member = group.member(member_id)
        self.timer.cancel(_heartbeat_key(group.group_id, member_id))
        log.info("member %s left group %s (reason: %s)", member_id, group.group_id,
                 reason or "not provided")
        group.complete_join(member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID))
        # not in Kafka: a SyncGroup parked on another connection would never be answered
        group.complete_sync(member, SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member_id)

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


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current
