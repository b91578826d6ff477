"""The server-side task assignor (Kafka's default "sticky" streams assignor, simplified):
active tasks stay where they were and the rest go to the least loaded member; each active
stateful task gets up to ``num_standby`` standby replicas on members of other processes."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    previous: TaskSets


def assign(members: list[AssignorMember], task_counts: dict[str, int],
           num_standby: int, stateful: frozenset[str] | set[str] = frozenset()) -> dict[str, TaskSets]:
    """``stateful``: the subtopologies with state (changelog topics), the only ones whose
    tasks get standbys."""
    tasks = sorted((s, p) for s, n in task_counts.items() for p in range(n))
    valid = set(tasks)
    out = {m.member_id: TaskSets() for m in members}
    if not members:
        return out
    order = sorted(members, key=lambda m: m.member_id)
    owner: dict[Task, str] = {}
    for m in order:
        for t in sorted(m.previous.active & valid):
            if t not in owner:
                owner[t] = m.member_id
                out[m.member_id].active.add(t)
    # rebalance: no member may hold more than its fair share of sticky tasks
    cap = -(-len(tasks) // len(members))
    for m in order:
        mine = sorted(out[m.member_id].active)
        for t in mine[cap:]:
            out[m.member_id].active.discard(t)
            del owner[t]

    def load(mid: str) -> tuple[int, str]:
        return (len(out[mid].active) + len(out[mid].standby), mid)

    for t in tasks:
        if t not in owner:
            mid = min((m.member_id for m in order), key=lambda x: (len(out[x].active), x))
            owner[t] = mid
            out[mid].active.add(t)
    process = {m.member_id: m.process_id for m in members}
    if num_standby > 0:
        for t in tasks:
            if t[0] not in stateful:
                continue
            used = {process[owner[t]]}
            prev = [m.member_id for m in order if t in m.previous.standby]
            for _ in range(num_standby):
                candidates = [x for x in prev if process[x] not in used] or \
                    sorted((m.member_id for m in order if process[m.member_id] not in used),
                           key=load)
                if not candidates:
                    break
                mid = candidates[0]
                out[mid].standby.add(t)
                used.add(process[mid])
    return out
