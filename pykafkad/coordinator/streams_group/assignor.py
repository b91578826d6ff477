"""The server-side task assignor: Apache Kafka 4.4's default "sticky" streams assignor
(group-coordinator StickyTaskAssignor), step for step, ties included.

Active tasks go back to their previous owner, then to a previous standby, then to the least
loaded process; each task of a stateful subtopology gets ``num_standby`` standby replicas,
never on a process that already has the task (as active or standby).  Kafka 4.4 makes no
warm-up tasks (its assignment refiner hands the target back unchanged) and its assignor does
not look at racks, so neither does this one.  Ties between equally loaded processes and
members fall the way Kafka's HashMap and PriorityQueue orders make them (``java_order``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pykafkad.coordinator.streams_group.java_order import (
    JavaPriorityQueue,
    compare,
    hash_map_order,
)

log = logging.getLogger("pykafkad.coordinator.streams")

Task = tuple[str, int]


@dataclass
class TaskSets:
    active: set[Task] = field(default_factory=set)
    standby: set[Task] = field(default_factory=set)
    warmup: set[Task] = field(default_factory=set)

    def all(self) -> set[Task]:
        return self.active | self.standby | self.warmup

    def copy(self) -> TaskSets:
        return TaskSets(set(self.active), set(self.standby), set(self.warmup))

    def __eq__(self, other) -> bool:
        return (isinstance(other, TaskSets) and self.active == other.active
                and self.standby == other.standby and self.warmup == other.warmup)


@dataclass
class AssignorMember:
    member_id: str
    process_id: str
    #: the member's current assignment (Kafka gives the assignor what members own, not the
    #: previous target)
    previous: TaskSets
    #: the changelog offset sums the member reported (TaskOffsets): state it has on disk
    task_offsets: dict[Task, int] = field(default_factory=dict)


class TaskAssignorError(Exception):
    """Kafka's TaskAssignorException."""


class _Process:
    """Kafka's ProcessState: the members of one process and the tasks given to them."""

    def __init__(self, process_id: str):
        self.process_id = process_id
        self.capacity = 0
        self.load = float("inf")
        self.task_count = 0
        #: member id -> its task count, in the member map's (Java HashMap) order
        self.member_counts: dict[str, int] = {}
        self.active: dict[str, set[Task]] = {}
        self.standby: dict[str, set[Task]] = {}
        self.tasks: set[Task] = set()
        self._by_load: JavaPriorityQueue | None = None

    def add_member(self, member_id: str) -> None:
        self.member_counts[member_id] = 0
        self.member_counts = {k: self.member_counts[k]
                              for k in hash_map_order(self.member_counts)}
        self.capacity += 1
        self._compute_load()

    def _compute_load(self) -> None:
        self.load = -1.0 if self.capacity <= 0 else self.task_count / self.capacity

    def has_task(self, task: Task) -> bool:
        return task in self.tasks

    def _add(self, member_id: str, task: Task, active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if active else self.standby).setdefault(member_id, set()).add(task)
        count = self.member_counts[member_id] + 1
        self.member_counts[member_id] = count
        self._compute_load()
        return count

    def add_task(self, member_id: str, task: Task, active: bool) -> int:
        """To a given member; the members' heap is rebuilt on the next least-loaded add."""
        count = self._add(member_id, task, active)
        self._by_load = None
        return count

    def add_to_least_loaded(self, task: Task, active: bool) -> int:
        if not self.member_counts:
            return -1
        if len(self.member_counts) == 1:
            return self._add(next(iter(self.member_counts)), task, active)
        if self._by_load is None:
            self._by_load = JavaPriorityQueue(lambda a, b: compare(a[1], b[1]))
            self._by_load.add_all([mid, n] for mid, n in self.member_counts.items())
        entry = self._by_load.poll()
        if entry is None:
            raise TaskAssignorError(f"No members available to assign task {_name(task)}")
        entry[1] = self._add(entry[0], task, active)
        self._by_load.add(entry)
        return entry[1]


def _name(task: Task) -> str:
    return f"{task[0]}_{task[1]}"


def _per_member(tasks: int, members: int) -> int:
    return 0 if members == 0 else -(-tasks // members)


def _by_process_load(a: _Process, b: _Process) -> int:
    return compare(a.load, b.load)


class _State:
    """Kafka's LocalState: the quotas as they shrink while members fill up."""

    def __init__(self, members: list[AssignorMember], task_counts: dict[str, int],
                 num_standby: int, stateful: set[str]):
        self.num_standby = num_standby
        self.total_active = sum(task_counts.values())
        self.total_tasks = self.total_active + num_standby * sum(
            n for s, n in task_counts.items() if s in stateful)
        self.members_with_active_capacity = len(members)
        self.members_with_capacity = len(members)
        self.active_per_member = _per_member(self.total_active, len(members))
        self.tasks_per_member = _per_member(self.total_tasks, len(members))
        # Kafka keys these by process id in a HashMap sized by the member count, filled with
        # computeIfAbsent
        self.processes: dict[str, _Process] = {}
        self.prev_active: dict[Task, AssignorMember] = {}
        candidates: dict[Task, list[tuple[int, int, AssignorMember]]] = {}
        for m in members:
            if m.process_id not in self.processes:
                self.processes[m.process_id] = _Process(m.process_id)
            self.processes[m.process_id].add_member(m.member_id)
            for t in m.previous.active:
                self.prev_active[t] = m
            # standbys first, then members known only by their offsets; most caught-up first
            for t in m.previous.standby:
                candidates.setdefault(t, []).append((0, -m.task_offsets.get(t, 0), m))
            for t, offset in m.task_offsets.items():
                if t not in m.previous.standby:
                    candidates.setdefault(t, []).append((1, -offset, m))
        order = hash_map_order(self.processes, len(members), compute_if_absent=True)
        self.processes = {p: self.processes[p] for p in order}
        self.prev_standby = {t: [m for *_, m in sorted(c, key=lambda x: x[:2])]
                             for t, c in candidates.items()}

    def process_of(self, m: AssignorMember) -> _Process:
        return self.processes[m.process_id]

    def active_added(self, count: int) -> None:
        if count == self.active_per_member:
            self.members_with_active_capacity -= 1
            self.total_active -= count
            self.active_per_member = _per_member(self.total_active,
                                                 self.members_with_active_capacity)

    def task_added(self, count: int) -> None:
        if count == self.tasks_per_member:
            self.members_with_capacity -= 1
            self.total_tasks -= count
            self.tasks_per_member = _per_member(self.total_tasks, self.members_with_capacity)

    def under_active_quota(self, m: AssignorMember) -> bool:
        return self.process_of(m).member_counts[m.member_id] < self.active_per_member

    def under_task_quota(self, m: AssignorMember) -> bool:
        return self.process_of(m).member_counts[m.member_id] < self.tasks_per_member

    def least_loaded_previous(self, members: list[AssignorMember] | None,
                              standby_of: Task | None) -> AssignorMember | None:
        """The first previous holder, replaced only by one lighter both as process and as
        member (Kafka's findPrevMemberWithLeastLoad, quirks kept)."""
        best, best_process, best_member = None, float("inf"), float("inf")
        for m in members or ():
            p = self.process_of(m)
            if standby_of is not None and p.has_task(standby_of):
                continue
            load, member_load = p.load, p.member_counts[m.member_id]
            if best is None or (load < best_process and member_load < best_member):
                best, best_process, best_member = m, load, member_load
        return best


def _assign_active(state: _State, tasks: list[Task]) -> None:
    left = sorted(tasks, key=lambda t: (t[1], t[0]))
    for previous in (state.prev_active.get,  # 1. back to the member that had it active
                     # 2. to a member that had it as a standby (or has its state)
                     lambda t: state.least_loaded_previous(state.prev_standby.get(t), None)):
        tasks, left = left, []
        for t in tasks:
            m = previous(t)
            if m is not None and state.under_active_quota(m):
                count = state.process_of(m).add_task(m.member_id, t, True)
                state.active_added(count)
                state.task_added(count)
            else:
                left.append(t)
    left.sort()
    queue = JavaPriorityQueue(_by_process_load)  # 3. the rest to the least loaded process
    queue.add_all(state.processes.values())
    for t in left:
        p = queue.poll()
        if p is None:
            raise TaskAssignorError(f"No process available to assign active task {_name(t)}.")
        count = p.add_to_least_loaded(t, True)
        if count == -1:
            raise TaskAssignorError(f"No member available to assign active task {_name(t)}.")
        state.active_added(count)
        state.task_added(count)
        queue.add(p)


def _standby_to_least_loaded(state: _State, queue: JavaPriorityQueue, task: Task) -> bool:
    p = queue.poll()
    if p is None:
        return False
    found = False
    if not p.has_task(task):
        count = p.add_to_least_loaded(task, False)
        if count != -1:
            found = True
            state.task_added(count)
    elif len(queue):
        found = _standby_to_least_loaded(state, queue, task)
    queue.add(p)
    return found


def _assign_standby(state: _State, tasks: list[Task]) -> None:
    rest: list[tuple[Task, int]] = []
    for t in sorted(tasks, key=lambda t: (t[1], t[0]), reverse=True):
        for i in range(state.num_standby):
            m = state.prev_active.get(t)  # the previous active owner keeps the state warm
            if m is not None:
                p = state.process_of(m)
                if not p.has_task(t) and state.under_task_quota(m):
                    state.task_added(p.add_task(m.member_id, t, False))
                    continue
            m = state.least_loaded_previous(state.prev_standby.get(t), t)
            if m is not None and state.under_task_quota(m):
                state.task_added(state.process_of(m).add_task(m.member_id, t, False))
                continue
            rest.append((t, state.num_standby - i))
            break
    rest.sort(key=lambda x: x[0], reverse=True)
    queue = JavaPriorityQueue(_by_process_load)
    queue.add_all(state.processes.values())
    for t, remaining in rest:
        for i in range(remaining):
            if not _standby_to_least_loaded(state, queue, t):
                log.warning("Unable to assign %d of %d standby tasks for task [%s]. There is "
                            "not enough available capacity. You should increase the number "
                            "of threads and/or application instances to maintain the "
                            "requested number of standby replicas.",
                            state.num_standby - i, state.num_standby, _name(t))
                break


def assign(members: list[AssignorMember], task_counts: dict[str, int],
           num_standby: int, stateful: frozenset[str] | set[str] = frozenset()
           ) -> dict[str, TaskSets]:
    """``task_counts``: tasks per subtopology; ``stateful``: the subtopologies with state
    (changelog topics), the only ones whose tasks get standbys.  ``members`` in the group's
    order; Kafka hands them to its assignor in member-id HashMap order, and so does this."""
    out = {m.member_id: TaskSets() for m in members}
    if not members:
        return out
    by_id = {m.member_id: m for m in members}
    ordered = [by_id[mid] for mid in hash_map_order(by_id)]
    state = _State(ordered, task_counts, num_standby, set(stateful))
    subtopologies = sorted(task_counts)
    _assign_active(state, [(s, p) for s in subtopologies for p in range(task_counts[s])])
    if num_standby > 0:
        _assign_standby(state, [(s, p) for s in subtopologies if s in stateful
                                for p in range(task_counts[s])])
    for p in state.processes.values():
        for mid, ts in p.active.items():
            out[mid].active |= ts
        for mid, ts in p.standby.items():
            out[mid].standby |= ts
    return out
