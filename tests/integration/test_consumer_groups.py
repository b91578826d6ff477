"""KIP-848 consumer groups (group.protocol=consumer) end to end: librdkafka's consumers share a
topic and take over from one another, commit with their member epoch and resume after a
restart; the wire answers match Apache Kafka 4.4's; a silent member is fenced when its session
times out (fake clock)."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from compat.clients.java import run_java
from compat.consumer_group_scenario import (
    _hb,
    _join,
    _Owned,
    run,
    settle,
    wait_for_coordinator,
    wait_for_topic,
    wait_for_topic_in_groups,
)
from compat.wire_client import WireClient
from pykafkad.testing import run_broker
from tests.integration.clients import create_topic, needs_java
from tests.integration.groups_support import wait_until
from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
from wire.messages.delete_groups_request import DeleteGroupsRequest


def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                     "group.protocol": "consumer", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})


def _partitions(c: Consumer) -> set[int]:
    return {tp.partition for tp in c.assignment()}


def test_two_consumers_share_one_leaves_the_other_takes_all_and_resumes_after_restart(
        tmp_path, topic_name):
    group = "kip848-" + uuid.uuid4().hex[:8]
    data = tmp_path / "data"
    with run_broker(data) as b:
        bs = b.bootstrap_servers
        create_topic(bs, topic_name, 4)
        p = Producer({"bootstrap.servers": bs})
        for i in range(40):
            p.produce(topic_name, str(i).encode(), partition=i % 4)
        p.flush(30)
        first, second = _consumer(bs, group), _consumer(bs, group)
        first.subscribe([topic_name])
        wait_until(lambda: first.poll(0.05) is None and _partitions(first) == {0, 1, 2, 3},
                   "the first consumer to get every partition")
        second.subscribe([topic_name])

        def shared():
            first.poll(0.05)
            second.poll(0.05)
            one, two = _partitions(first), _partitions(second)
            return len(one) == 2 and len(two) == 2 and not one & two
        wait_until(shared, "both consumers to own two partitions each")
        second.close()
        wait_until(lambda: first.poll(0.05) is None and _partitions(first) == {0, 1, 2, 3},
                   "the remaining consumer to take every partition")
        # the generation id of the commit is the member epoch
        first.commit(offsets=[TopicPartition(topic_name, p, 5) for p in range(4)],
                     asynchronous=False)
        first.close()
    with run_broker(data) as b:
        again = _consumer(b.bootstrap_servers, group)
        again.subscribe([topic_name])
        got: list = []

        def resumed():
            m = again.poll(0.1)
            if m is not None and not m.error():
                got.append((m.partition(), m.offset()))
            return len(got) == 20
        wait_until(resumed, "the consumer to read what was not committed", timeout=60)
        assert sorted(got) == [(p, o) for p in range(4) for o in range(5, 10)]
        again.close()


@needs_java
def test_heartbeats_describe_commits_and_errors_match_kafka(broker, reference_kafka):
    transcripts = []
    for bootstrap in (broker.bootstrap_servers, reference_kafka.bootstrap_servers):
        topic, group = "kip848-t-" + uuid.uuid4().hex[:8], "kip848-g-" + uuid.uuid4().hex[:8]
        create_topic(bootstrap, topic, 2)
        lines = run(bootstrap, group, topic)
        transcripts.append([repr(line).replace(topic, "T").replace(group, "G")
                            for line in lines])
    assert transcripts[0] == transcripts[1]


def test_a_silent_member_is_fenced_after_the_session_timeout(tmp_path, topic_name):
    now = [1_800_000_000_000]
    with run_broker(tmp_path / "data", clock=lambda: now[0]) as b:
        bs = b.bootstrap_servers
        create_topic(bs, topic_name, 2)
        group = "kip848-" + uuid.uuid4().hex[:8]
        wait_for_coordinator(bs, group)
        with WireClient(bs) as c:
            a = _join(c, group, "a", topic_name)
            bj = _join(c, group, "b", topic_name)
            assert (a.error_code, bj.error_code) == (0, 0)
            now[0] += 44_000  # both inside their 45 s sessions: b heartbeats, a stays silent
            r = _hb(c, group, "b", bj.member_epoch, topic_partitions=[])
            assert r.error_code == 0
            now[0] += 2_000  # a's session (45 s) is over
            r = _hb(c, group, "b", r.member_epoch, topic_partitions=[])
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            assert [m.member_id for m in d.members] == ["b"]
            assert d.group_epoch == 4  # created 1, a 2, b 3, a fenced 4
            r = _hb(c, group, "a", a.member_epoch, topic_partitions=[])
            assert r.error_code == 25  # UNKNOWN_MEMBER_ID: it must rejoin
            assert r.error_message == f"Member a is not a member of group {group}."


def test_members_and_assignments_are_reloaded_after_a_restart(tmp_path, topic_name):
    """The group's records in __consumer_offsets bring it back: a member goes on heartbeating
    with its epoch, a member that left stays gone, and DeleteGroups writes tombstones."""
    data = tmp_path / "data"
    group = "kip848-" + uuid.uuid4().hex[:8]

    def describe(c):
        return c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]

    with run_broker(data) as b:
        create_topic(b.bootstrap_servers, topic_name, 2)
        wait_for_coordinator(b.bootstrap_servers, group)
        with WireClient(b.bootstrap_servers) as c:
            a = _join(c, group, "a", topic_name)
            gone = _join(c, group, "gone", topic_name)
            assert _hb(c, group, "gone", -1).error_code == 0
            before = describe(c)
            assert gone.error_code == 0 and [m.member_id for m in before.members] == ["a"]
    with run_broker(data) as b:
        wait_for_coordinator(b.bootstrap_servers, group)
        with WireClient(b.bootstrap_servers) as c:
            after = describe(c)
            assert (after.group_epoch, after.assignment_epoch, after.group_state) == \
                (before.group_epoch, before.assignment_epoch, before.group_state)
            assert [(m.member_id, m.member_epoch, m.assignment.topic_partitions[0].partitions)
                    for m in after.members] == [("a", a.member_epoch, [0, 1])]
            r = _hb(c, group, "a", a.member_epoch, topic_partitions=[])
            assert r.error_code == 0
            assert _hb(c, group, "a", -1).error_code == 0
            d = c.request(42, 2, DeleteGroupsRequest(groups_names=[group]))
            assert d.results[0].error_code == 0
    with run_broker(data) as b:
        wait_for_coordinator(b.bootstrap_servers, group)
        with WireClient(b.bootstrap_servers) as c:
            assert describe(c).error_code == 69  # GROUP_ID_NOT_FOUND


@needs_java
def test_java_consumers_with_the_consumer_group_protocol(broker):
    results, stderr = run_java(broker.bootstrap_servers, ["consumer-group-protocol"])
    failed = {s: r.reason for s, r in results.items() if r.status != "pass"}
    assert not failed, f"{failed}\n{stderr[-2000:]}"


def _tool_describe(bootstrap: str) -> list[str]:
    """kafka-consumer-groups --describe (offsets, members, state) of a one-member group."""
    from compat.kafka_tools import run_tool
    from wire.messages.offset_commit_request import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )

    topic, group = "kip848-t-" + uuid.uuid4().hex[:8], "kip848-g-" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic, 2)
    wait_for_topic(bootstrap, topic)
    wait_for_topic_in_groups(bootstrap, topic)
    wait_for_coordinator(bootstrap, group)
    outs = []
    with WireClient(bootstrap, client_id="tool-client") as c:
        a = _join(c, group, "member-a", topic)
        owned = _Owned()
        owned(a.assignment)

        def both_partitions() -> bool:
            # Kafka's coordinator may see a just-created topic a moment late
            nonlocal a
            r = _hb(c, group, "member-a", a.member_epoch, topic_partitions=owned(None))
            assert r.error_code == 0
            a = r
            return sum(len(tp.partitions) for tp in owned(r.assignment)) == 2
        settle(both_partitions)
        c.request(8, 9, OffsetCommitRequest(
            group_id=group, generation_id_or_member_epoch=a.member_epoch, member_id="member-a",
            topics=[OffsetCommitRequestTopic(name=topic, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=0)])]))
        for extra in ([], ["--members", "--verbose"], ["--state", "--verbose"]):
            p = run_tool("kafka-consumer-groups",
                         ["--bootstrap-server", bootstrap, "--describe", "--group", group, *extra])
            assert p.returncode == 0, p.stderr[-2000:]
            outs.append(p.stdout.replace(topic, "T").replace(group, "G")
                        .replace(bootstrap, "HOST:PORT"))
    return outs


@needs_java
def test_kafka_consumer_groups_describe_prints_what_kafka_prints(broker, reference_kafka):
    import difflib

    ours = _tool_describe(broker.bootstrap_servers)
    kafka = _tool_describe(reference_kafka.bootstrap_servers)
    for mine, theirs in zip(ours, kafka, strict=True):
        assert mine == theirs, "\n".join(difflib.unified_diff(
            theirs.splitlines(), mine.splitlines(), "kafka", "pykafkad", lineterm=""))
    assert "member-a" in ours[1] and "Stable" in ours[2]


def test_regex_new_topics_and_new_partitions_reach_the_target_assignment(broker):
    """A subscribed regex is evaluated on the broker; a topic created later, and partitions
    added to a subscribed topic, move into the member's assignment.  A classic JoinGroup for
    the (non-empty) consumer group is refused."""
    from confluent_kafka.admin import AdminClient, NewPartitions

    from wire.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol

    bs = broker.bootstrap_servers
    prefix = "rx" + uuid.uuid4().hex[:6]
    group = "kip848-" + uuid.uuid4().hex[:8]
    create_topic(bs, prefix + "-one", 1)
    create_topic(bs, "other-" + prefix, 1)
    wait_for_coordinator(bs, group)
    with WireClient(bs) as c:
        a = _hb(c, group, "a", 0, rebalance_timeout_ms=30000, subscribed_topic_regex=prefix + "-.*",
                topic_partitions=[])
        assert a.error_code == 0
        owned = _Owned()
        owned(a.assignment)
        epoch = [a.member_epoch]

        def count(want: int) -> bool:
            r = _hb(c, group, "a", epoch[0], topic_partitions=owned(None))
            assert r.error_code == 0
            epoch[0] = r.member_epoch
            return sum(len(tp.partitions) for tp in owned(r.assignment)) == want
        settle(lambda: count(1))
        create_topic(bs, prefix + "-two", 2)
        settle(lambda: count(3))
        admin = AdminClient({"bootstrap.servers": bs})
        admin.create_partitions([NewPartitions(prefix + "-one", 3)])[prefix + "-one"].result(30)
        settle(lambda: count(5))
        d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
        assert sorted((tp.topic_name, tuple(tp.partitions))
                      for tp in d.members[0].assignment.topic_partitions) == [
            (prefix + "-one", (0, 1, 2)), (prefix + "-two", (0, 1))]
        assert d.members[0].subscribed_topic_regex == prefix + "-.*"
        j = c.request(11, 9, JoinGroupRequest(
            group_id=group, session_timeout_ms=45000, rebalance_timeout_ms=30000, member_id="",
            protocol_type="consumer", protocols=[JoinGroupRequestProtocol(name="range",
                                                                          metadata=b"")]))
        # a classic member may join a consumer group (online migration): like any dynamic
        # member it first gets its member id (MEMBER_ID_REQUIRED), as Kafka 4.4 answers
        assert j.error_code == 79
        assert j.member_id


def test_a_member_that_keeps_revoked_partitions_is_fenced_after_the_rebalance_timeout(
        tmp_path, topic_name):
    from wire.messages.consumer_group_heartbeat_request import TopicPartitions

    now = [1_800_000_000_000]
    with run_broker(tmp_path / "data", clock=lambda: now[0]) as b:
        bs = b.bootstrap_servers
        create_topic(bs, topic_name, 2)
        group = "kip848-" + uuid.uuid4().hex[:8]
        wait_for_coordinator(bs, group)
        with WireClient(bs) as c:
            a = _hb(c, group, "a", 0, rebalance_timeout_ms=10_000,
                    subscribed_topic_names=[topic_name], topic_partitions=[])
            both = [TopicPartitions(topic_id=tp.topic_id, partitions=list(tp.partitions))
                    for tp in a.assignment.topic_partitions]
            bj = _join(c, group, "b", topic_name)
            now[0] += 1_000  # group.consumer.assignment.interval.ms
            r = _hb(c, group, "a", a.member_epoch, topic_partitions=both)
            assert [list(tp.partitions) for tp in r.assignment.topic_partitions] == [[0]]
            rb = _hb(c, group, "b", bj.member_epoch, topic_partitions=[])
            assert rb.assignment is None or not rb.assignment.topic_partitions  # not released
            now[0] += 9_000
            assert _hb(c, group, "a", a.member_epoch, topic_partitions=both).error_code == 0
            now[0] += 1_001  # a still holds partition 1 past its 10 s rebalance timeout
            rb = _hb(c, group, "b", rb.member_epoch, topic_partitions=[])
            # a was fenced: b gets both partitions
            assert sorted(p for tp in rb.assignment.topic_partitions for p in tp.partitions) \
                == [0, 1]
            assert _hb(c, group, "a", a.member_epoch, topic_partitions=both).error_code == 25
