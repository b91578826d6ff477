"""Three real KRaft node processes (combined broker+controller, run_cluster): they elect one
active controller, every broker registers and is unfenced, the active controller's death
elects another while the brokers keep their sessions, a dead broker is fenced after
broker.session.timeout.ms and unfenced once it is back, and the metadata log is the one
Kafka's tools read."""

from __future__ import annotations

import json

import pytest

from compat.kafka_tools import run_tool
from pykafkad.metadata.bootstrap import read_bootstrap
from pykafkad.testing import run_cluster
from tests.integration.clients import needs_java
from tests.kraft.quorum_helpers import (
    active_controller,
    broker_states,
    create_topic_on_controller,
    dump_metadata_log,
    metadata_log,
    parse_status,
    parse_table,
    read_image,
    read_records,
    wait_for,
)
from wire.errors import ErrorCode

#: short sessions so that fencing is seen quickly (Kafka's defaults: 9000 / 2000)
CONFIG = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("kraft")) as c:
        yield c


def all_unfenced(cluster, brokers=(1, 2, 3)) -> bool:
    """Every running node's metadata log has every broker registered and unfenced."""
    return all(broker_states(n) == {b: False for b in brokers}
               for n in cluster.nodes.values() if n.running)


def leader_of(cluster) -> tuple[int, int]:
    return wait_for(lambda: active_controller(cluster.nodes.values()), "an active controller")


def test_every_broker_registers_and_is_unfenced(cluster):
    """The launcher's readiness already waited for each broker's unfencing; each node's copy
    of the metadata log says so too."""
    wait_for(lambda: all_unfenced(cluster), "three unfenced brokers in every metadata log")
    image = read_image(metadata_log(cluster.nodes[1]))
    assert image.features.metadata_version == 33
    for b, reg in image.cluster.items():
        node = cluster.nodes[b]
        assert [(e.name, e.host, e.port) for e in reg.listeners] == [
            ("PLAINTEXT", node.host, node.port)]


@needs_java
def test_quorum_tool_shows_three_voters_and_the_leader(cluster):
    leader, epoch = leader_of(cluster)
    node = cluster.nodes[1]
    where = f"{node.host}:{node.controller_port}"
    status = parse_status(run_tool("kafka-metadata-quorum", [
        "--bootstrap-controller", where, "describe", "--status"], check=True).stdout)
    assert status["ClusterId"] == cluster.cluster_id
    assert status["LeaderId"] == str(leader)
    assert int(status["LeaderEpoch"]) >= epoch
    assert json.loads(status["CurrentVoters"]) == [
        {"id": n.node_id, "endpoints": [f"CONTROLLER://{n.host}:{n.controller_port}"]}
        for n in sorted(cluster.nodes.values(), key=lambda n: n.node_id)]
    assert json.loads(status["CurrentObservers"]) == []
    header, rows = parse_table(run_tool("kafka-metadata-quorum", [
        "--bootstrap-controller", where, "describe", "--replication"], check=True).stdout)
    statuses = {int(r[0]): r[header.index("Status")] for r in rows}
    assert statuses == {n: "Leader" if n == leader else "Follower" for n in (1, 2, 3)}


@needs_java
def test_quorum_tool_describes_the_quorum_through_any_broker(cluster):
    """``kafka-metadata-quorum --bootstrap-server`` asks a broker, which forwards DescribeQuorum
    to the active controller (as Kafka's brokers do): every broker gives the controllers'
    answer."""
    leader, _ = leader_of(cluster)
    for node in cluster.nodes.values():
        status = parse_status(run_tool("kafka-metadata-quorum", [
            "--bootstrap-server", f"{node.host}:{node.port}", "describe", "--status"],
            check=True).stdout)
        assert status["ClusterId"] == cluster.cluster_id
        assert status["LeaderId"] == str(leader)
        assert len(json.loads(status["CurrentVoters"])) == 3
        header, rows = parse_table(run_tool("kafka-metadata-quorum", [
            "--bootstrap-server", f"{node.host}:{node.port}", "describe", "--replication"],
            check=True).stdout)
        assert {int(r[0]) for r in rows} == {1, 2, 3}


@needs_java
def test_the_metadata_log_is_kafkas(cluster):
    """kafka-dump-log decodes every node's log: the bootstrap feature levels, each broker's
    registration and its unfencing (a BrokerRegistrationChangeRecord, as Kafka 4.4 writes)."""
    wait_for(lambda: all_unfenced(cluster), "three unfenced brokers")
    for node in cluster.nodes.values():
        records = dump_metadata_log(node)
        types = [r["type"] for r in records]
        assert {"name": "metadata.version", "featureLevel": 33} in [
            r["data"] for r in records if r["type"] == "FEATURE_LEVEL_RECORD"]
        registered = {r["data"]["brokerId"] for r in records
                      if r["type"] == "REGISTER_BROKER_RECORD"}
        assert registered == {1, 2, 3}
        unfenced = {r["data"]["brokerId"] for r in records
                    if r["type"] == "BROKER_REGISTRATION_CHANGE_RECORD"
                    and r["data"].get("fenced") == -1}
        assert unfenced == {1, 2, 3}
        assert types.index("FEATURE_LEVEL_RECORD") < types.index("REGISTER_BROKER_RECORD")
        # the feature levels are the formatted bootstrap snapshot's (pykafkad format)
        bootstrap = read_bootstrap(metadata_log(node).parent)
        assert [(r["data"]["name"], r["data"]["featureLevel"]) for r in records
                if r["type"] == "FEATURE_LEVEL_RECORD"] == [
            (r.name, r.feature_level) for r in bootstrap.records]


def test_create_topics_on_the_controller(cluster):
    """CreateTopics on a controller listener: a standby answers NOT_CONTROLLER naming the
    active one (Kafka's message); the active one places three replicas per partition on the
    three brokers, and every node's metadata log holds the topic and its PartitionRecords."""
    leader, _ = leader_of(cluster)
    standby = next(n for n in cluster.nodes.values() if n.node_id != leader)
    refused = create_topic_on_controller(standby.host, standby.controller_port,
                                         "h-kraft-rf3", 3, 3)
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.NOT_CONTROLLER, f"The active controller appears to be node {leader}.")
    active = cluster.nodes[leader]
    created = create_topic_on_controller(active.host, active.controller_port,
                                         "h-kraft-rf3", 3, 3)
    assert (created.error_code, created.num_partitions, created.replication_factor) == (0, 3, 3)

    def replicated():
        images = [read_image(metadata_log(n)) for n in cluster.nodes.values()]
        topics = [i.topics.get("h-kraft-rf3") for i in images]
        return all(t is not None and len(t.partitions) == 3 for t in topics) and topics

    topics = wait_for(replicated, "the topic in every metadata log")
    assert {t.id for t in topics} == {created.topic_id}
    for p in topics[0].partitions.values():
        assert sorted(p.replicas) == [1, 2, 3] and sorted(p.isr) == [1, 2, 3]
    # the leaders are spread over the brokers (Kafka's striped placement)
    assert sorted(p.leader for p in topics[0].partitions.values()) == [1, 2, 3]


def test_killing_the_active_controller_elects_another_and_fences_its_broker(cluster):
    """SIGKILL the active controller's node: the others elect a new leader in a higher epoch,
    the surviving brokers keep heartbeating (never fenced), the dead broker is fenced once
    its session expires; started again, it registers and is unfenced."""
    wait_for(lambda: all_unfenced(cluster), "three unfenced brokers")
    leader, epoch = leader_of(cluster)
    cluster.kill(leader)
    survivors = [n for n in cluster.nodes.values() if n.node_id != leader]
    new_leader, new_epoch = wait_for(lambda: active_controller(survivors),
                                     "a new active controller")
    assert new_leader != leader and new_epoch > epoch
    states = wait_for(lambda: (s := broker_states(survivors[0]))[leader] and s,
                      "the dead broker to be fenced")
    assert states == {b: b == leader for b in (1, 2, 3)}
    assert broker_states(survivors[1]) == states or wait_for(
        lambda: broker_states(survivors[1]) == states, "the other survivor's log")
    kept = len(read_records(metadata_log(cluster.nodes[leader])))
    cluster.start(leader)
    wait_for(lambda: all_unfenced(cluster), "the restarted broker to be unfenced")
    # it started from its own copy of the metadata log, kept in place (not set aside)
    assert len(read_records(metadata_log(cluster.nodes[leader]))) >= kept > 0
    assert not list(metadata_log(cluster.nodes[leader]).parent.glob("*-stray"))


def test_a_cleanly_stopped_broker_is_fenced_and_unfenced_after_restart(cluster):
    """SIGTERM a node that is not the active controller: its controlled shutdown ends with the
    controller fencing it (Kafka's SHUTDOWN_NOW), without waiting for the session to expire;
    started again it is unfenced."""
    wait_for(lambda: all_unfenced(cluster), "three unfenced brokers")
    leader, _ = leader_of(cluster)
    victim = next(n for n in cluster.nodes.values() if n.node_id != leader)
    cluster.stop(victim.node_id)
    active = cluster.nodes[leader]
    wait_for(lambda: broker_states(active)[victim.node_id], "the stopped broker to be fenced",
             timeout=2.5)  # within the 3 s session: fenced by its controlled shutdown
    # the clean-shutdown marker keeps the broker epoch, registered again as the previous one
    marker = json.loads((metadata_log(victim).parent / ".kafka_cleanshutdown").read_text())
    epoch = read_image(metadata_log(active)).cluster[victim.node_id].epoch
    assert marker["broker_epoch"] == str(epoch)
    cluster.start(victim.node_id)
    wait_for(lambda: all_unfenced(cluster), "the restarted broker to be unfenced")


@needs_java
def test_brokers_of_dedicated_controllers_are_observers(tmp_path):
    """Two broker-only nodes and one dedicated controller: the brokers follow the metadata log
    as observers (kafka-metadata-quorum lists them, with their directory ids), register and
    are unfenced; the controller is the only voter and the active controller."""
    with run_cluster(2, controllers=1, config=CONFIG, data_dir=tmp_path) as c:
        controller = c.nodes[3]
        wait_for(lambda: all(broker_states(n) == {1: False, 2: False}
                             for n in c.nodes.values()), "two unfenced brokers in every log")
        where = f"{controller.host}:{controller.controller_port}"

        def observers_listed():
            out = run_tool("kafka-metadata-quorum", [
                "--bootstrap-controller", where, "describe", "--status"], check=True).stdout
            status = parse_status(out)
            return len(json.loads(status["CurrentObservers"])) == 2 and status

        status = wait_for(observers_listed, "both brokers to be observers", timeout=60)
        assert status["LeaderId"] == "3"
        assert [v["id"] for v in json.loads(status["CurrentVoters"])] == [3]
        observers = json.loads(status["CurrentObservers"])
        assert sorted(o["id"] for o in observers) == [1, 2]
        for o in observers:  # each broker's own directory id, from its meta.properties
            meta = (c.nodes[o["id"]].spec.data_dir / "data" / "meta.properties").read_text()
            assert f"directory.id={o['directoryId']}" in meta
