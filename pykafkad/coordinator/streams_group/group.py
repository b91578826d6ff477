"""One streams group: its epochs, topology, members and their reconciliation towards the
target assignment (Kafka's StreamsGroup and streams CurrentAssignmentBuilder): a member first
gives up the tasks it must revoke (keeping its epoch), then moves to the target epoch and gets
each new task only once it is released (``StreamsGroup._next``)."""

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

    def _holders(self) -> tuple[dict, dict, dict]:
        """Per task, the process running it as active, and the processes holding it as a
        standby and as a warm-up: what members have, assigned or still to revoke."""
        active: dict = {}
        standby: dict = {}
        warmup: dict = {}
        for m in self.members.values():
            for held in (m.assigned, m.pending_revocation):
                for t in held.active:
                    active[t] = m.process_id
                for t in held.standby:
                    standby.setdefault(t, set()).add(m.process_id)
                for t in held.warmup:
                    warmup.setdefault(t, set()).add(m.process_id)
        return active, standby, warmup

    def reconcile(self, m: StreamsMember, owned: TaskSets | None) -> None:
        """Moves ``m`` along towards its target (Kafka 4.4's streams CurrentAssignmentBuilder);
        ``owned`` is what the member reported (None: not reported in this heartbeat)."""
        if m.member_epoch < 0:  # a static member away until its session ends
            return
        if m.state == STABLE:
            if m.member_epoch != self.target_epoch:
                self._next(m, m.member_epoch, owned)
        elif m.state == UNREVOKED_TASKS:
            if not _not_released(owned, m.pending_revocation):
                self._next(m, m.member_epoch + 1, owned)
        else:
            self._next(m, m.member_epoch, owned)

    def _next(self, m: StreamsMember, epoch: int, owned: TaskSets | None) -> None:
        """One step: tasks no longer targeted are revoked first; new ones are granted only
        once released.  An active task needs no owner anywhere and no other member of this
        process holding it as a standby or warm-up; a standby or warm-up task needs no other
        member of this process holding it in any role.  The member's own task changes role
        in place: an active task demoted to standby, a standby turned warm-up and back, and
        a standby or warm-up promoted to active (kept until the active task is granted)."""
        target = self.target.get(m.member_id, TaskSets())
        cur = m.assigned
        pid = m.process_id
        active_at, standby_at, warmup_at = self._holders()

        def held_by_other_here(where: dict, mine: set, t) -> bool:
            return pid in where.get(t, ()) and t not in mine

        def unreleased_active(t) -> bool:
            return (active_at.get(t) is not None
                    or held_by_other_here(standby_at, cur.standby, t)
                    or held_by_other_here(warmup_at, cur.warmup, t))

        def unreleased_standby(t) -> bool:
            return ((active_at.get(t) == pid and t not in cur.active)
                    or pid in standby_at.get(t, ())
                    or held_by_other_here(warmup_at, cur.warmup, t))

        def unreleased_warmup(t) -> bool:
            return (active_at.get(t) == pid
                    or held_by_other_here(standby_at, cur.standby, t)
                    or pid in warmup_at.get(t, ()))

        def difference(current: set, wanted: set, unreleased):
            kept = current & wanted
            pending = wanted - kept
            blocked = {t for t in pending if unreleased(t)}
            return kept, current - kept, pending - blocked, bool(blocked)

        a_kept, a_revoke, a_new, a_blocked = difference(cur.active, target.active,
                                                        unreleased_active)
        s_kept, s_revoke, s_new, s_blocked = difference(cur.standby, target.standby,
                                                        unreleased_standby)
        w_kept, w_revoke, w_new, w_blocked = difference(cur.warmup, target.warmup,
                                                        unreleased_warmup)
        for t in cur.active & s_new:  # demoted: the standby at once, the active revoked
            s_new.discard(t)
            s_kept.add(t)
        for t in cur.standby & w_new:  # standby -> warm-up, no revocation needed
            w_new.discard(t)
            w_kept.add(t)
            s_revoke.discard(t)
        for t in cur.warmup & s_new:  # warm-up -> standby
            s_new.discard(t)
            s_kept.add(t)
            w_revoke.discard(t)
        s_revoke -= target.active  # promoted ones are never revoked
        w_revoke -= target.active
        revocation = TaskSets(a_revoke, s_revoke, w_revoke)
        revoking = bool(revocation.all()) and _not_released(owned, revocation)
        for t in cur.standby & target.active:  # kept until the active task is granted
            if revoking or t not in a_new:
                s_kept.add(t)
        for t in cur.warmup & target.active:
            if revoking or t not in a_new:
                w_kept.add(t)
        kept = TaskSets(a_kept, s_kept, w_kept)
        new = TaskSets(a_new, s_new, w_new)
        blocked = a_blocked or s_blocked or w_blocked
        if revoking:
            self._set_epoch(m, epoch)
            m.assigned, m.pending_revocation = kept, revocation
            m.state = UNREVOKED_TASKS
            return
        self._set_epoch(m, self.target_epoch)
        m.pending_revocation = TaskSets()
        m.assigned = TaskSets(kept.active | new.active, kept.standby | new.standby,
                              kept.warmup | new.warmup)
        m.state = UNRELEASED_TASKS if blocked else STABLE

    @staticmethod
    def _set_epoch(m: StreamsMember, epoch: int) -> None:
        """As Kafka's updateMemberEpoch: the old epoch becomes the previous one, even when
        the epoch stays."""
        m.previous_member_epoch, m.member_epoch = m.member_epoch, epoch


def _not_released(owned: TaskSets | None, tasks: TaskSets) -> bool:
    """Revocation is acknowledged by a heartbeat that reports owned tasks without them."""
    return owned is None or bool(owned.active & tasks.active or owned.standby & tasks.standby
                                 or owned.warmup & tasks.warmup)
