"""Replica directories a KRaft broker no longer hosts (run_cluster, stock admin clients).

A broker that was down while its replica's topic was deleted, or while the replica was
reassigned to other brokers, finds the directory left over when it starts again: checked
against the first caught-up metadata image, it is renamed ``<topic>-<partition>.<uuid>-stray``
and never served, as Kafka 4.4's LogManager does (which keeps such directories rather than
deleting them). A replica reassigned away while its broker runs is deleted at once."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient
from kafka import TopicPartition as KTopicPartition

from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S, confluent_produce
from tests.kraft.test_broker_replication import (
    active_controller,
    node_bootstrap,
    partition_dir,
    partition_state,
    running_bootstrap,
    wait_for,
)

CONFIG = {"broker.heartbeat.interval.ms": "500"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("strays")) as c:
        yield c


def strays(cluster, node_id: int, topic: str) -> list[Path]:
    data = Path(cluster.data_dir) / f"node-{node_id}" / "data"
    pattern = re.compile(re.escape(f"{topic}-0.") + r"[0-9a-f]{32}-stray")
    return [p for p in data.iterdir() if pattern.fullmatch(p.name)]


def create(cluster, assignment: list[int]) -> str:
    name = f"stray-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic(name, num_partitions=1, replica_assignment=[assignment])])[name].result(
        WAIT_S)
    for node_id in cluster.nodes:
        wait_for(lambda n=node_id: partition_state(node_bootstrap(cluster, n), name),
                 f"{name} on broker {node_id}")
    return name


def not_the_controller(cluster) -> list[int]:
    controller = active_controller(cluster)
    return [n for n in sorted(cluster.nodes) if n != controller]


def test_a_topic_deleted_while_its_broker_was_down_is_set_aside_as_stray(cluster):
    down = not_the_controller(cluster)[0]
    topic = create(cluster, [down])
    confluent_produce(cluster.bootstrap_servers, topic, [{"value": b"v%d" % i} for i in range(3)])
    assert (partition_dir(cluster, down, topic) / "00000000000000000000.log").exists()
    cluster.stop(down)
    admin = AdminClient({"bootstrap.servers": running_bootstrap(cluster)})
    admin.delete_topics([topic])[topic].result(WAIT_S)
    wait_for(lambda: topic not in admin.list_topics(timeout=WAIT_S).topics, "the topic gone")
    assert partition_dir(cluster, down, topic).is_dir()  # nobody told the stopped broker
    cluster.start(down)
    wait_for(lambda: not partition_dir(cluster, down, topic).exists(), "the leftover dir gone")
    [stray] = strays(cluster, down, topic)
    assert (stray / "00000000000000000000.log").stat().st_size > 0  # set aside, not deleted


def test_a_replica_moved_away_while_its_broker_was_down_is_set_aside_as_stray(cluster):
    down, other = not_the_controller(cluster)
    third = next(n for n in cluster.nodes if n not in (down, other))
    topic = create(cluster, [other, down])
    confluent_produce(cluster.bootstrap_servers, topic,
                      [{"value": b"v%d" % i} for i in range(5)], acks="all")
    wait_for(lambda: (partition_dir(cluster, down, topic) / "00000000000000000000.log").exists()
             and (partition_dir(cluster, down, topic) / "00000000000000000000.log").stat()
             .st_size > 0, "the follower's copy")
    cluster.stop(down)
    admin = KafkaAdminClient(bootstrap_servers=running_bootstrap(cluster))
    try:
        tp = KTopicPartition(topic, 0)
        assert admin.alter_partition_reassignments({tp: [other, third]}) == {tp: None}
        at = node_bootstrap(cluster, other)
        wait_for(lambda: (partition_state(at, topic) or (0, []))[1] == [other, third],
                 "the reassignment completed")
        cluster.start(down)
        wait_for(lambda: not partition_dir(cluster, down, topic).exists(),
                 "the leftover dir gone")
        assert len(strays(cluster, down, topic)) == 1
        # moved away while its broker runs: the replica is deleted (renamed -delete, removed)
        assert admin.alter_partition_reassignments({tp: [other, down]}) == {tp: None}
        wait_for(lambda: (partition_state(at, topic) or (0, []))[1] == [other, down],
                 "the reassignment back completed")
        wait_for(lambda: not partition_dir(cluster, third, topic).exists(),
                 "the moved replica's dir deleted")
        assert strays(cluster, third, topic) == []
        data = Path(cluster.data_dir) / f"node-{third}" / "data"
        wait_for(lambda: not [p for p in data.iterdir() if p.name.startswith(f"{topic}-0.")],
                 "no -delete dir left")
    finally:
        admin.close()
