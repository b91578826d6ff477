"""A streams member's way to its target (Kafka 4.4's streams CurrentAssignmentBuilder, facts
from its source): what is granted at once, what waits for another member's release, and the
in-place role changes of a member's own task."""

from __future__ import annotations

from pykafkad.coordinator.streams_group.assignor import TaskSets
from pykafkad.coordinator.streams_group.group import (
    STABLE,
    UNRELEASED_TASKS,
    UNREVOKED_TASKS,
    StreamsGroup,
    StreamsMember,
)

T = ("1", 0)
U = ("1", 1)


def group(members: dict[str, tuple[str, TaskSets]], target: dict[str, TaskSets],
          epoch: int = 2) -> StreamsGroup:
    g = StreamsGroup("app", 0, group_epoch=epoch, target_epoch=epoch, target=target)
    for mid, (process, assigned) in members.items():
        g.members[mid] = StreamsMember(mid, "client", "host", process_id=process,
                                       member_epoch=epoch - 1, assigned=assigned)
    return g


def test_a_demoted_active_task_is_a_standby_at_once_and_its_active_is_revoked():
    g = group({"a": ("p1", TaskSets({T, U})), "b": ("p2", TaskSets({U}))},
              {"a": TaskSets({U}, {T}), "b": TaskSets({T})})
    g.members["b"].assigned = TaskSets()
    a = g.members["a"]
    g.reconcile(a, TaskSets({T, U}))
    assert a.state == UNREVOKED_TASKS and a.member_epoch == 1
    assert a.assigned == TaskSets({U}, {T})
    assert a.pending_revocation == TaskSets({T})
    b = g.members["b"]
    g.reconcile(b, TaskSets())
    assert b.state == UNRELEASED_TASKS and b.assigned == TaskSets()  # "a" still runs T
    g.reconcile(a, TaskSets({U}, {T}))  # released: the next epoch
    assert (a.state, a.member_epoch, a.pending_revocation) == (STABLE, 2, TaskSets())
    g.reconcile(b, TaskSets())
    assert (b.state, b.assigned) == (STABLE, TaskSets({T}))


def test_a_standby_promoted_to_active_is_kept_until_the_active_task_is_released():
    g = group({"a": ("p1", TaskSets({T})), "b": ("p2", TaskSets(set(), {T}))},
              {"a": TaskSets(), "b": TaskSets({T})})
    b = g.members["b"]
    g.reconcile(b, TaskSets(set(), {T}))
    # no revocation asked for the standby; it stays while "a" runs the task
    assert (b.state, b.member_epoch) == (UNRELEASED_TASKS, 2)
    assert b.assigned == TaskSets(set(), {T}) and b.pending_revocation == TaskSets()
    a = g.members["a"]
    g.reconcile(a, TaskSets({T}))
    assert a.state == UNREVOKED_TASKS
    g.reconcile(a, TaskSets())
    assert a.state == STABLE and a.assigned == TaskSets()
    g.reconcile(b, TaskSets(set(), {T}))
    assert (b.state, b.assigned) == (STABLE, TaskSets({T}))  # the standby became the active


def test_a_standby_waits_for_another_member_of_its_process_to_release_the_task():
    """One process never runs a task twice: the standby goes to "a2" only once "a1" (same
    process) gave the active task up; a standby elsewhere does not block."""
    g = group({"a1": ("p1", TaskSets({T})), "a2": ("p1", TaskSets()),
               "b": ("p2", TaskSets(set(), {T}))},
              {"a1": TaskSets(), "a2": TaskSets(set(), {T}), "b": TaskSets({T})})
    a2 = g.members["a2"]
    g.reconcile(a2, TaskSets())
    assert (a2.state, a2.assigned) == (UNRELEASED_TASKS, TaskSets())
    a1 = g.members["a1"]
    g.reconcile(a1, TaskSets({T}))
    g.reconcile(a1, TaskSets())
    g.reconcile(a2, TaskSets())
    assert (a2.state, a2.assigned) == (STABLE, TaskSets(set(), {T}))


def test_an_active_task_waits_for_a_standby_of_another_member_of_its_process():
    g = group({"a1": ("p1", TaskSets(set(), {T})), "a2": ("p1", TaskSets()),
               "b": ("p2", TaskSets())},
              {"a1": TaskSets(), "a2": TaskSets({T}), "b": TaskSets(set(), {T})})
    a2 = g.members["a2"]
    g.reconcile(a2, TaskSets())
    assert (a2.state, a2.assigned) == (UNRELEASED_TASKS, TaskSets())
    a1 = g.members["a1"]
    g.reconcile(a1, TaskSets(set(), {T}))
    assert a1.state == UNREVOKED_TASKS and a1.pending_revocation == TaskSets(set(), {T})
    g.reconcile(a1, TaskSets())
    g.reconcile(a2, TaskSets())
    assert (a2.state, a2.assigned) == (STABLE, TaskSets({T}))


def test_an_unreported_assignment_never_counts_as_released():
    g = group({"a": ("p1", TaskSets({T}))}, {"a": TaskSets()})
    a = g.members["a"]
    g.reconcile(a, None)
    assert a.state == UNREVOKED_TASKS
    g.reconcile(a, None)
    assert a.state == UNREVOKED_TASKS and a.member_epoch == 1


def test_random_rebalances_never_put_a_task_twice_on_a_process_and_converge():
    """Members of three processes join, leave and heartbeat in random order, reporting what
    they were told; with one standby replica.  At every step no task is active on two
    members and no two members of one process hold the same task; once everyone has
    heartbeated enough, every member has exactly its target."""
    import random

    import wire.messages.streams_group_heartbeat_request as m
    from pykafkad.coordinator.streams_group.coordinator import StreamsConfig, StreamsGroups
    from pykafkad.coordinator.timer import Timer
    from tests.coordinator.test_streams_group import Clock, join

    clock = Clock()
    topics = {"words": 4, "app-rep": 4, "app-store-changelog": 4}
    groups = StreamsGroups(StreamsConfig(num_standby_replicas=1), Timer(clock), clock,
                           topics.get)
    rng = random.Random(7)
    told: dict[str, TaskSets] = {}

    def ids(tasks):
        return [m.TaskIds(subtopology_id=s, partitions=sorted(p for t, p in tasks if t == s))
                for s in sorted({t for t, _ in tasks})]

    def beat(mid):
        mem = groups.get("app").members[mid]
        have = told.get(mid, TaskSets())
        r = groups.heartbeat(m.StreamsGroupHeartbeatRequest(
            group_id="app", member_id=mid, member_epoch=mem.member_epoch,
            endpoint_information_epoch=0, active_tasks=ids(have.active),
            standby_tasks=ids(have.standby), warmup_tasks=ids(have.warmup)),
            "client", "/127.0.0.1")
        if r.tasks is not None:
            told[mid] = r.tasks

    def check():
        group = groups.get("app")
        active: dict = {}
        here: dict = {}
        for mem in group.members.values():
            held = mem.assigned.all() | mem.pending_revocation.all()
            for t in mem.assigned.active | mem.pending_revocation.active:
                assert t not in active, (t, active[t], mem.member_id)
                active[t] = mem.member_id
            for t in held:
                other = here.setdefault((mem.process_id, t), mem.member_id)
                assert other == mem.member_id, (t, other, mem.member_id)

    clock.now += 3000
    next_id = 0
    for _ in range(300):
        members = list(groups.get("app").members) if groups.get("app") else []
        roll = rng.random()
        if not members or (roll < 0.1 and len(members) < 6):
            mid = f"m{next_id}"
            next_id += 1
            r = join(groups, mid, f"p{rng.randint(1, 3)}")
            told[mid] = r.tasks or TaskSets()
        elif roll < 0.15 and len(members) > 1:
            mid = rng.choice(members)
            groups.heartbeat(m.StreamsGroupHeartbeatRequest(
                group_id="app", member_id=mid, member_epoch=-1,
                endpoint_information_epoch=0), "client", "/127.0.0.1")
            told.pop(mid, None)
        else:
            beat(rng.choice(members))
        check()
    for _ in range(10):
        for mid in list(groups.get("app").members):
            beat(mid)
            check()
    group = groups.get("app")
    assert group.state == "Stable"
    for mid, mem in group.members.items():
        assert mem.assigned == group.target[mid] == told[mid], mid
    assert len(group.members) >= 2
    assert any(mem.assigned.standby for mem in group.members.values())
