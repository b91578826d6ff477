"""A pykafkad broker under an Apache Kafka 4.4 controller (issue 14.1): next to a Kafka broker,
it registers with Kafka's controller and is unfenced, follows Kafka's metadata log, leads and
follows partitions, replicates both ways byte for byte, and takes over every leadership when the
Kafka broker dies (and the reverse). Kafka's own tools describe it as a healthy broker."""

from __future__ import annotations

import re
import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat.kafka_tools import run_tool
from compat.mixed_cluster import run_pykafkad_broker_under_kafka
from tests.integration.clients import WAIT_S, confluent_consume, confluent_produce, needs_java

pytestmark = needs_java

#: the Kafka controller fences a SIGKILLed broker after this long without heartbeats
SESSION_TIMEOUT_MS = 4000
KAFKA, PYKAFKAD = 2, 3


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_pykafkad_broker_under_kafka(
            controller_config={"broker.session.timeout.ms": str(SESSION_TIMEOUT_MS)},
            data_dir=tmp_path_factory.mktemp("pykafkad-under-kafka")) as c:
        yield c


def wait_for(condition, what: str, timeout: float = 3 * WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)  # polling other processes' state: nothing to wait on


def partition_states(bootstrap: str, topic: str) -> dict | None:
    """partition -> (leader, replicas, isr), as the broker at ``bootstrap`` answers Metadata."""
    try:
        md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=5)
    except Exception:  # the broker is still starting: no answer yet
        return None
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        return None
    return {i: (p.leader, sorted(p.replicas), sorted(p.isrs)) for i, p in t.partitions.items()}


def addr(node) -> str:
    return f"127.0.0.1:{node.port}"


def segment(node, topic: str, partition: int) -> bytes:
    return (node.props.parent / "logs" / f"{topic}-{partition}"
            / "00000000000000000000.log").read_bytes()


def test_the_pykafkad_broker_is_registered_and_unfenced(cluster):
    for node in (cluster.kafka, cluster.pykafkad):
        md = AdminClient({"bootstrap.servers": addr(node)}).list_topics(timeout=WAIT_S)
        assert sorted(md.brokers) == [KAFKA, PYKAFKAD] and md.cluster_id == cluster.cluster_id
        assert md.controller_id in (KAFKA, PYKAFKAD)  # a broker stands in for the controller
    for node in (cluster.kafka, cluster.pykafkad):
        admin = AdminClient({"bootstrap.servers": addr(node)})
        described = admin.describe_cluster().result(WAIT_S)
        assert {n.id: n.port for n in described.nodes} == {
            KAFKA: cluster.kafka.port, PYKAFKAD: cluster.pykafkad.port}
        assert described.cluster_id == cluster.cluster_id

    for via in (cluster.kafka, cluster.pykafkad):
        status = run_tool("kafka-metadata-quorum", ["--bootstrap-server", addr(via),
                                                    "describe", "--status"], check=True).stdout
        assert re.search(r"^LeaderId:\s+1$", status, re.M), status
        observers = re.search(r"^CurrentObservers:\s+(.*)$", status, re.M).group(1)
        assert sorted(map(int, re.findall(r'"id": (\d+), "directoryId": "[\w-]{22}"',
                                          observers))) == [KAFKA, PYKAFKAD], status
        replication = run_tool("kafka-metadata-quorum", ["--bootstrap-server", addr(via),
                                                         "describe", "--replication"],
                               check=True).stdout
        rows = {int(r.split()[0]): r.split()[-1] for r in replication.splitlines()[1:]
                if r.strip()}
        assert rows == {1: "Leader", KAFKA: "Observer", PYKAFKAD: "Observer"}, replication
    cluster_id = run_tool("kafka-cluster", ["cluster-id", "--bootstrap-server",
                                            addr(cluster.pykafkad)], check=True).stdout
    assert cluster_id.strip() == f"Cluster ID: {cluster.cluster_id}", cluster_id


def test_replication_both_ways_and_failover(cluster):
    topic = "mixed"
    admin = AdminClient({"bootstrap.servers": addr(cluster.pykafkad)})
    # partition 0 led by the Kafka broker, partition 1 by the pykafkad broker
    admin.create_topics([NewTopic(topic, 2, replica_assignment=[[KAFKA, PYKAFKAD],
                                                             [PYKAFKAD, KAFKA]])]
                        )[topic].result(WAIT_S)
    both = {0: (KAFKA, [2, 3], [2, 3]), 1: (PYKAFKAD, [2, 3], [2, 3])}
    for node in (cluster.kafka, cluster.pykafkad):
        wait_for(lambda n=node: partition_states(addr(n), topic) == both,
                 f"both replicas in sync, as node {node.node_id} sees them")
    described = run_tool("kafka-topics", ["--bootstrap-server", addr(cluster.kafka),
                                          "--describe", "--topic", topic], check=True).stdout
    assert "PartitionCount: 2\tReplicationFactor: 2" in described, described
    assert "Partition: 0\tLeader: 2\tReplicas: 2,3\tIsr: 2,3" in described, described
    assert "Partition: 1\tLeader: 3\tReplicas: 3,2\tIsr: 3,2" in described, described

    sent = [b"first-%d" % i for i in range(100)]
    assert len(confluent_produce(cluster.bootstrap_servers, topic,
                                 [{"value": v, "partition": i % 2} for i, v in enumerate(sent)],
                                 acks="all")) == len(sent)
    got = confluent_consume(cluster.bootstrap_servers, topic, len(sent), partitions=(0, 1))
    assert sorted(m.value() for m in got) == sorted(sent)
    # the follower's log is the leader's, byte for byte (each way)
    for p in (0, 1):
        wait_for(lambda p=p: segment(cluster.kafka, topic, p)
                 == segment(cluster.pykafkad, topic, p) != b"", f"{topic}-{p} replicas equal")

    # the Kafka broker dies: the pykafkad broker leads both partitions, alone in the ISR
    for dead, survivor, batch in ((cluster.kafka, cluster.pykafkad, "second"),
                                  (cluster.pykafkad, cluster.kafka, "third")):
        dead.kill()
        alone = {p: (survivor.node_id, [2, 3], [survivor.node_id]) for p in (0, 1)}
        wait_for(lambda s=survivor, a=alone: partition_states(addr(s), topic) == a,
                 f"node {survivor.node_id} leading both partitions alone")
        more = [b"%s-%d" % (batch.encode(), i) for i in range(50)]
        assert len(confluent_produce(addr(survivor), topic,
                                     [{"value": v, "partition": i % 2}
                                      for i, v in enumerate(more)], acks="all")) == len(more)
        sent += more
        # back: it catches up and rejoins the ISR
        dead.start()
        wait_for(lambda s=survivor: (st := partition_states(addr(s), topic))
                 and all(st[p][2] == [2, 3] for p in (0, 1)),
                 f"node {dead.node_id} back in the ISR")
        got = confluent_consume(addr(survivor), topic, len(sent), partitions=(0, 1))
        assert sorted(m.value() for m in got) == sorted(sent)
    for p in (0, 1):
        wait_for(lambda p=p: segment(cluster.kafka, topic, p)
                 == segment(cluster.pykafkad, topic, p), f"{topic}-{p} replicas equal at the end")
