"""Issue 14.4: the compat suite's cluster scenarios and the kill loop on a mixed cluster, an
Apache Kafka 4.4 controller with one Kafka broker and two pykafkad brokers (every topic of the
scenarios has replicas, and leaders, on both kinds).

The kill loop takes a Kafka broker and then a pykafkad broker down (SIGKILL) under an
idempotent acks=all producer: nothing acknowledged may be lost or duplicated, and every
replica's log must be identical afterwards, byte for byte and in Kafka's DumpLogSegments.
"""

from __future__ import annotations

import os
import time

import pytest

from compat.__main__ import TEST_BROKER_CONFIG
from compat.conftest import NODE_STOPPING
from compat.failover import CLUSTER_CONFIG, run_failover
from compat.mixed_targets import MixedNodes, MixedTarget, run_mixed_cluster
from compat.runner import PASS, run_matrix
from compat.scenarios import CLUSTER_SCENARIOS
from tests.integration.clients import WAIT_S, needs_java

pytestmark = needs_java

#: every client
CLIENTS = ["kafka-python", "confluent-kafka", "java", "kcat", "spark"]
CLUSTER = {s.name for s in CLUSTER_SCENARIOS}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_mixed_cluster(("kafka", "pykafkad", "pykafkad"), controller="kafka",
                           config={**TEST_BROKER_CONFIG, **CLUSTER_CONFIG},
                           data_dir=tmp_path_factory.mktemp("mixed-compat")) as c:
        yield c


def _internal_topic_layout(bootstrap: str, topic: str):
    """(partitions, replicas of each) of ``topic`` once Metadata shows it, else None."""
    from compat.failover import partition_states

    states = partition_states(bootstrap, topic)
    return (len(states), {len(isr) for _, _, isr in states.values()}) if states else None


def test_metadata_auto_creates_internal_topics_as_their_coordinators_do(cluster):
    """librdkafka's admin client (a producer underneath) asks for __consumer_offsets with
    auto-creation on; through a pykafkad broker, Kafka's controller got a one-partition,
    one-replica topic (pykafkad asked with num.partitions), through Kafka's broker 50 x 3."""
    from compat.wire_client import WireClient
    from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic

    pykafkad = next(n for n in cluster.brokers.values() if n.kind == "pykafkad")
    at = f"127.0.0.1:{pykafkad.port}"
    names = ["__consumer_offsets", "__transaction_state"]
    with WireClient(at, timeout=10) as c:
        c.request(3, 12, MetadataRequest(topics=[MetadataRequestTopic(name=n) for n in names],
                                         allow_auto_topic_creation=True))
    for name, partitions in zip(names, (50, 50), strict=True):
        deadline = time.monotonic() + WAIT_S
        while _internal_topic_layout(at, name) != (partitions, {3}):
            assert time.monotonic() < deadline, (name, _internal_topic_layout(at, name))
            time.sleep(0.2)  # the controller's topic creation has nothing to wait on


def _failures(m) -> str:
    return "compat failures:\n" + "\n".join(f"  {s} / {c}: {r.reason}" for s, c, r in m.failures())


def test_cluster_scenarios_on_a_mixed_cluster(cluster):
    def run(scenarios, clients):
        return run_matrix(cluster.bootstrap_servers, scenarios=scenarios, clients=clients,
                          target=f"mixed cluster ({cluster.describe()})",
                          require_clients=bool(os.environ.get("CI")), nodes=MixedNodes(cluster))

    m = run([s for s in sorted(CLUSTER) if s not in NODE_STOPPING], CLIENTS)
    for scenario, clients in NODE_STOPPING.items():
        part = run([scenario], clients)
        m.results.update(part.results)
    assert not m.failures(), _failures(m)
    passed = {s for (s, _), r in m.results.items() if r.status == PASS}
    assert passed == CLUSTER, sorted(CLUSTER - passed)
    # kafka-python, confluent-kafka and java each ran every scenario given to them (the
    # spark-* ones are Spark's own)
    for c in ("kafka-python", "confluent-kafka", "java"):
        given = {s for (s, cc) in m.results if cc == c and not s.startswith("spark-")}
        passed = {s for s in given if m.results[(s, c)].status == PASS}
        assert passed == given, (c, {s: m.results[(s, c)].status for s in given - passed})


def test_kill_loop_kills_each_kind_of_broker(cluster):
    result = run_failover(MixedTarget(cluster), f"mixed cluster ({cluster.describe()})",
                          rounds=2, roles=("kafka", "pykafkad"), rate=1000, log=print)
    assert [(r.role, cluster.brokers[r.victim].kind) for r in result.rounds] == [
        ("kafka", "kafka"), ("pykafkad", "pykafkad")], result.summary()
    assert result.acked > 0
    assert (result.lost, result.duplicated, result.misplaced, result.out_of_order) == (
        0, 0, 0, 0), result.summary()
    assert result.replicas_identical and result.dumps_identical, result.summary()
    assert result.ok, result.summary()
