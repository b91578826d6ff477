"""The classic group protocol's requests: JoinGroup, SyncGroup, Heartbeat, LeaveGroup.

Each follows Kafka's GroupMetadataManager for classic groups; the generation machinery they
drive (rebalance preparation and completion, session and sync timeouts) is ``Rebalancer``.
Parked requests are ``Pending`` values completed later.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pykafkad.coordinator.group import (
    UNKNOWN_MEMBER_ID,
    ClassicGroup,
    JoinResult,
    Member,
    Pending,
    Protocols,
    SyncResult,
)
from pykafkad.coordinator.rebalance import (
    COMPLETING,
    DEAD,
    EMPTY,
    PREPARING,
    STABLE,
    Rebalancer,
    heartbeat_key,
)
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.coordinator")


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


class GroupMembership(Rebalancer):
    """The request entry points of Kafka's classic group protocol."""

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
            # as Kafka: a new group is made durable at once, as an empty group (no members),
            # whoever joined it first
            error = self._store(group, None)
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
            self.timer.schedule(heartbeat_key(group.group_id, new_id), req.session_timeout_ms,
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
                self.timer.cancel(heartbeat_key(group_id, member_id))
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
        self.timer.cancel(heartbeat_key(group.group_id, member_id))
        log.info("member %s left group %s (reason: %s)", member_id, group.group_id,
                 reason or "not provided")
        group.complete_join(member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID))
        # not in Kafka: a SyncGroup parked on another connection would never be answered
        group.complete_sync(member, SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member_id)


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current
