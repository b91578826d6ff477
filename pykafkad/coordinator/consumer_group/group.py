"""A consumer group's state (KIP-848): group epoch, target assignment, members and the
partitions each one owns, as Kafka's ConsumerGroup/ConsumerGroupMember keep them."""

from __future__ import annotations

from dataclasses import dataclass, field

#: topic id -> partitions
Partitions = dict[bytes, set[int]]
#: topic id -> partition -> the member epoch at which the member was given it (KIP-1251)
AssignmentEpochs = dict[bytes, dict[int, int]]

STABLE = "stable"
UNREVOKED_PARTITIONS = "unrevoked_partitions"
UNRELEASED_PARTITIONS = "unreleased_partitions"
#: member epochs a leaving member sends
LEAVE_EPOCH = -1
LEAVE_STATIC_EPOCH = -2


@dataclass
class ClassicMemberMetadata:
    """What a member speaking the classic protocol (JoinGroup) inside a consumer group keeps:
    its session timeout and its JoinGroup protocols (name, ConsumerProtocolSubscription bytes)."""

    session_timeout_ms: int
    protocols: list[tuple[str, bytes]]

    @property
    def protocol_name(self) -> str:
        """The name the member's JoinGroup/SyncGroup answers carry (its first protocol)."""
        return self.protocols[0][0]


@dataclass
class ConsumerGroupMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = 300_000
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: str = STABLE
    assigned: Partitions = field(default_factory=dict)
    pending_revocation: Partitions = field(default_factory=dict)
    #: when each assigned partition was given to the member (see ``sync_assignment_epochs``)
    assignment_epochs: AssignmentEpochs = field(default_factory=dict)
    #: set when the member speaks the classic protocol (online migration)
    classic: ClassicMemberMetadata | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def sync_assignment_epochs(self) -> None:
        """Keeps an epoch for each partition the member holds (assigned or pending
        revocation): one it keeps keeps its epoch, one it was just given gets the member's
        current epoch (Kafka 4.4 tags each assigned
        partition with the epoch it was assigned at, to validate offset commits)."""
        epoch = max(self.member_epoch, 0)
        held: Partitions = {}
        for parts in (self.assigned, self.pending_revocation):
            for t, ps in parts.items():
                held.setdefault(t, set()).update(ps)
        self.assignment_epochs = {
            t: {p: self.assignment_epochs.get(t, {}).get(p, epoch) for p in ps}
            for t, ps in held.items() if ps}


@dataclass
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    #: member id -> its target partitions
    target: dict[str, Partitions] = field(default_factory=dict)
    #: topic name -> (topic id, partition count) the target was computed from (None: not
    #: known yet, after a load: the first look does not count as a change)
    subscription_metadata: dict[str, tuple[bytes, int]] | None = field(default_factory=dict)
    #: regex -> topic names it resolved to (a regex a member just brought is resolved after
    #: its heartbeat, as Kafka's asynchronous resolution: until then it matches nothing)
    resolved_regexes: dict[str, set[str]] = field(default_factory=dict)
    #: regex -> (metadata version, resolution time ms) of its ConsumerGroupRegularExpression
    regex_resolutions: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: KIP-1101's hash of the subscribed topics when the epoch was last bumped
    metadata_hash: int = 0
    #: when the last target assignment was computed (clock ms)
    assignment_time: int | None = None
    #: ... as written in the target assignment metadata (0: none, as for an emptied group)
    assignment_timestamp: int = 0
    #: a new group's epoch and target epoch (1) are not written until they change
    initial_epochs_unwritten: bool = False
    #: the log holds a ConsumerGroupPartitionMetadata value (written before Kafka 4.1): the
    #: next epoch bump tombstones it, as Kafka does
    has_partition_metadata_record: bool = False
    #: record key -> value as last written to __consumer_offsets
    persisted: dict[bytes, bytes] = field(default_factory=dict)
    #: records to write ahead of the group's own next ones (an upgraded classic group's
    #: tombstone goes in the same append as the consumer group's records, as in Kafka)
    leading_records: list[tuple[bytes, bytes | None]] = field(default_factory=list)

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        for m in self.members.values():
            if m.instance_id == instance_id:
                return m
        return None

    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        for m in self.members.values():
            if m.state != STABLE or m.member_epoch != self.assignment_epoch:
                return "Reconciling"
        return "Stable"

    def owner_of(self, topic_id: bytes, partition: int, other_than: str) -> str | None:
        """The member still holding the partition (assigned or pending revocation)."""
        for m in self.members.values():
            if m.member_id == other_than:
                continue
            if partition in m.assigned.get(topic_id, ()) or \
                    partition in m.pending_revocation.get(topic_id, ()):
                return m.member_id
        return None

    def num_classic_members(self) -> int:
        return sum(1 for m in self.members.values() if m.classic is not None)

    def all_members_use_classic_protocol_except(self, member_id: str) -> bool:
        """Kafka's allMembersUseClassicProtocolExcept: would a downgrade leave only classic
        members?"""
        member = self.members.get(member_id)
        return (member is not None and member.classic is None
                and self.num_classic_members() == len(self.members) - 1)

    def supports_classic_protocols(self, protocol_type: str, names: set[str]) -> bool:
        """Whether a classic member with these protocols may join (each classic member already
        in the group must support one of them)."""
        if protocol_type != "consumer":
            return False
        if not self.members:
            return bool(names)
        classic = [m for m in self.members.values() if m.classic is not None]
        return any(all(name in {n for n, _ in m.classic.protocols} for m in classic)
                   for name in names)

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """Whether a target partition of the member is still held by another member."""
        if member.state != UNRELEASED_PARTITIONS:
            return False
        for topic_id, parts in self.target.get(member.member_id, {}).items():
            held = member.assigned.get(topic_id, set())
            for p in parts - held:
                if self.owner_of(topic_id, p, member.member_id) is not None:
                    return True
        return False

    def subscribed_regexes(self) -> set[str]:
        return {m.subscribed_topic_regex for m in self.members.values()
                if m.subscribed_topic_regex is not None}

    def subscribed_topics(self) -> set[str]:
        out: set[str] = set()
        for m in self.members.values():
            out.update(m.subscribed_topic_names)
            if m.subscribed_topic_regex is not None:
                out.update(self.resolved_regexes.get(m.subscribed_topic_regex, ()))
        return out

    def preferred_assignor(self, default: str) -> str:
        """The server assignor most members asked for (Kafka's computePreferredServerAssignor)."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return default
        return max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
