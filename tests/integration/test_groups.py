"""Consumer groups with the stock clients: forming, sharing partitions, rebalancing on leave and
on crash without losing a record, eager and cooperative assignors, static membership."""

from __future__ import annotations

import logging

import pytest

from pykafkad.testing import run_broker
from tests.integration.clients import confluent_produce, create_topic, needs_java
from tests.integration.groups_support import (
    GROUP_BROKER_CONFIG,
    GroupMember,
    MemberProcess,
    wait_until,
)

log = logging.getLogger("tests.groups")
PARTITIONS = 6


@pytest.fixture
def kafka(tmp_path):
    with run_broker(tmp_path / "data", config=GROUP_BROKER_CONFIG) as b:
        yield b


def produce(bootstrap: str, topic: str, start: int, count: int) -> set[bytes]:
    values = [f"m{i}".encode() for i in range(start, start + count)]
    confluent_produce(bootstrap, topic, [
        {"value": v, "partition": i % PARTITIONS} for i, v in enumerate(values)])
    return set(values)


def covers_all(members) -> bool:
    parts = [m.assignment for m in members]
    union = frozenset().union(*parts)
    return union == frozenset(range(PARTITIONS)) and sum(len(p) for p in parts) == PARTITIONS


def consumed(members) -> set[bytes]:
    return set().union(*(m.values() for m in members))


def group_state(kafka, group: str):
    """(state, generation) as the coordinator holds it, read on the broker's thread."""
    def read():
        g = kafka.broker.groups.coordinator.groups.get(group)
        return (g.state.value, g.generation_id) if g else None
    return kafka.call(read)


@pytest.mark.parametrize("strategy", ["roundrobin", "range"])
def test_mixed_clients_split_six_partitions_and_survive_a_leave(kafka, topic_name, strategy):
    bootstrap = kafka.bootstrap_servers
    create_topic(bootstrap, topic_name, PARTITIONS)
    sent = produce(bootstrap, topic_name, 0, 60)
    members = [
        GroupMember("confluent", bootstrap, "mixed", topic_name, strategy=strategy).start(),
        GroupMember("kafka-python", bootstrap, "mixed", topic_name, strategy=strategy).start(),
        GroupMember("confluent", bootstrap, "mixed", topic_name, strategy=strategy).start(),
    ]
    try:
        took = wait_until(lambda: covers_all(members) and all(len(m.assignment) == 2
                                                              for m in members),
                          "three members holding two partitions each", members=members)
        log.info("three members (%s) formed the group in %.3f s", strategy, took)
        wait_until(lambda: consumed(members) >= sent, "every record consumed")
        state, generation = group_state(kafka, "mixed")
        assert state == "Stable"

        leaver = members.pop(1)  # the kafka-python member leaves (LeaveGroup)
        handed_over = leaver.assignment
        leaver.stop()
        took = wait_until(lambda: covers_all(members), "two members holding all partitions",
                          members=members)
        log.info("rebalance after a leave took %.3f s", took)
        assert handed_over <= members[0].assignment | members[1].assignment
        assert group_state(kafka, "mixed")[1] > generation

        more = produce(bootstrap, topic_name, 60, 60)
        wait_until(lambda: consumed(members) >= more, "records produced after the leave")
        assert consumed(members + [leaver]) >= sent | more
    finally:
        for m in members:
            m.stop()


@pytest.mark.parametrize("kind", ["confluent", "kafka-python"])
def test_crashed_member_is_expired_and_its_partitions_move(kafka, topic_name, kind):
    """kill -9 of a member: no LeaveGroup; its session (1 s) expires, the group rebalances and
    the survivors resume from its last commits, so nothing is lost."""
    bootstrap = kafka.bootstrap_servers
    create_topic(bootstrap, topic_name, PARTITIONS)
    sent = produce(bootstrap, topic_name, 0, 60)
    survivor = GroupMember("confluent", bootstrap, "crash", topic_name, session_ms=1000).start()
    victim = MemberProcess(kind, bootstrap, "crash", topic_name, session_ms=1000)
    try:
        wait_until(lambda: len(survivor.assignment) == 3 and len(victim.assignment) == 3,
                   "both members holding three partitions")
        wait_until(lambda: survivor.values() | victim.values() >= sent, "every record consumed")
        victim.kill()
        more = produce(bootstrap, topic_name, 60, 60)
        took = wait_until(lambda: len(survivor.assignment) == PARTITIONS,
                          "the survivor holding every partition")
        log.info("rebalance after a crash (session 1 s) took %.3f s", took)
        wait_until(lambda: survivor.values() >= more, "records produced after the crash")
        assert survivor.values() | victim.values() >= sent | more
    finally:
        if victim.proc.poll() is None:
            victim.kill()
        survivor.stop()


@pytest.mark.parametrize("kind", ["confluent", "kafka-python"])
def test_cooperative_sticky_rebalances_incrementally(kafka, topic_name, kind):
    bootstrap = kafka.bootstrap_servers
    create_topic(bootstrap, topic_name, PARTITIONS)
    sent = produce(bootstrap, topic_name, 0, 30)
    # a generous session: this test is about joins and leaves, and an in-process kafka-python
    # member starved of the GIL on a loaded machine can miss 6 s of heartbeats (and be removed,
    # as Kafka would remove it)
    conf = {"strategy": "cooperative-sticky", "session_ms": 30_000}
    first = GroupMember(kind, bootstrap, "coop", topic_name, **conf).start()
    members = [first]
    try:
        wait_until(lambda: len(first.assignment) == PARTITIONS, "the first member holding all",
                   members=members)
        second = GroupMember(kind, bootstrap, "coop", topic_name, **conf).start()
        members.append(second)
        wait_until(lambda: covers_all(members) and len(second.assignment) == 3,
                   "the partitions shared between both members", members=members)
        # sticky: the first member kept half of what it had and lost nothing else
        assert len(first.assignment) == 3
        more = produce(bootstrap, topic_name, 30, 30)
        wait_until(lambda: consumed(members) >= sent | more, "every record consumed",
                   members=members)
        members.remove(second)
        second.stop()
        wait_until(lambda: len(first.assignment) == PARTITIONS, "the partitions given back",
                   members=members)
    finally:
        for m in members:
            m.stop()


def test_static_member_rejoins_without_a_rebalance(kafka, topic_name):
    bootstrap = kafka.bootstrap_servers
    create_topic(bootstrap, topic_name, PARTITIONS)
    sent = produce(bootstrap, topic_name, 0, 30)
    conf = {"session_ms": 10_000}
    steady = GroupMember("confluent", bootstrap, "static", topic_name,
                         **{"group.instance.id": "steady"}, **conf).start()
    bouncing = GroupMember("confluent", bootstrap, "static", topic_name,
                           **{"group.instance.id": "bouncing"}, **conf).start()
    try:
        wait_until(lambda: covers_all([steady, bouncing]) and len(steady.assignment) == 3,
                   "both static members assigned")
        wait_until(lambda: steady.values() | bouncing.values() >= sent, "every record consumed")
        state, generation = group_state(kafka, "static")
        kept = bouncing.assignment
        changes = steady.assignment_changes
        bouncing.stop()  # a static member's close sends no LeaveGroup
        assert group_state(kafka, "static") == ("Stable", generation)
        bouncing = GroupMember("confluent", bootstrap, "static", topic_name,
                               **{"group.instance.id": "bouncing"}, **conf).start()
        wait_until(lambda: bouncing.assignment == kept, "the restarted member's old partitions")
        more = produce(bootstrap, topic_name, 30, 30)
        wait_until(lambda: steady.values() | bouncing.values() >= more, "new records consumed")
        assert group_state(kafka, "static") == ("Stable", generation), "no rebalance happened"
        assert steady.assignment_changes == changes
    finally:
        steady.stop()
        bouncing.stop()


@needs_java
def test_java_consumer_group_and_commits(kafka):
    """The Java client (JoinGroup v9, SyncGroup v5, OffsetCommit/OffsetFetch v9): the compat
    suite's group scenarios, run in one JVM."""
    from compat.clients.java import run_java

    results, stderr = run_java(kafka.bootstrap_servers, ["consumer-group", "offset-commit"])
    failed = {name: r.reason for name, r in results.items() if r.status != "pass"}
    assert set(results) == {"consumer-group", "offset-commit"} and not failed, (failed, stderr)
