"""The streams group state machine (KIP-1071) on a fake clock: epochs, the initial rebalance
delay, the sticky assignor with standbys, revocation before reassignment, sessions, internal
topics and offset-commit epochs.  End to end with Kafka Streams: tests/integration/
test_streams_groups.py."""

from __future__ import annotations

import pytest

import wire.messages.streams_group_heartbeat_request as m
from pykafkad.coordinator.streams_group import topology as topo
from pykafkad.coordinator.streams_group.coordinator import StreamsConfig, StreamsGroups
from pykafkad.coordinator.timer import Timer
from wire.errors import ErrorCode, KafkaError

SOURCE = "words"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def _topology() -> m.Topology:
    def info(name):
        return m.TopicInfo(name=name, partitions=0, replication_factor=0,
                           topic_configs=[m.KeyValue(key="cleanup.policy", value="compact")])
    return m.Topology(epoch=0, subtopologies=[
        m.Subtopology(subtopology_id="0", source_topics=[SOURCE], source_topic_regex=[],
                      state_changelog_topics=[], repartition_sink_topics=["app-rep"],
                      repartition_source_topics=[], copartition_groups=[]),
        m.Subtopology(subtopology_id="1", source_topics=[], source_topic_regex=[],
                      state_changelog_topics=[info("app-store-changelog")],
                      repartition_sink_topics=[], repartition_source_topics=[info("app-rep")],
                      copartition_groups=[])])


def join(groups, member, process=None):
    return groups.heartbeat(m.StreamsGroupHeartbeatRequest(
        group_id="app", member_id=member, member_epoch=0, endpoint_information_epoch=0,
        rebalance_timeout_ms=30000, topology=_topology(), active_tasks=[], standby_tasks=[],
        warmup_tasks=[], process_id=process or member,
        user_endpoint=m.Endpoint(host=member, port=1), client_tags=[], task_offsets=[],
        task_end_offsets=[]), "client", "/127.0.0.1")


def beat(groups, member, epoch, owned=None):
    active = None if owned is None else [
        m.TaskIds(subtopology_id=s, partitions=sorted(p for t, p in owned if t == s))
        for s in sorted({t for t, _ in owned})]
    return groups.heartbeat(m.StreamsGroupHeartbeatRequest(
        group_id="app", member_id=member, member_epoch=epoch, endpoint_information_epoch=0,
        active_tasks=active, standby_tasks=None if owned is None else [],
        warmup_tasks=None if owned is None else []), "client", "/127.0.0.1")


@pytest.fixture
def setup():
    clock = Clock()
    topics = {SOURCE: 2}
    groups = StreamsGroups(StreamsConfig(num_standby_replicas=0), Timer(clock), clock,
                           topics.get)
    return groups, clock, topics


def test_internal_topics_are_reported_missing_with_their_partition_counts(setup):
    groups, clock, topics = setup
    r = join(groups, "a")
    assert r.member_epoch == 1 and r.tasks.active == set()
    assert [c for c, _ in r.statuses] == [topo.ASSIGNMENT_DELAYED, topo.MISSING_INTERNAL_TOPICS]
    assert r.statuses[1][1] == "Internal topics are missing: app-rep, app-store-changelog"
    assert sorted((t.name, t.partitions, t.configs["cleanup.policy"])
                  for t in r.create_topics) == [("app-rep", 2, "compact"),
                                                ("app-store-changelog", 2, "compact")]
    topics.update({"app-rep": 2, "app-store-changelog": 2})
    clock.now += 3000
    r = beat(groups, "a", r.member_epoch)
    assert r.statuses == [] and r.create_topics == []
    assert r.tasks.active == {("0", 0), ("0", 1), ("1", 0), ("1", 1)}
    assert groups.get("app").state == "Stable"


def test_tasks_are_revoked_before_another_member_gets_them(setup):
    groups, clock, topics = setup
    topics.update({"app-rep": 2, "app-store-changelog": 2})
    a = join(groups, "a")
    clock.now += 3000
    a = beat(groups, "a", a.member_epoch, owned=set())
    everything = {("0", 0), ("0", 1), ("1", 0), ("1", 1)}
    assert a.tasks.active == everything
    b = join(groups, "b")
    assert b.member_epoch == a.member_epoch + 1
    assert b.tasks.active == set()  # unreleased: "a" still owns them
    assert groups.get("app").members["b"].state == "UNRELEASED_TASKS"
    a2 = beat(groups, "a", a.member_epoch, owned=everything)
    assert a2.member_epoch == a.member_epoch  # revoking keeps the epoch
    kept = a2.tasks.active
    assert len(kept) == 2 and groups.get("app").state == "Reconciling"
    with pytest.raises(KafkaError) as e:  # an offset commit with a future epoch is fenced
        groups.validate_offset_commit("app", "a", a.member_epoch + 1, 9)
    assert e.value.code == ErrorCode.FENCED_MEMBER_EPOCH
    a3 = beat(groups, "a", a2.member_epoch, owned=kept)
    assert a3.member_epoch == b.member_epoch
    with pytest.raises(KafkaError) as e:
        groups.validate_offset_commit("app", "a", a.member_epoch, 9)
    assert e.value.code == ErrorCode.STALE_MEMBER_EPOCH
    b2 = beat(groups, "b", b.member_epoch, owned=set())
    assert b2.tasks.active == everything - kept
    assert groups.get("app").state == "Stable"
    # "b"'s session runs out: "a" gets every task back
    clock.now += 30_000
    a3 = beat(groups, "a", a3.member_epoch)
    clock.now += 15_001
    groups.timer.run_due()
    assert set(groups.get("app").members) == {"a"}
    a4 = beat(groups, "a", a3.member_epoch, owned=kept)
    assert a4.tasks.active == everything and a4.member_epoch > a3.member_epoch
    # leaving empties the group
    assert beat(groups, "a", -1).member_epoch == -1
    assert groups.get("app").state == "Empty"
    groups.validate_offset_commit("app", "", -1, 9)  # an admin commit into an empty group


def test_standby_tasks_go_to_another_process(setup):
    groups, clock, topics = setup
    # the group's own config (IncrementalAlterConfigs on the group) overrides the broker's
    groups.group_config = lambda group_id: {"streams.num.standby.replicas": "1"}
    topics.update({"app-rep": 2, "app-store-changelog": 2})
    a = join(groups, "a", "p1")
    b = join(groups, "b", "p2")
    clock.now += 3000
    a = beat(groups, "a", a.member_epoch, owned=set())
    b = beat(groups, "b", b.member_epoch, owned=set())
    target = groups.get("app").target
    for one, other in (("a", "b"), ("b", "a")):  # only subtopology 1 has state
        assert target[one].standby == {t for t in target[other].active if t[0] == "1"}
    assert len(target["a"].active) == len(target["b"].active) == 2


def test_invalid_heartbeats_get_kafkas_messages(setup):
    groups, _, _ = setup
    with pytest.raises(KafkaError) as e:
        beat(groups, "", 1)
    assert (e.value.code, e.value.message) == (ErrorCode.INVALID_REQUEST,
                                               "MemberId can't be empty.")
    join(groups, "a")
    with pytest.raises(KafkaError) as e:
        beat(groups, "x", 1)
    assert (e.value.code, e.value.message) == (
        ErrorCode.UNKNOWN_MEMBER_ID, "Member x is not a member of group app.")
    with pytest.raises(KafkaError) as e:
        beat(groups, "a", 7)
    assert e.value.code == ErrorCode.FENCED_MEMBER_EPOCH


def test_a_member_that_does_not_revoke_in_time_is_fenced(setup):
    groups, clock, topics = setup
    topics.update({"app-rep": 2, "app-store-changelog": 2})
    a = join(groups, "a")
    clock.now += 3000
    everything = {("0", 0), ("0", 1), ("1", 0), ("1", 1)}
    a = beat(groups, "a", a.member_epoch, owned=set())
    b = join(groups, "b")
    a = beat(groups, "a", a.member_epoch, owned=everything)
    assert groups.get("app").members["a"].state == "UNREVOKED_TASKS"
    clock.now += 29_000  # "a" keeps heartbeating but never gives its tasks up
    beat(groups, "a", a.member_epoch, owned=everything)
    b = beat(groups, "b", b.member_epoch, owned=set())
    clock.now += 1_001  # its rebalance timeout (30 s) is over
    groups.timer.run_due()
    assert set(groups.get("app").members) == {"b"}
    b = beat(groups, "b", b.member_epoch, owned=set())
    assert b.tasks.active == everything


def test_a_static_member_that_leaves_is_replaced_by_its_successor(setup):
    """As Kafka 4.4 answers (seen on a live broker): epoch -2 keeps the member and its tasks,
    a new member id with the same instance id resumes its epoch and tasks, a second one is
    refused, and a -1 leave empties the group with a new target epoch."""
    groups, clock, topics = setup
    topics.update({"app-rep": 2, "app-store-changelog": 2})

    def join_static(member):
        req = m.StreamsGroupHeartbeatRequest(
            group_id="app", member_id=member, member_epoch=0, endpoint_information_epoch=0,
            instance_id="i1", rebalance_timeout_ms=30000, topology=_topology(),
            active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="p1",
            client_tags=[], task_offsets=[], task_end_offsets=[])
        return groups.heartbeat(req, "client", "/127.0.0.1")

    a = join_static("m1")
    clock.now += 3000
    a = beat(groups, "m1", a.member_epoch, owned=set())
    tasks = a.tasks.active
    assert len(tasks) == 4
    left = groups.heartbeat(m.StreamsGroupHeartbeatRequest(
        group_id="app", member_id="m1", member_epoch=-2, instance_id="i1",
        endpoint_information_epoch=0), "client", "/127.0.0.1")
    assert left.member_epoch == -2
    group = groups.get("app")
    assert group.state == "Reconciling" and group.members["m1"].assigned.active == tasks
    epoch = group.group_epoch
    b = join_static("m2")
    assert (b.member_epoch, b.tasks.active) == (a.member_epoch, tasks)
    assert set(group.members) == {"m2"} and group.group_epoch == epoch
    with pytest.raises(KafkaError) as e:
        join_static("m3")
    assert (e.value.code, e.value.message) == (
        ErrorCode.UNRELEASED_INSTANCE_ID, "Static member m3 with instance id i1 cannot join "
        "the group because the instance id is owned by m2 member.")
    assert beat(groups, "m2", -1).member_epoch == -1
    assert (group.state, group.group_epoch, group.target_epoch) == ("Empty", epoch + 1,
                                                                    epoch + 1)


def test_reported_task_offsets_steer_the_assignment_and_duplicates_are_refused(setup):
    """A member that reports changelog offsets for a task (state on its disk, e.g. after a
    restart with a new member id) is preferred for it over other members, as by Kafka 4.4's
    assignor; a task listed twice is refused with Kafka's message."""
    groups, clock, topics = setup
    topics.update({"app-rep": 2, "app-store-changelog": 2})
    a = join(groups, "a")
    clock.now += 3000
    assert beat(groups, "a", a.member_epoch, owned=set()).tasks.active == {
        ("0", 0), ("0", 1), ("1", 0), ("1", 1)}
    join(groups, "b")
    c = groups.heartbeat(m.StreamsGroupHeartbeatRequest(
        group_id="app", member_id="c", member_epoch=0, endpoint_information_epoch=0,
        rebalance_timeout_ms=30000, topology=_topology(), active_tasks=[], standby_tasks=[],
        warmup_tasks=[], process_id="c", client_tags=[],
        task_offsets=[m.TaskOffset(subtopology_id="1", partition=1, offset=500)],
        task_end_offsets=[m.TaskOffset(subtopology_id="1", partition=1, offset=900)]),
        "client", "/127.0.0.1")
    group = groups.get("app")
    assert c.member_epoch == group.target_epoch
    assert group.members["c"].task_offsets == {("1", 1): 500}
    assert group.members["c"].task_end_offsets == {("1", 1): 900}
    # "a" keeps its quota (two tasks, by partition); "c" has the state of 1_1, "b" gets 0_1
    assert group.target["a"].active == {("0", 0), ("1", 0)}
    assert group.target["c"].active == {("1", 1)}
    assert group.target["b"].active == {("0", 1)}
    with pytest.raises(KafkaError) as e:
        groups.heartbeat(m.StreamsGroupHeartbeatRequest(
            group_id="app", member_id="b", member_epoch=group.members["b"].member_epoch,
            endpoint_information_epoch=0, task_offsets=[
                m.TaskOffset(subtopology_id="1", partition=0, offset=1),
                m.TaskOffset(subtopology_id="1", partition=0, offset=2)]),
            "client", "/127.0.0.1")
    assert (e.value.code, e.value.message) == (
        ErrorCode.INVALID_REQUEST,
        "Task offsets contain a duplicate entry for subtopology 1 and partition 0.")


def test_the_previous_epoch_is_accepted_only_with_owned_tasks_within_the_assignment(setup):
    """Kafka 4.4's epoch check: a smaller epoch passes only if it is the previous one and the
    member reports all its task lists, each within what it is assigned."""
    groups, clock, topics = setup
    topics.update({"app-rep": 2, "app-store-changelog": 2})
    a = join(groups, "a")
    clock.now += 3000
    a2 = beat(groups, "a", a.member_epoch, owned=set())
    member = groups.get("app").members["a"]
    assert (member.previous_member_epoch, member.member_epoch) == (a.member_epoch,
                                                                   a2.member_epoch)
    assert a2.member_epoch > a.member_epoch
    assert beat(groups, "a", a.member_epoch, owned={("0", 0)}).member_epoch == a2.member_epoch
    for owned in (None, {("0", 0), ("9", 9)}):  # no lists, or a task it is not assigned
        with pytest.raises(KafkaError) as e:
            beat(groups, "a", a.member_epoch, owned=owned)
        assert (e.value.code, e.value.message) == (
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The streams group member has a smaller member epoch ({a.member_epoch}) than the "
            f"one known by the group coordinator ({a2.member_epoch}). The member must abandon "
            "all its partitions and rejoin.")
