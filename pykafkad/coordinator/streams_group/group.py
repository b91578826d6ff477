"""One streams group: its epochs, topology, members and their reconciliation towards the
target assignment (Kafka's StreamsGroup and streams CurrentAssignmentBuilder): a member first
gives up the tasks it must revoke (keeping its epoch), then moves to the target epoch and gets
each new active task only once no other member still owns it."""

from __future__ import annotations

from dataclasses import dataclass, field

from pykafkad.coordinator.streams_group.assignor import TaskSets
from pykafkad.coordinator.streams_group.topology import ConfiguredTopology, Topology

STABLE = "STABLE"
UNREVOKED_TASKS = "UNREVOKED_TASKS"
UNRELEASED_TASKS = "UNRELEASED_TASKS"


@dataclass
class StreamsMember:
    member_id: str
    client_id: str
    client_host: str
    process_id: str = ""
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology_epoch: int = 0
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: str = STABLE
    assigned: TaskSets = field(default_factory=TaskSets)
    pending_revocation: TaskSets = field(default_factory=TaskSets)
    #: what the member was last told, to answer null ("unchanged") afterwards
    last_sent: TaskSets | None = None
    #: the changelog offset sums it last reported per task (TaskOffsets), kept in memory only
    #: as Kafka does; the assignor prefers members with a task's state for it
    task_offsets: dict = field(default_factory=dict)
    #: the end offsets of those changelogs it last reported (TaskEndOffsets)
    task_end_offsets: dict = field(default_factory=dict)


@dataclass
class StreamsGroup:
    group_id: str
    created_ms: int
    group_epoch: int = 0
    target_epoch: int = 0
    topology: Topology | None = None
    configured: ConfiguredTopology | None = None
    members: dict[str, StreamsMember] = field(default_factory=dict)
    target: dict[str, TaskSets] = field(default_factory=dict)
    endpoint_epoch: int = 0
    shutdown_requested: bool = False
    #: an empty target was given while the initial rebalance delay ran
    delayed_assignment: bool = False

    @property
    def state(self) -> str:
        """Kafka's StreamsGroupState names as DescribeGroups / ListGroups print them."""
        if not self.members:
            return "Empty"
        if self.topology is None or self.configured is None or not self.configured.ready:
            return "NotReady"
        if self.group_epoch != self.target_epoch:
            return "Assigning"
        if any(m.member_epoch != self.target_epoch or m.state != STABLE
               for m in self.members.values()):  # a static member away (-2) counts too
            return "Reconciling"
        return "Stable"

    def owned_active_elsewhere(self, member_id: str) -> set:
        out = set()
        for m in self.members.values():
            if m.member_id != member_id:
                out |= m.assigned.active | m.pending_revocation.active
        return out

    def reconcile(self, m: StreamsMember, owned: TaskSets | None) -> None:
        """Moves ``m`` along towards its target; ``owned`` is what the member reported
        (None: unchanged since its last heartbeat)."""
        target = self.target.get(m.member_id, TaskSets())
        if m.member_epoch < 0:  # a static member away until its session ends
            return
        if m.state == UNREVOKED_TASKS:
            if owned is not None and not (owned.active & m.pending_revocation.active):
                m.pending_revocation = TaskSets()
            elif owned is None or m.pending_revocation.active:
                return
        if m.member_epoch == self.target_epoch and m.state == STABLE:
            return
        revoke = m.assigned.active - target.active
        if m.member_epoch != self.target_epoch and revoke:
            m.pending_revocation = TaskSets(revoke, set(), set())
            m.assigned = TaskSets(m.assigned.active & target.active,
                                  m.assigned.standby & target.standby,
                                  m.assigned.warmup & target.warmup)
            m.state = UNREVOKED_TASKS
            return
        busy = self.owned_active_elsewhere(m.member_id)
        active = {t for t in target.active if t not in busy}
        if m.member_epoch != self.target_epoch:
            m.previous_member_epoch, m.member_epoch = m.member_epoch, self.target_epoch
        m.assigned = TaskSets(active, set(target.standby), set(target.warmup))
        m.state = UNRELEASED_TASKS if active != target.active else STABLE
