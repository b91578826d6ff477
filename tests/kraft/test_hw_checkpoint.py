"""replication-offset-checkpoint on a pykafkad cluster (run_cluster), compared with the file an
Apache Kafka 4.4 broker writes: every broker, leader and followers, checkpoints each replica's
high watermark every replica.high.watermark.checkpoint.interval.ms; a follower stopped and
started again checkpoints what it caught up to."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.log.checkpoint import read_offsets
from pykafkad.replica.hw_checkpoint import REPLICATION_OFFSET_CHECKPOINT
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S, confluent_produce, needs_java
from tests.kraft.test_broker_replication import (
    create_topic,
    node_bootstrap,
    partition_state,
    wait_for,
)

CONFIG = {"replica.high.watermark.checkpoint.interval.ms": "1000",
          "broker.heartbeat.interval.ms": "500"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("hw")) as c:
        yield c


def checkpoint_file(cluster, node_id: int) -> Path:
    return Path(cluster.data_dir) / f"node-{node_id}" / "data" / REPLICATION_OFFSET_CHECKPOINT


def checkpointed(path: Path, topic: str) -> int | None:
    return read_offsets(path).get((topic, 0))


def shape(text: str, topic: str) -> list[str]:
    """The file with Kafka's OffsetCheckpointFile layout checked, as lines; the line of
    ``topic`` with the name replaced."""
    assert text.endswith("\n")
    lines = text.split("\n")[:-1]
    assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
    for line in lines[2:]:
        assert re.fullmatch(r"\S+ \d+ \d+", line), line
        assert not line.startswith("__cluster_metadata ")
    return [line.replace(topic, "TOPIC") for line in lines[2:] if line.split()[0] == topic]


def _values(n: int, start: int = 0):
    return [{"value": b"v%d" % i} for i in range(start, start + n)]


@needs_java
def test_every_replica_checkpoints_its_high_watermark_as_kafka_does(cluster, reference_kafka):
    topic = create_topic(cluster)
    confluent_produce(cluster.bootstrap_servers, topic, _values(20), acks="all")
    for node_id in cluster.nodes:  # the leader and both followers
        wait_for(lambda n=node_id: checkpointed(checkpoint_file(cluster, n), topic) == 20,
                 f"the high watermark 20 checkpointed on broker {node_id}")
    ours = shape(checkpoint_file(cluster, 1).read_text(), topic)

    theirs_topic = f"brokerside-hw-{uuid.uuid4().hex[:8]}"
    bootstrap = reference_kafka.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(theirs_topic, 1, 1)])[theirs_topic].result(WAIT_S)
    confluent_produce(bootstrap, theirs_topic, _values(20), acks="all")
    kafka_file = Path(reference_kafka.data_dir) / "logs" / REPLICATION_OFFSET_CHECKPOINT
    # Kafka's default interval is 5 s
    wait_for(lambda: checkpointed(kafka_file, theirs_topic) == 20,
             "Kafka's checkpoint of the high watermark 20")
    assert shape(kafka_file.read_text(), theirs_topic) == ours == ["TOPIC 0 20"]


def test_a_restarted_follower_checkpoints_what_it_caught_up_to(cluster):
    topic = create_topic(cluster)
    confluent_produce(cluster.bootstrap_servers, topic, _values(10), acks="all")
    leader, replicas, _ = partition_state(cluster.bootstrap_servers, topic)
    follower = next(r for r in replicas if r != leader)
    wait_for(lambda: checkpointed(checkpoint_file(cluster, follower), topic) == 10,
             "the follower's checkpoint at 10")
    cluster.stop(follower)  # a clean shutdown writes the file once more
    assert checkpointed(checkpoint_file(cluster, follower), topic) == 10
    leader_at = node_bootstrap(cluster, leader)
    wait_for(lambda: follower not in (partition_state(leader_at, topic) or (0, 0, [follower]))[2],
             "the ISR without the stopped follower")
    # acks=all does not wait for the stopped follower (KIP-841: a broker in controlled
    # shutdown or fenced is not one the HW waits for), and the batch is written once
    delivered = confluent_produce(leader_at, topic, _values(5, 10), acks="all")
    assert [m.offset() for m in delivered] == list(range(10, 15))
    cluster.start(follower)
    wait_for(lambda: checkpointed(checkpoint_file(cluster, follower), topic) == 15,
             "the restarted follower's checkpoint at 15")
    wait_for(lambda: sorted((partition_state(leader_at, topic) or (0, 0, []))[2])
             == sorted(replicas), "the follower back in the ISR")
