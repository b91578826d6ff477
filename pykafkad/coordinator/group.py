"""A classic consumer group (JoinGroup/SyncGroup protocol): its members and their bookkeeping.

This is Kafka's ``ClassicGroup``/``ClassicGroupMember``: who is in the group, who is awaiting a
JoinGroup or SyncGroup answer, which static instance maps to which member id, which protocols
every member supports and which one the group votes for.  The rebalance state machine that
drives it lives in ``membership.py``.
"""

from __future__ import annotations

import enum
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from wire.errors import ErrorCode, KafkaError
from wire.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from wire.primitives import Reader

CONSUMER_PROTOCOL_TYPE = "consumer"
UNKNOWN_MEMBER_ID = ""

T = TypeVar("T")


class GroupState(enum.Enum):
    """Kafka's classic group states; ``value`` is the name clients see (DescribeGroups,
    ListGroups)."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_VALID_PREVIOUS = {
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE},
    GroupState.PREPARING_REBALANCE: {
        GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY},
    GroupState.COMPLETING_REBALANCE: {GroupState.PREPARING_REBALANCE},
    GroupState.STABLE: {GroupState.COMPLETING_REBALANCE},
    GroupState.DEAD: set(GroupState),
}


class Pending(Generic[T]):
    """A response that a later event completes (Kafka's CompletableFuture for a parked JoinGroup
    or SyncGroup).  Synchronous: callbacks run inside ``complete``."""

    __slots__ = ("value", "done", "_callbacks")

    def __init__(self) -> None:
        self.value: T | None = None
        self.done = False
        self._callbacks: list[Callable[[T], None]] = []

    @classmethod
    def completed(cls, value: T) -> Pending[T]:
        p: Pending[T] = cls()
        p.complete(value)
        return p

    def complete(self, value: T) -> bool:
        if self.done:
            return False
        self.value = value
        self.done = True
        callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn(value)
        return True

    def add_done_callback(self, fn: Callable[[T], None]) -> None:
        if self.done:
            fn(self.value)  # type: ignore[arg-type]
        else:
            self._callbacks.append(fn)


@dataclass
class JoinResult:
    error: int = ErrorCode.NONE
    member_id: str = UNKNOWN_MEMBER_ID
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    #: (member id, group instance id, metadata), only for the leader
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


@dataclass
class SyncResult:
    error: int = ErrorCode.NONE
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


Protocols = list[tuple[str, bytes]]


class Member:
    """Kafka's ``ClassicGroupMember``."""

    __slots__ = (
        "member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout_ms",
        "session_timeout_ms", "protocol_type", "protocols", "assignment", "awaiting_join",
        "awaiting_sync", "is_new",
    )

    def __init__(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Protocols,
        assignment: bytes = b"",
    ):
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.protocols = list(protocols)
        self.assignment = assignment
        self.awaiting_join: Pending[JoinResult] | None = None
        self.awaiting_sync: Pending[SyncResult] | None = None
        self.is_new = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.protocols}

    def metadata(self, protocol: str) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: Protocols) -> bool:
        return [(n, bytes(m)) for n, m in protocols] == [(n, bytes(m)) for n, m in self.protocols]

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def has_satisfied_heartbeat(self) -> bool:
        """New members may expire while awaiting join; others awaiting a rebalance answer count
        as alive."""
        if self.is_new:
            return False
        return self.awaiting_join is not None or self.awaiting_sync is not None


class ClassicGroup:
    """Kafka's ``ClassicGroup``: membership bookkeeping, state transitions, protocol vote."""

    def __init__(
        self,
        group_id: str,
        clock: Callable[[], int],
        state: GroupState = GroupState.EMPTY,
        *,
        generation_id: int = 0,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        leader_id: str | None = None,
        state_timestamp: int | None = None,
    ):
        self.group_id = group_id
        self.clock = clock
        self.state = state
        self.previous_state = GroupState.DEAD
        self.state_timestamp: int | None = clock() if state_timestamp is None else state_timestamp
        self.generation_id = generation_id
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.leader_id = leader_id
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}
        self.pending_join_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.num_awaiting_join = 0
        self.supported_protocols: Counter[str] = Counter()
        self.subscribed_topics: set[str] | None = None
        self.new_member_added = False

    # -- state ---------------------------------------------------------------------------------
    def is_in(self, *states: GroupState) -> bool:
        return self.state in states

    @property
    def is_empty(self) -> bool:
        return self.state is GroupState.EMPTY

    def can_rebalance(self) -> bool:
        return self.state in _VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    def transition_to(self, state: GroupState) -> None:
        if self.state not in _VALID_PREVIOUS[state]:
            raise RuntimeError(
                f"group {self.group_id}: invalid transition {self.state.value} -> {state.value}")
        self.previous_state = self.state
        self.state = state
        self.state_timestamp = self.clock()

    @property
    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    @property
    def is_simple(self) -> bool:
        """A group that only stores offsets (assign() + commit): no protocol, no members."""
        return self.protocol_type is None and not self.members and not self.pending_join_members

    # -- members -------------------------------------------------------------------------------
    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> Member:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id is not None and self.leader_id == member_id

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def add_pending_member(self, member_id: str) -> None:
        self.pending_join_members.add(member_id)

    def static_member_id(self, instance_id: str) -> str | None:
        return self.static_members.get(instance_id)

    def add(self, member: Member, future: Pending[JoinResult] | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise RuntimeError(f"static member {member.group_instance_id} already present")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise RuntimeError("the group and member's protocol type must be the same")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self.supported_protocols.update(member.protocol_names)
        member.awaiting_join = future
        if future is not None:
            self.num_awaiting_join += 1
        self.pending_join_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self.supported_protocols.subtract(member.protocol_names)
            if member.awaiting_join is not None:
                self.num_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def update_member(
        self,
        member: Member,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        future: Pending[JoinResult] | None,
    ) -> None:
        self.supported_protocols.subtract(member.protocol_names)
        member.protocols = list(protocols)
        self.supported_protocols.update(member.protocol_names)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if future is not None and member.awaiting_join is None:
            self.num_awaiting_join += 1
        elif future is None and member.awaiting_join is not None:
            self.num_awaiting_join -= 1
        member.awaiting_join = future

    def replace_static_member(self, instance_id: str, old_member_id: str, new_member_id: str) -> Member:
        """A static member rejoined with an unknown member id: the old id is fenced at once."""
        old = self.members.pop(old_member_id)
        self.complete_join(old, JoinResult(
            error=ErrorCode.FENCED_INSTANCE_ID, member_id=old_member_id, protocol_name=None))
        self.complete_sync(old, SyncResult(error=ErrorCode.FENCED_INSTANCE_ID))
        new = Member(new_member_id, old.group_instance_id, old.client_id, old.client_host,
                     old.rebalance_timeout_ms, old.session_timeout_ms, old.protocol_type,
                     old.protocols, old.assignment)
        self.members[new_member_id] = new
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        return new

    def maybe_elect_new_joined_leader(self) -> bool:
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join is not None:
            return True
        for member in self.members.values():
            if member.awaiting_join is not None:
                self.leader_id = member.member_id
                return True
        return False

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self.members.values() if m.awaiting_join is None]

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_join_members

    def has_received_sync_from_all(self) -> bool:
        return not self.pending_sync_members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def generate_member_id(self, client_id: str, instance_id: str | None) -> str:
        return f"{instance_id if instance_id is not None else client_id}-{uuid.uuid4()}"

    def validate_member(self, member_id: str, instance_id: str | None) -> None:
        """Raises UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID as Kafka's validateMember."""
        if instance_id is not None:
            existing = self.static_members.get(instance_id)
            if existing is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise KafkaError(ErrorCode.FENCED_INSTANCE_ID)
        if member_id not in self.members:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID)

    # -- futures -------------------------------------------------------------------------------
    def complete_join(self, member: Member, result: JoinResult) -> bool:
        if member.awaiting_join is None:
            return False
        future, member.awaiting_join = member.awaiting_join, None
        self.num_awaiting_join -= 1
        future.complete(result)
        return True

    def complete_sync(self, member: Member, result: SyncResult) -> bool:
        if member.awaiting_sync is None:
            return False
        future, member.awaiting_sync = member.awaiting_sync, None
        future.complete(result)
        return True

    # -- protocols -----------------------------------------------------------------------------
    def supports_protocols(self, protocol_type: str, names: set[str]) -> bool:
        if self.is_empty:
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and any(
            self.supported_protocols[n] == len(self.members) for n in names)

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {name for name, count in self.supported_protocols.items() if count == n}

    def select_protocol(self) -> str:
        """Every member votes for its most preferred common protocol; most votes wins (ties go
        to the protocol the leader prefers, for determinism)."""
        candidates = self.candidate_protocols()
        votes = Counter(m.vote(candidates) for m in self.members.values())
        best = max(votes.values())
        tied = {name for name, count in votes.items() if count == best}
        leader = self.members.get(self.leader_id) if self.leader_id else None
        if leader is not None:
            for name, _ in leader.protocols:
                if name in tied:
                    return name
        return sorted(tied)[0]

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.EMPTY)
        self.pending_sync_members.clear()

    def compute_subscribed_topics(self) -> set[str] | None:
        """Topics of every member's subscription (consumer protocol, read as its v0 prefix), or
        None when they cannot be known."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for m in self.members.values():
                r = Reader(m.metadata(self.protocol_name))
                r.int16()
                topics.update(ConsumerProtocolSubscription.read(r, 0).topics)
        except Exception:  # noqa: BLE001 - a client's bytes; Kafka logs and gives up too
            return None
        return topics

    def is_subscribed_to(self, topic: str) -> bool:
        if self.subscribed_topics is None:
            return self.uses_consumer_protocol
        return topic in self.subscribed_topics

    def current_members(self) -> list[tuple[str, str | None, bytes]]:
        assert self.protocol_name is not None
        return [(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                for m in self.members.values()]

    def group_assignment(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members.values()}

    def __repr__(self) -> str:
        return (f"ClassicGroup({self.group_id!r}, {self.state.value}, gen={self.generation_id}, "
                f"members={list(self.members)})")
