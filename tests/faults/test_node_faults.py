"""Node faults on a three-node cluster (run_cluster): a paused follower leaves the ISR after
replica.lag.time.max.ms and rejoins once resumed; an isolated active controller is replaced
by a new one, and follows it once healed; a node cut off from the clients still replicates."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from compat.wire_client import WireClient
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S
from tests.kraft.quorum_helpers import describe_quorum
from tests.kraft.test_broker_replication import create_topic, node_bootstrap, partition_state
from wire.errors import ErrorCode
from wire.messages.metadata_request import MetadataRequest

#: a paused follower leaves the ISR quickly; its broker session outlives the test (so the ISR
#: shrinks through the leader's AlterPartition, not through fencing)
CONFIG = {"replica.lag.time.max.ms": "1500", "broker.session.timeout.ms": "60000",
          "broker.heartbeat.interval.ms": "500"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("faults")) as c:
        yield c


def wait_for(cond, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def quorum_leader(cluster, asking: list[int]) -> int | None:
    """The node among ``asking`` that answers DescribeQuorum as the quorum's leader."""
    for node_id in asking:
        n = cluster.nodes[node_id]
        try:
            p = describe_quorum(n.host, n.controller_port)
        except OSError:
            continue
        if p.error_code == ErrorCode.NONE and p.leader_id == node_id:
            return node_id
    return None


def known_leader(cluster, node_id: int) -> int:
    """The quorum leader ``node_id`` has recorded in its quorum-state file."""
    path = Path(cluster.data_dir) / f"node-{node_id}" / "data" / "__cluster_metadata-0" \
        / "quorum-state"
    try:
        return json.loads(path.read_text()).get("leaderId", -1)
    except (OSError, ValueError):
        return -1


def produce(producer: Producer, topic: str, count: int) -> None:
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), partition=0)
    assert producer.flush(WAIT_S) == 0


def leader_producer(cluster, leader: int) -> Producer:
    """acks=1 to the leader alone: a paused or cut-off node is never asked."""
    return Producer({"bootstrap.servers": node_bootstrap(cluster, leader), "acks": 1,
                     "linger.ms": 5})


def test_a_paused_follower_leaves_the_isr_and_rejoins_when_resumed(cluster):
    topic = create_topic(cluster, partitions=1, rf=3)
    leader, replicas, isr = partition_state(cluster.bootstrap_servers.split(",")[0], topic)
    assert isr == [1, 2, 3]
    controller = quorum_leader(cluster, list(cluster.nodes))
    follower = next(n for n in replicas if n not in (leader, controller))
    leader_bootstrap = node_bootstrap(cluster, leader)
    producer = leader_producer(cluster, leader)
    cluster.pause(follower)
    try:
        def shrunk():
            produce(producer, topic, 5)  # the paused follower falls behind
            state = partition_state(leader_bootstrap, topic)
            return state is not None and follower not in state[2]
        wait_for(shrunk, f"the ISR to drop paused node {follower}")
    finally:
        cluster.resume(follower)
    wait_for(lambda: partition_state(leader_bootstrap, topic)[2] == [1, 2, 3],
             f"resumed node {follower} back in the ISR")


def test_an_isolated_active_controller_is_replaced_and_follows_once_healed(cluster):
    old = wait_for(lambda: quorum_leader(cluster, list(cluster.nodes)), "a quorum leader")
    others = [n for n in cluster.nodes if n != old]
    cluster.isolate(old)
    try:
        new = wait_for(lambda: quorum_leader(cluster, others), "a new quorum leader")
        assert new != old
        # clients still reach the isolated node
        with WireClient(node_bootstrap(cluster, old)) as client:
            assert client.request(3, 12, MetadataRequest(topics=[])).brokers
    finally:
        cluster.heal(old)
    wait_for(lambda: known_leader(cluster, old) == new, f"node {old} following node {new}")
    assert quorum_leader(cluster, list(cluster.nodes)) == new


def test_a_node_cut_off_from_clients_still_replicates(cluster):
    topic = create_topic(cluster, partitions=1, rf=3)
    leader, _replicas, _isr = partition_state(cluster.bootstrap_servers.split(",")[0], topic)
    cut = next(n for n in cluster.nodes if n != leader)
    cluster.isolate(cut, from_clients=True)
    try:
        with pytest.raises((ConnectionError, OSError)):
            with WireClient(node_bootstrap(cluster, cut), timeout=5) as client:
                client.request(3, 12, MetadataRequest(topics=[]))
        produce(leader_producer(cluster, leader), topic, 20)
        # the leader's ISR keeps the cut-off node: it still fetches
        assert cut in partition_state(node_bootstrap(cluster, leader), topic)[2]
    finally:
        cluster.heal(cut)
    assert partition_state(node_bootstrap(cluster, cut), topic) is not None


def test_each_node_has_its_own_fault_rules(cluster):
    """A rule on the partition's leader: its producer gets NOT_LEADER_OR_FOLLOWER twice,
    refreshes its metadata, finds the same leader and succeeds; the other nodes have none."""
    topic = create_topic(cluster, partitions=1, rf=3)
    leader, _replicas, _isr = partition_state(cluster.bootstrap_servers.split(",")[0], topic)
    rule_id = cluster.nodes[leader].faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER",
                                               count=2, topic=topic, partition=0)
    delivered = []
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                  "retry.backoff.ms": 20})
    p.produce(topic, b"v", partition=0, on_delivery=lambda err, msg: delivered.append(err))
    assert p.flush(WAIT_S) == 0 and delivered == [None]
    rule = next(r for r in cluster.nodes[leader].faults.list() if r["rule_id"] == rule_id)
    assert rule["fired"] == 2
    assert all(cluster.nodes[n].faults.list() == [] for n in cluster.nodes if n != leader)
    cluster.nodes[leader].faults.clear()
