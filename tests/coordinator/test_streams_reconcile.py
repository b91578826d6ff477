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
