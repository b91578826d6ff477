"""KIP-848 online migration end to end, on pykafkad and on Apache Kafka 4.4: confluent-kafka
consumers of one group are replaced one by one by consumers of the other group protocol while
they consume and commit; the group's type follows (classic -> consumer on the first
ConsumerGroupHeartbeat, consumer -> classic when the last consumer-protocol member leaves) and
no committed record is read again, none is lost."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer as RdConsumer
from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from pykafkad.testing import run_broker
from tests.integration.clients import create_topic, needs_java
from tests.integration.groups_support import wait_until

PARTITIONS = 4
PER_PHASE = 40
BROKER_CONFIG = {"group.initial.rebalance.delay.ms": "0"}


@pytest.fixture(scope="module")
def kafka():
    from compat.kafka_broker import run_kafka
    from tests.conftest import REFERENCE_KAFKA_VERSION

    with run_kafka(REFERENCE_KAFKA_VERSION, config=BROKER_CONFIG) as k:
        yield k


class Fleet:
    """Consumers of one group polled in turn from this thread; every record is committed
    (synchronously) right after it is received."""

    def __init__(self, bootstrap: str, group: str, topic: str):
        self.bootstrap, self.group, self.topic = bootstrap, group, topic
        self.consumers: dict[str, RdConsumer] = {}
        self.received: list[tuple[int, int]] = []
        #: records received again after their commit succeeded
        self.read_after_commit: list[tuple[int, int]] = []
        self.committed: set[tuple[int, int]] = set()
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    def start(self, name: str, protocol: str) -> None:
        config = {"bootstrap.servers": self.bootstrap, "group.id": self.group,
                  "group.protocol": protocol, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False}
        if protocol == "classic":
            config.update({"session.timeout.ms": 10000, "heartbeat.interval.ms": 500})
        c = RdConsumer(config)
        c.subscribe([self.topic])
        self.consumers[name] = c

    def stop(self, name: str) -> None:
        self.consumers.pop(name).close()

    def poll_all(self) -> None:
        for c in list(self.consumers.values()):
            m = c.poll(0.05)
            if m is None or m.error():
                continue
            key = (m.partition(), m.offset())
            if key in self.committed:
                self.read_after_commit.append(key)
            self.received.append(key)
            try:
                c.commit(message=m, asynchronous=False)
                self.committed.add(key)
            except KafkaException:
                pass  # a rebalance under way: the record may be read again (at least once)

    def consume_until(self, expected: set[tuple[int, int]], what: str) -> None:
        def done():
            self.poll_all()
            return expected <= self.committed
        wait_until(done, what, timeout=90)

    def group_type(self) -> str:
        futures = self.admin.describe_consumer_groups([self.group], request_timeout=10)
        return futures[self.group].result().type.name

    def listed_as(self) -> list[str]:
        out = []
        for kind in (ConsumerGroupType.CLASSIC, ConsumerGroupType.CONSUMER):
            listed = self.admin.list_consumer_groups(types={kind}, request_timeout=10).result()
            if any(g.group_id == self.group for g in listed.valid):
                out.append(kind.name)
        return out

    def close(self) -> None:
        for name in list(self.consumers):
            self.stop(name)


def _produce(bootstrap: str, topic: str, phase: int) -> set[tuple[int, int]]:
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(PER_PHASE):
        p.produce(topic, f"{phase}-{i}".encode(), partition=i % PARTITIONS)
    p.flush(30)
    per = PER_PHASE // PARTITIONS
    return {(part, phase * per + o) for part in range(PARTITIONS) for o in range(per)}


def _wait_type(fleet: Fleet, kind: str) -> None:
    def is_kind():
        fleet.poll_all()
        return fleet.group_type() == kind
    wait_until(is_kind, f"group {fleet.group} to be a {kind} group", timeout=60)


def _migrate(bootstrap: str, first: str, then: str) -> list:
    """Two ``first`` consumers consume, then each is replaced by a ``then`` consumer (started
    before the old one closes); returns what a client sees at each step."""
    topic, group = "mig-t-" + uuid.uuid4().hex[:8], "mig-g-" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic, PARTITIONS)
    fleet = Fleet(bootstrap, group, topic)
    seen = []
    try:
        expected = _produce(bootstrap, topic, 0)
        fleet.start("a", first)
        fleet.start("b", first)
        fleet.consume_until(expected, "the first two consumers to consume phase 0")
        seen.append(("phase 0", fleet.group_type(), fleet.listed_as()))
        expected |= _produce(bootstrap, topic, 1)
        fleet.start("c", then)
        fleet.consume_until(expected, "the mixed group to consume phase 1")
        fleet.stop("a")
        expected |= _produce(bootstrap, topic, 2)
        fleet.consume_until(expected, "b and c to consume phase 2")
        seen.append(("mixed", fleet.group_type(), fleet.listed_as()))
        fleet.start("d", then)
        fleet.consume_until(expected, "b, c, d to keep up")
        fleet.stop("b")
        final = "CONSUMER" if then == "consumer" else "CLASSIC"
        _wait_type(fleet, final)
        expected |= _produce(bootstrap, topic, 3)
        fleet.consume_until(expected, "c and d to consume phase 3")
        seen.append(("replaced", fleet.group_type(), fleet.listed_as()))
        seen.append(("read after commit", fleet.read_after_commit))
        seen.append(("lost", sorted(expected - set(fleet.received))))
    finally:
        fleet.close()
    return seen


UPGRADE = [("phase 0", "CLASSIC", ["CLASSIC"]), ("mixed", "CONSUMER", ["CONSUMER"]),
           ("replaced", "CONSUMER", ["CONSUMER"]), ("read after commit", []), ("lost", [])]
DOWNGRADE = [("phase 0", "CONSUMER", ["CONSUMER"]), ("mixed", "CONSUMER", ["CONSUMER"]),
             ("replaced", "CLASSIC", ["CLASSIC"]), ("read after commit", []), ("lost", [])]


def test_upgrade_classic_to_consumer(tmp_path):
    with run_broker(tmp_path / "data", config=BROKER_CONFIG) as b:
        assert _migrate(b.bootstrap_servers, "classic", "consumer") == UPGRADE


def test_downgrade_consumer_to_classic(tmp_path):
    with run_broker(tmp_path / "data", config=BROKER_CONFIG) as b:
        assert _migrate(b.bootstrap_servers, "consumer", "classic") == DOWNGRADE


@needs_java
@pytest.mark.parametrize("first,then,expected", [
    ("classic", "consumer", UPGRADE), ("consumer", "classic", DOWNGRADE)])
def test_kafka_migrates_the_same_way(kafka, first, then, expected):
    assert _migrate(kafka.bootstrap_servers, first, then) == expected


def _wire_transcript(bootstrap: str) -> list:
    from compat.migration_scenario import group_records, run

    topic, group = "mig-t-" + uuid.uuid4().hex[:8], "mig-g-" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic, PARTITIONS)
    lines = run(bootstrap, group, topic) + group_records(bootstrap, group)
    return [repr(line).replace(topic, "T").replace(group, "G") for line in lines]


@needs_java
def test_wire_answers_match_kafka(tmp_path, kafka):
    with run_broker(tmp_path / "data", config=BROKER_CONFIG) as b:
        ours = _wire_transcript(b.bootstrap_servers)
    theirs = _wire_transcript(kafka.bootstrap_servers)
    assert ours == theirs


def test_a_classic_member_of_a_consumer_group_survives_a_restart(tmp_path, topic_name):
    """Its ClassicMemberMetadata is in __consumer_offsets: after a restart it still heartbeats
    with its generation, and is still a classic member."""
    from compat.consumer_group_scenario import _join, wait_for_coordinator
    from compat.migration_scenario import _subscription
    from compat.wire_client import WireClient
    from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
    from wire.messages.heartbeat_request import HeartbeatRequest
    from wire.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
    from wire.messages.sync_group_request import SyncGroupRequest

    group = "mig-g-" + uuid.uuid4().hex[:8]
    data = tmp_path / "data"

    def join(c, member_id):
        return c.request(11, 7, JoinGroupRequest(
            group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000,
            member_id=member_id, protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range",
                                                metadata=_subscription(topic_name))]))

    with run_broker(data, config=BROKER_CONFIG) as b:
        create_topic(b.bootstrap_servers, topic_name, PARTITIONS)
        wait_for_coordinator(b.bootstrap_servers, group)
        with WireClient(b.bootstrap_servers) as c:
            a = join(c, "").member_id
            generation = join(c, a).generation_id
            c.request(14, 5, SyncGroupRequest(group_id=group, generation_id=generation,
                                              member_id=a, assignments=[]))
            assert _join(c, group, "b", topic_name).error_code == 0
            r = join(c, a)
            assert r.error_code == 0
            generation = r.generation_id
            s = c.request(14, 5, SyncGroupRequest(group_id=group, generation_id=generation,
                                                  member_id=a, protocol_type="consumer",
                                                  protocol_name="range", assignments=[]))
            assert s.error_code == 0
    with run_broker(data, config=BROKER_CONFIG) as b:
        wait_for_coordinator(b.bootstrap_servers, group)
        with WireClient(b.bootstrap_servers) as c:
            r = c.request(12, 4, HeartbeatRequest(group_id=group, generation_id=generation,
                                                  member_id=a))
            assert r.error_code == 0
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            assert {m.member_id: m.member_type for m in d.members} == {a: 0, "b": 1}


def _java_probe(bootstrap: str, prefix: str) -> list[str]:
    import subprocess

    from compat import maven
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    source = java.SOURCE.with_name("MigrationProbe.java")
    cp = maven.classpath(java.jars_dir(SPECS_VERSION))
    p = subprocess.run(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp,
                        str(source), bootstrap, prefix],
                       capture_output=True, text=True, timeout=400)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return [line for line in p.stdout.splitlines() if line.startswith("##")]


@needs_java
def test_java_consumers_migrate_like_on_kafka(tmp_path, kafka):
    """compat/java/MigrationProbe.java: Java consumers (kafka-clients 4.4) upgrade a classic
    group and downgrade a consumer group the same way on both brokers."""
    prefix = "mig-" + uuid.uuid4().hex[:8]
    with run_broker(tmp_path / "data", config=BROKER_CONFIG) as b:
        ours = _java_probe(b.bootstrap_servers, prefix)
    assert ours == _java_probe(kafka.bootstrap_servers, prefix) == [
        "##classic phase0 CLASSIC", "##classic mixed CONSUMER",
        "##classic replaced CONSUMER readAfterCommit=0 lost=0",
        "##consumer phase0 CONSUMER", "##consumer mixed CONSUMER",
        "##consumer replaced CLASSIC readAfterCommit=0 lost=0", "##DONE"]


def _set_group_configs(bootstrap: str, group: str, configs: dict[str, str]) -> list:
    from compat.wire_client import WireClient
    from wire.messages.incremental_alter_configs_request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    with WireClient(bootstrap) as c:
        r = c.request(44, 1, IncrementalAlterConfigsRequest(resources=[AlterConfigsResource(
            resource_type=32, resource_name=group,
            configs=[AlterableConfig(name=k, config_operation=0, value=v)
                     for k, v in configs.items()])]))
    return [(x.error_code, x.error_message) for x in r.responses]


def _heartbeat_intervals(bootstrap: str, topic: str) -> list:
    """The heartbeat interval a new member is told, before and after the group's
    consumer.heartbeat.interval.ms is set (and for a group without it)."""
    from compat.consumer_group_scenario import _hb, _join, wait_for_coordinator
    from compat.wire_client import WireClient

    group = "cfg-g-" + uuid.uuid4().hex[:8]
    wait_for_coordinator(bootstrap, group)
    out = []
    with WireClient(bootstrap) as c:
        r = _join(c, group, "a", topic)
        out.append(("default", r.error_code, r.heartbeat_interval_ms))
        out.append(("set", _set_group_configs(bootstrap, group, {
            "consumer.heartbeat.interval.ms": "6000", "consumer.session.timeout.ms": "50000"})))
        r = _hb(c, group, "a", r.member_epoch, topic_partitions=[])
        out.append(("a heartbeats", r.error_code, r.heartbeat_interval_ms))
        r = _join(c, group, "b", topic)
        out.append(("b joins", r.error_code, r.heartbeat_interval_ms))
        out.append(("too short", _set_group_configs(bootstrap, group, {
            "consumer.session.timeout.ms": "1000"})))
    return out


@needs_java
def test_group_heartbeat_interval_applies_as_on_kafka(tmp_path, topic_name, kafka):
    with run_broker(tmp_path / "data", config=BROKER_CONFIG) as b:
        create_topic(b.bootstrap_servers, topic_name, PARTITIONS)
        ours = _heartbeat_intervals(b.bootstrap_servers, topic_name)
    create_topic(kafka.bootstrap_servers, topic_name, PARTITIONS)
    theirs = _heartbeat_intervals(kafka.bootstrap_servers, topic_name)
    assert ours == theirs
    assert [line[:3] for line in ours[:1]] == [("default", 0, 5000)]
    assert ours[2:4] == [("a heartbeats", 0, 6000), ("b joins", 0, 6000)]


def test_group_session_timeout_fences_a_member_as_configured(tmp_path, topic_name):
    """consumer.session.timeout.ms of the group (50 s) instead of the broker's 45 s."""
    from compat.consumer_group_scenario import _hb, _join, wait_for_coordinator
    from compat.wire_client import WireClient
    from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest

    now = [1_800_000_000_000]
    with run_broker(tmp_path / "data", config=BROKER_CONFIG, clock=lambda: now[0]) as b:
        bs = b.bootstrap_servers
        create_topic(bs, topic_name, 2)
        group = "cfg-g-" + uuid.uuid4().hex[:8]
        wait_for_coordinator(bs, group)
        assert _set_group_configs(bs, group, {"consumer.session.timeout.ms": "50000"}) == \
            [(0, None)]
        with WireClient(bs) as c:
            a = _join(c, group, "a", topic_name)
            r = _join(c, group, "b", topic_name)
            now[0] += 48_000  # past the broker's 45 s, inside the group's 50 s
            r = _hb(c, group, "b", r.member_epoch, topic_partitions=[])
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            assert sorted(m.member_id for m in d.members) == ["a", "b"]
            now[0] += 3_000  # a's 50 s are over
            r = _hb(c, group, "b", r.member_epoch, topic_partitions=[])
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            assert [m.member_id for m in d.members] == ["b"]
            assert _hb(c, group, "a", a.member_epoch, topic_partitions=[]).error_code == 25


@pytest.mark.parametrize("policy", ["downgrade", "disabled"])
def test_no_upgrade_unless_the_policy_allows_it(tmp_path, topic_name, policy):
    """group.consumer.migration.policy without upgrade: a ConsumerGroupHeartbeat to a classic
    group in use answers GROUP_ID_NOT_FOUND (Kafka's GroupIdNotFoundException), the group stays
    classic."""
    from compat.consumer_group_scenario import _join, wait_for_coordinator
    from compat.wire_client import WireClient
    from wire.messages.list_groups_request import ListGroupsRequest

    group = "mig-g-" + uuid.uuid4().hex[:8]
    with run_broker(tmp_path / "data", config={
            **BROKER_CONFIG, "group.consumer.migration.policy": policy}) as b:
        create_topic(b.bootstrap_servers, topic_name, PARTITIONS)
        wait_for_coordinator(b.bootstrap_servers, group)
        with WireClient(b.bootstrap_servers) as c:
            first = _classic_join(c, group, topic_name, "")
            assert _classic_join(c, group, topic_name, first.member_id).error_code == 0
            assert _join(c, group, "b", topic_name).error_code == 69
            listed = c.request(16, 5, ListGroupsRequest(types_filter=[])).groups
            assert [g.group_type for g in listed if g.group_id == group] == ["classic"]


def test_no_downgrade_when_the_policy_is_upgrade(tmp_path, topic_name):
    """With group.consumer.migration.policy=upgrade the last consumer member's leaving keeps
    the group a consumer group: its classic member stays, driven by the consumer group."""
    from compat.consumer_group_scenario import _hb, _join, wait_for_coordinator
    from compat.wire_client import WireClient
    from wire.messages.list_groups_request import ListGroupsRequest

    group = "mig-g-" + uuid.uuid4().hex[:8]
    with run_broker(tmp_path / "data", config={
            **BROKER_CONFIG, "group.consumer.migration.policy": "upgrade"}) as b:
        create_topic(b.bootstrap_servers, topic_name, PARTITIONS)
        wait_for_coordinator(b.bootstrap_servers, group)
        with WireClient(b.bootstrap_servers) as c:
            first = _classic_join(c, group, topic_name, "")
            assert _classic_join(c, group, topic_name, first.member_id).error_code == 0
            assert _join(c, group, "b", topic_name).error_code == 0
            assert _hb(c, group, "b", -1).error_code == 0
            listed = c.request(16, 5, ListGroupsRequest(types_filter=[])).groups
            assert [g.group_type for g in listed if g.group_id == group] == ["consumer"]


def _static_transcript(bootstrap: str) -> list:
    from compat.migration_scenario import run_static

    topic, group = "mig-t-" + uuid.uuid4().hex[:8], "mig-g-" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic, PARTITIONS)
    return [repr(line).replace(topic, "T").replace(group, "G")
            for line in run_static(bootstrap, group, topic)]


@needs_java
def test_static_members_migrate_as_on_kafka(tmp_path, kafka):
    with run_broker(tmp_path / "data", config=BROKER_CONFIG) as b:
        ours = _static_transcript(b.bootstrap_servers)
    theirs = _static_transcript(kafka.bootstrap_servers)
    assert ours == theirs


def _mixed(bootstrap: str, tmp_path) -> list:
    """Two classic confluent-kafka consumers, then a Java consumer with group.protocol=consumer
    joins (the group upgrades) and the confluent ones leave one by one: every record is
    committed once by someone."""
    import subprocess

    from compat import maven
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    topic, group = "mix-t-" + uuid.uuid4().hex[:8], "mix-g-" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic, PARTITIONS)
    fleet = Fleet(bootstrap, group, topic)
    stop = tmp_path / ("stop-" + group)
    cp = maven.classpath(java.jars_dir(SPECS_VERSION))
    seen = []
    proc = None
    try:
        expected = _produce(bootstrap, topic, 0)
        fleet.start("a", "classic")
        fleet.start("b", "classic")
        fleet.consume_until(expected, "the classic consumers to consume phase 0")
        seen.append(("classic", fleet.group_type()))
        proc = subprocess.Popen(
            ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp,
             str(java.SOURCE.with_name("MigrationProbe.java")), bootstrap, group, topic,
             "consumer", str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_type(fleet, "CONSUMER")
        seen.append(("java joined", fleet.group_type()))
        fleet.stop("a")
        expected |= _produce(bootstrap, topic, 1)

        fleet.poll_all()
        fleet.stop("b")
        expected |= _produce(bootstrap, topic, 2)
        # only the Java member is left: it must consume everything not committed yet
        stop_after = set(fleet.committed)
        end = 3 * PER_PHASE // PARTITIONS

        def all_committed():
            r = fleet.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(
                group, [TopicPartition(topic, p) for p in range(PARTITIONS)])])[group].result()
            return all(tp.offset == end for tp in r.topic_partitions)
        wait_until(all_committed, "the Java member to commit everything", timeout=90)
        stop.touch()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-3000:]
        java_got = {tuple(int(x) for x in line.split()[1].split("@"))
                    for line in out.splitlines() if line.startswith("##GOT ")}
        seen.append(("java again", [line for line in out.splitlines()
                                    if line.startswith("##AGAIN")]))
        seen.append(("committed twice", sorted(java_got & stop_after)))
        seen.append(("lost", sorted(expected - java_got - stop_after)))
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        fleet.close()
    return seen


@needs_java
def test_java_and_confluent_members_mixed_as_on_kafka(tmp_path, kafka):
    with run_broker(tmp_path / "data", config=BROKER_CONFIG) as b:
        ours = _mixed(b.bootstrap_servers, tmp_path)
    theirs = _mixed(kafka.bootstrap_servers, tmp_path)
    assert ours == theirs == [("classic", "CLASSIC"), ("java joined", "CONSUMER"),
                              ("java again", ["##AGAIN 0"]), ("committed twice", []),
                              ("lost", [])]


def test_a_classic_member_is_fenced_after_its_own_session_timeout(tmp_path, topic_name):
    """A classic member inside a consumer group keeps the session timeout of its JoinGroup
    (here 10 s, where consumer-protocol members have 45 s)."""
    from compat.consumer_group_scenario import _hb, _join, wait_for_coordinator
    from compat.migration_scenario import _subscription
    from compat.wire_client import WireClient
    from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
    from wire.messages.heartbeat_request import HeartbeatRequest
    from wire.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol

    now = [1_800_000_000_000]
    group = "mig-g-" + uuid.uuid4().hex[:8]
    with run_broker(tmp_path / "data", config=BROKER_CONFIG, clock=lambda: now[0]) as b:
        bs = b.bootstrap_servers
        create_topic(bs, topic_name, PARTITIONS)
        wait_for_coordinator(bs, group)
        with WireClient(bs) as c:
            rb = _join(c, group, "b", topic_name)
            j = c.request(11, 7, JoinGroupRequest(
                group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=30000,
                member_id="a", protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range",
                                                    metadata=_subscription(topic_name))]))
            assert j.error_code == 0
            now[0] += 9_000
            rb = _hb(c, group, "b", rb.member_epoch, topic_partitions=[])
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            assert sorted(m.member_id for m in d.members) == ["a", "b"]
            now[0] += 2_000  # a's 10 s are over, b's 45 s are not
            rb = _hb(c, group, "b", rb.member_epoch, topic_partitions=[])
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            assert [m.member_id for m in d.members] == ["b"]
            r = c.request(12, 4, HeartbeatRequest(group_id=group, generation_id=j.generation_id,
                                                  member_id="a"))
            assert r.error_code == 25  # UNKNOWN_MEMBER_ID


def _classic_join(c, group: str, topic: str, member_id: str):
    """A classic consumer's JoinGroup (v7, the range assignor) for ``topic``."""
    from compat.migration_scenario import _subscription
    from wire.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol

    return c.request(11, 7, JoinGroupRequest(
        group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000,
        member_id=member_id, protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=_subscription(topic))]))
