"""Apache Kafka 4.4 brokers under a pykafkad controller (issue 14.2): two Kafka brokers register
with a one-voter pykafkad quorum, are unfenced, replicate its metadata log byte for byte, host a
replicated topic created through them (CreateTopics forwarded to pykafkad), serve confluent-kafka,
and see leadership move when one of them dies. Kafka's own tools describe the quorum and the
topic through a Kafka broker."""

from __future__ import annotations

import re
import time

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from compat.kafka_tools import run_tool
from compat.mixed_cluster import run_kafka_brokers_under_pykafkad
from pykafkad.metadata.batches import decode_batches
from tests.integration.clients import WAIT_S, confluent_consume, confluent_produce, needs_java
from wire.metadata.broker_registration_change_record import BrokerRegistrationChangeRecord
from wire.metadata.register_controller_record import RegisterControllerRecord

#: the features Kafka 4.4's controller registers with (its own __cluster_metadata)
KAFKA_44_CONTROLLER_FEATURES = [
    ("group.version", 0, 1), ("kraft.version", 0, 1), ("metadata.version", 7, 33),
    ("share.version", 0, 2), ("streams.version", 0, 1), ("transaction.version", 0, 2),
    ("eligible.leader.replicas.version", 0, 1)]

pytestmark = needs_java

#: the controller fences a SIGKILLed broker after this long without heartbeats
SESSION_TIMEOUT_MS = 4000


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    with run_kafka_brokers_under_pykafkad(
            brokers=2, controller_config={"broker.session.timeout.ms": str(SESSION_TIMEOUT_MS)},
            data_dir=tmp_path_factory.mktemp("mixed")) as cluster:
        yield cluster


def wait_for(condition, what: str, timeout: float = 3 * WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)  # polling other processes' state: nothing to wait on


def partition_state(bootstrap: str, topic: str, partition: int):
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=WAIT_S)
    t = md.topics.get(topic)
    if t is None or t.error is not None or partition not in t.partitions:
        return None
    p = t.partitions[partition]
    return p.leader, sorted(p.replicas), sorted(p.isrs)


def test_kafka_brokers_register_replicate_and_serve(mixed):
    b2, b3 = mixed.brokers
    admin = AdminClient({"bootstrap.servers": b2.bootstrap_servers})
    md = admin.list_topics(timeout=WAIT_S)
    assert sorted(md.brokers) == [2, 3] and md.cluster_id == mixed.cluster_id

    status = run_tool("kafka-metadata-quorum", ["--bootstrap-server", b2.bootstrap_servers,
                                                "describe", "--status"], check=True).stdout
    assert re.search(r"^LeaderId:\s+1$", status, re.M), status
    assert f'CurrentVoters:          [{{"id": 1, "endpoints": ["CONTROLLER://127.0.0.1:' \
           f'{mixed.controller.port}"]}}]' in status, status
    observers = re.search(r"^CurrentObservers:\s+(.*)$", status, re.M).group(1)
    assert sorted(map(int, re.findall(r'"id": (\d+), "directoryId": "[\w-]{22}"', observers))) \
        == [2, 3], status
    replication = run_tool("kafka-metadata-quorum", ["--bootstrap-server", b3.bootstrap_servers,
                                                     "describe", "--replication"],
                           check=True).stdout
    rows = {int(r.split()[0]): r.split()[-1] for r in replication.splitlines()[1:] if r.strip()}
    assert rows == {1: "Leader", 2: "Observer", 3: "Observer"}, replication

    # the controller listener reports the ranges the controller finalizes, as Kafka's does
    described = run_tool("kafka-features", ["--bootstrap-controller",
                                            f"127.0.0.1:{mixed.controller.port}", "describe"],
                         check=True).stdout
    levels = dict((m[0], (m[1], m[2])) for m in re.findall(
        r"Feature: (\S+)\s+SupportedMinVersion: \S+\s+SupportedMaxVersion: (\d+)\s+"
        r"FinalizedVersionLevel: (\d+)", described))
    assert levels == {"group.version": ("1", "1"), "share.version": ("2", "2"),
                      "streams.version": ("1", "1"), "transaction.version": ("2", "2"),
                      "eligible.leader.replicas.version": ("1", "1"),
                      "kraft.version": ("1", "0")}, described

    # a topic created through a Kafka broker: CreateTopics forwarded to the pykafkad controller
    topic = "replicated"
    admin.create_topics([NewTopic(topic, 2, 2)])[topic].result(WAIT_S)
    for partition in (0, 1):
        wait_for(lambda p=partition: (s := partition_state(b3.bootstrap_servers, topic, p))
                 and s[0] in (2, 3) and s[1] == [2, 3] and s[2] == [2, 3],
                 f"{topic}-{partition} led with both replicas in sync")
    described = run_tool("kafka-topics", ["--bootstrap-server", b3.bootstrap_servers,
                                          "--describe", "--topic", topic], check=True).stdout
    assert "PartitionCount: 2\tReplicationFactor: 2" in described, described
    assert len(re.findall(r"Replicas: (2,3|3,2)\tIsr: (2,3|3,2)\tElr: \tLastKnownElr: ",
                          described)) == 2, described

    delivered = confluent_produce(b2.bootstrap_servers, topic,
                                  [{"value": b"v%d" % i, "partition": i % 2} for i in range(20)],
                                  acks="all")
    assert len(delivered) == 20
    got = confluent_consume(b3.bootstrap_servers, topic, 20, partitions=(0, 1))
    assert sorted(m.value() for m in got) == sorted(b"v%d" % i for i in range(20))

    # a consumer group: __consumer_offsets (RF 2) created by a Kafka broker through the controller
    c = Consumer({"bootstrap.servers": mixed.bootstrap_servers, "group.id": "mixed-group",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.subscribe([topic])
        seen = []
        deadline = time.monotonic() + 3 * WAIT_S
        while len(seen) < 20 and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                seen.append(m.value())
        assert len(seen) == 20
        c.commit(asynchronous=False)
    finally:
        c.close()
    assert partition_state(b2.bootstrap_servers, "__consumer_offsets", 0)[1] == [2, 3]

    # every Kafka broker's copy of the metadata log is the controller's, byte for byte
    ours = (mixed.controller.data_dir / "logs" / "__cluster_metadata-0"
            / "00000000000000000000.log")
    # the controller registered the feature ranges Kafka's controller registers: it finalizes
    # the broker-side features Kafka's format wrote (group.version=1 ...) and so supports them
    registrations = [r for b in decode_batches(ours.read_bytes()) for r, _ in b.records
                     if isinstance(r, RegisterControllerRecord)]
    assert [(f.name, f.min_supported_version, f.max_supported_version)
            for f in registrations[0].features] == KAFKA_44_CONTROLLER_FEATURES
    for b in (b2, b3):
        theirs = (b.data_dir / "logs" / "__cluster_metadata-0" / "00000000000000000000.log")
        wait_for(lambda f=theirs: (a := ours.read_bytes()) and (t := f.read_bytes())
                 and (a.startswith(t) or t.startswith(a)) and len(t) > 0,
                 f"node {b.data_dir.name}'s metadata log matches the controller's")


def test_leadership_moves_when_a_kafka_broker_dies(mixed):
    topic = "failover"
    b2, b3 = mixed.brokers
    admin = AdminClient({"bootstrap.servers": b2.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 2)])[topic].result(WAIT_S)
    # below min.insync.replicas after the kill: ELR (KIP-966, finalized by Kafka 4.4's format)
    admin.create_topics([NewTopic("failover-elr", 1, 2, config={"min.insync.replicas": "2"})]
                        )["failover-elr"].result(WAIT_S)
    leader, _, _ = wait_for(lambda: (s := partition_state(b2.bootstrap_servers, topic, 0))
                            and s[0] in (2, 3) and s[2] == [2, 3] and s,
                            "a leader with both replicas in sync")
    assert len(confluent_produce(b2.bootstrap_servers, topic, [{"value": b"before"}],
                                 acks="all")) == 1
    dead, survivor = (b2, b3) if leader == 2 else (b3, b2)
    survivor_id = 5 - leader
    dead.proc.kill()
    dead.proc.wait(WAIT_S)
    # fenced after the session timeout: the survivor leads, alone in the ISR
    wait_for(lambda: partition_state(survivor.bootstrap_servers, topic, 0)
             == (survivor_id, [2, 3], [survivor_id]), f"broker {survivor_id} leading alone")
    wait_for(lambda: (st := partition_state(survivor.bootstrap_servers, "failover-elr", 0))
             and st[0] == survivor_id and st[2] == [survivor_id], "failover-elr moved")
    described = run_tool("kafka-topics", ["--bootstrap-server", survivor.bootstrap_servers,
                                          "--describe", "--topic", "failover-elr"],
                         check=True).stdout
    assert f"Leader: {survivor_id}\tReplicas: " in described, described
    # the dead broker left the ISR for the ELR: it may lead again (clean) once back
    assert f"Isr: {survivor_id}\tElr: {leader}\tLastKnownElr: \n" in described, described
    assert len(confluent_produce(survivor.bootstrap_servers, topic, [{"value": b"after"}],
                                 acks="all")) == 1
    got = confluent_consume(survivor.bootstrap_servers, topic, 2)
    assert [m.value() for m in got] == [b"before", b"after"]

    # each registration change goes at the version Kafka 4.4's controller writes it at: the
    # first with its field (seen in Kafka's own __cluster_metadata)
    log = mixed.controller.data_dir / "logs" / "__cluster_metadata-0" / "00000000000000000000.log"
    changes = {(v, r.fenced, r.in_controlled_shutdown, r.cordoned_log_dirs is not None)
               for b in decode_batches(log.read_bytes()) for r, v in b.records
               if isinstance(r, BrokerRegistrationChangeRecord)}
    assert changes == {(0, -1, 0, False), (0, 1, 0, False), (3, 0, 0, True)}, changes
