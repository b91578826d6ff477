"""A data dir written by the single-node pykafkad starts as a one-voter KRaft node: its
first active controller carries the topics into the metadata log once, with the same topic
ids, partition counts and config overrides, and the records stay readable."""

from __future__ import annotations

import json
import uuid

from pykafkad.cluster import TOPICS_FILE
from pykafkad.launcher import Cluster, free_ports, plan_cluster, wait_ready
from tests.integration.clients import (
    WAIT_S,
    confluent_produce,
    create_topic,
    kafka_python_consume,
)
from tests.kraft.quorum_helpers import metadata_log, read_image, read_records, wait_for
from tests.kraft.released_broker import run_released_broker
from wire.metadata import TopicRecord

TOPIC_CONFIG = 2


def test_a_single_node_data_dir_becomes_a_kraft_node_with_the_same_topics(tmp_path):
    specs = plan_cluster(1, 0, 0, tmp_path, ports=free_ports(2))
    data_dir = specs[0].data_dir / "data"
    with run_released_broker(data_dir) as single:
        create_topic(single, "h-kraft-mig-a", 3,
                     {"retention.ms": "123456789", "cleanup.policy": "compact,delete"})
        create_topic(single, "h-kraft-mig-b", 1)
        confluent_produce(single, "h-kraft-mig-b",
                          [{"key": b"k%d" % i, "value": b"v%d" % i} for i in range(5)])
    before = json.loads((data_dir / TOPICS_FILE).read_text())["topics"]
    cluster = Cluster(specs)  # the existing meta.properties is kept: no new cluster id
    node = cluster.nodes[1]
    try:
        node.start()
        wait_ready([node], WAIT_S)
        image = wait_for(lambda: (i := read_image(metadata_log(node))).topics.get(
            "h-kraft-mig-b") is not None and i, "the migrated topics")
        for name, topic in before.items():
            migrated = image.topics.get(name)
            assert str(uuid.UUID(bytes=migrated.id)) == topic["topic_id"]
            assert len(migrated.partitions) == topic["partitions"]
            assert all(list(p.replicas) == [1] and p.leader == 1
                       for p in migrated.partitions.values())
            assert dict(image.configs.get((TOPIC_CONFIG, name), {})) == topic["configs"]
        assert "Migrating 2 topics" in node.tail(200)
        assert (data_dir / TOPICS_FILE).exists()  # left in place
        got = kafka_python_consume(cluster.bootstrap_servers, "h-kraft-mig-b", 5)
        assert [m.value for m in got] == [b"v%d" % i for i in range(5)]
        # once: a restart replays the log and writes nothing again
        node.stop()
        node.start()
        wait_ready([node], WAIT_S)
        names = [r.name for r in read_records(metadata_log(node)) if isinstance(r, TopicRecord)]
        assert sorted(names) == sorted(before)
        assert "Migrating" not in node.tail(200)
        assert not list(data_dir.glob("*-stray"))  # the metadata log is the raft client's
    finally:
        cluster.stop_all()
