"""Stopping nodes: a whole cluster at once (run_cluster's exit, ``pykafkad cluster`` on a
signal) and one node alone, each with Kafka's clean-shutdown steps, read from the node logs."""

from __future__ import annotations

import re

import pytest
from confluent_kafka import Producer

from pykafkad.launcher import CLUSTER_STOP_MARK
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S
from tests.node.test_launcher import wait_until

CONTROLLED_SHUTDOWN_DONE = "the controller has asked us to exit controlled shutdown"
#: lines a node logs only when it waited for peers that had stopped already
WAITED_FOR_PEERS = ("has not heard from a majority", "quorum has no leader",
                    "did not allow the shutdown")
LEADER_LINE = re.compile(r"node (\d+) is the leader of epoch (\d+)")


def log_of(node) -> str:
    return node.log_path.read_text(errors="replace")


def produce_one(bootstrap: str, topic: str) -> None:
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"v")
    assert p.flush(WAIT_S) == 0


@pytest.mark.parametrize("nodes,controllers,paused", [(3, 0, 3), (2, 1, None)])
def test_a_stopping_cluster_does_every_controlled_shutdown_and_waits_for_no_stopping_peer(
        tmp_path, nodes, controllers, paused):
    with run_cluster(nodes, controllers, data_dir=tmp_path) as cluster:
        produce_one(cluster.bootstrap_servers, "h-cluster-stop")  # partitions with leaders
        if paused is not None:
            cluster.pause(paused)  # resumed by the stop, then stopped like the others
        handles = list(cluster.nodes.values())
    for node in handles:
        assert not node.running and node.proc.returncode == 0
        text = log_of(node)
        assert CLUSTER_STOP_MARK in text and "pykafkad stopped" in text
        if "broker" in node.spec.roles:
            assert CONTROLLED_SHUTDOWN_DONE in text
        assert not [w for w in WAITED_FOR_PEERS if w in text], text[-2000:]


def test_stopping_the_raft_leader_alone_is_a_controlled_shutdown_and_a_graceful_resignation(
        tmp_path):
    with run_cluster(3, data_dir=tmp_path) as cluster:
        produce_one(cluster.bootstrap_servers, "h-one-stop")
        leaders = [(int(e), int(n)) for node in cluster.nodes.values()
                   for n, e in LEADER_LINE.findall(log_of(node))]
        epoch, leader = max(leaders)
        cluster.stop(leader)
        stopped = cluster.nodes[leader]
        assert stopped.proc.returncode == 0
        text = log_of(stopped)
        assert CONTROLLED_SHUTDOWN_DONE in text and CLUSTER_STOP_MARK not in text
        assert not [w for w in WAITED_FOR_PEERS if w in text], text[-2000:]

        def new_leader() -> bool:
            return any(int(e) > epoch for node in cluster.nodes.values() if node.running
                       for _, e in LEADER_LINE.findall(log_of(node)))

        wait_until(new_leader)  # the others elect at once on its EndQuorumEpoch
