"""auto.leader.rebalance.enable on a three-node cluster: when a broker stops, its leaderships
move to the other replicas; once it is back and in the ISR again, the active controller's
periodic balance task (leader.imbalance.check.interval.seconds after the write that left
partitions off their preferred leader) hands it its preferred leaderships back."""

from __future__ import annotations

import os
import subprocess

from confluent_kafka.admin import AdminClient, NewTopic

from compat.kafka_broker import JAVA_OPTS, java_binary, kafka_classpath, run_kafka_cluster
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S, needs_java
from tests.kraft.test_broker_replication import active_controller, node_bootstrap, wait_for

CONFIG = {"leader.imbalance.check.interval.seconds": "1",
          "broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}
TOPIC = "rebalanced"


def leaders(bootstrap: str) -> dict[int, tuple[int, list[int], list[int]]] | None:
    """partition -> (leader, replicas, isr), as one broker's Metadata says."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    md = admin.list_topics(TOPIC, timeout=WAIT_S).topics.get(TOPIC)
    if md is None or md.error is not None or not md.partitions:
        return None
    return {p.id: (p.leader, list(p.replicas), list(p.isrs)) for p in md.partitions.values()}


def preferred_leading(state) -> bool:
    return state is not None and all(leader == replicas[0] and len(isr) == 3
                                      for leader, replicas, isr in state.values())


def run_scenario(bootstrap_of, stop, start, node_ids: list[int], victim: int) -> dict:
    """Stop ``victim``, wait until none of the partitions is led by it, start it again and
    wait until every partition is led by its preferred replica; returns what was seen."""
    admin = AdminClient({"bootstrap.servers": bootstrap_of(node_ids[0])})
    admin.create_topics([NewTopic(TOPIC, 6, 3)])[TOPIC].result(WAIT_S)
    before = wait_for(lambda: (lambda s: s if preferred_leading(s) else None)(
        leaders(bootstrap_of(node_ids[0]))), "preferred leaders at creation")
    owned = sorted(p for p, (leader, _, _) in before.items() if leader == victim)
    stop(victim)
    survivor = next(n for n in node_ids if n != victim)
    moved = wait_for(lambda: (lambda s: s if s is not None and all(
        s[p][0] not in (victim, -1) for p in owned) else None)(leaders(bootstrap_of(survivor))),
        f"leaderships moved off broker {victim}")
    start(victim)
    back = wait_for(lambda: (lambda s: s if preferred_leading(s) else None)(
        leaders(bootstrap_of(survivor))), f"broker {victim} leading its partitions again")
    return {"owned": owned, "moved": {p: moved[p][0] for p in owned},
            "back": {p: back[p][0] for p in owned}}


def test_the_preferred_leader_takes_its_partitions_back(tmp_path):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path / "c") as cluster:
        ids = sorted(cluster.nodes)
        controller = active_controller(cluster)
        victim = next(n for n in ids if n != controller)
        seen = run_scenario(lambda n: node_bootstrap(cluster, n), cluster.stop, cluster.start,
                            ids, victim)
    assert seen["owned"], "the stopped broker led no partition"
    assert all(leader != victim for leader in seen["moved"].values())
    assert seen["back"] == {p: victim for p in seen["owned"]}



def restart_kafka_node(node) -> None:
    """Starts a stopped Apache Kafka node of run_kafka_cluster again on its own config."""
    with open(node.log_path, "ab") as log:
        node.proc = subprocess.Popen(
            [java_binary(), *JAVA_OPTS, "kafka.Kafka", str(node.data_dir / "server.properties")],
            env={**os.environ, "CLASSPATH": kafka_classpath(node.version)}, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True)


@needs_java
def test_kafka_hands_the_partitions_back_alike(tmp_path):
    """The same scenario on three Apache Kafka 4.4 nodes: the same leaderships move away and
    come back to the same preferred replicas."""
    with run_kafka_cluster(3, config=CONFIG, data_dir=tmp_path / "kafka") as kafka:
        nodes = {i + 1: n for i, n in enumerate(kafka.nodes)}
        victim = 3
        seen = run_scenario(lambda n: nodes[n].bootstrap_servers, lambda n: nodes[n].stop(),
                            lambda n: restart_kafka_node(nodes[n]), sorted(nodes), victim)
    assert seen["owned"]
    assert all(leader != victim for leader in seen["moved"].values())
    assert seen["back"] == {p: victim for p in seen["owned"]}
