"""``pykafkad cluster --dynamic-quorum``: the launcher's nodes with
controller.quorum.bootstrap.servers, formatted with ``--initial-controllers`` (KIP-853); the
quorum forms from the bootstrap checkpoints' VotersRecord and serves clients as the static one
does."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from pykafkad.launcher import Cluster, free_ports, plan_cluster
from tests.kraft.quorum_helpers import active_controller, describe_quorum, wait_for

WAIT_S = 30


@pytest.fixture
def cluster():
    path = Path(tempfile.mkdtemp(prefix="pykafkad-dynamic-"))
    c = Cluster(plan_cluster(3, 0, 0, path, "127.0.0.1", free_ports(6)), dynamic_quorum=True)
    try:
        c.start_all(60)
        yield c
    finally:
        c.stop_all()
        shutil.rmtree(path, ignore_errors=True)


def test_dynamic_quorum_cluster_serves_clients(cluster) -> None:
    props = cluster.specs[0].properties_path.read_text()
    assert "controller.quorum.bootstrap.servers=" in props
    assert "controller.quorum.voters" not in props
    nodes = list(cluster.nodes.values())
    leader, _ = wait_for(lambda: active_controller(nodes), "a leader")
    node = cluster.nodes[leader]
    quorum = describe_quorum(node.host, node.controller_port)
    assert [v.replica_id for v in quorum.current_voters] == [1, 2, 3]
    assert all(v.replica_directory_id != bytes(16) for v in quorum.current_voters)

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(5):
        producer.produce("dyn-cluster", f"m{i}".encode())
    assert producer.flush(WAIT_S) == 0
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "g",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["dyn-cluster"])
    got: list[bytes] = []
    try:
        def polled() -> bool:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
            return len(got) == 5
        wait_for(polled, "the records")
    finally:
        consumer.close()
    assert got == [f"m{i}".encode() for i in range(5)]
