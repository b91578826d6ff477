"""The single-node default is a one-voter combined KRaft node: it formats its data dir on first
start and keeps it (cluster id, topic ids) across restarts, it shows clients one broker and no
controller listener, and a data dir the released single-node pykafkad wrote starts with its
topics, configs, records and committed offsets carried into the metadata log."""

from __future__ import annotations

import json
import uuid

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
from kafka import KafkaAdminClient

from compat.wire_client import WireClient, advertised_apis
from pykafkad.cluster import TOPICS_FILE
from pykafkad.metadata.properties import MetaProperties
from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
    needs_java,
)
from tests.kraft.quorum_helpers import METADATA_DIR, read_records
from tests.kraft.released_broker import run_released_broker
from wire.errors import ErrorCode
from wire.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from wire.metadata import TopicRecord


def topic_ids(bootstrap: str) -> dict[str, str]:
    """Topic name -> id as kafka-python's admin describes them (Metadata v10+)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {t["name"]: t["topic_id"] for t in admin.describe_topics() if not t["is_internal"]}
    finally:
        admin.close()


def commit(bootstrap: str, group: str, offset: TopicPartition) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.commit(offsets=[offset], asynchronous=False)
    finally:
        consumer.close()


def test_a_fresh_data_dir_is_formatted_once_and_kept(tmp_path):
    data_dir = tmp_path / "data"
    with run_broker(data_dir) as kafka:
        meta = MetaProperties.read(data_dir)
        assert (meta.node_id, meta.version) == (1, 1)
        assert (data_dir / METADATA_DIR / "00000000000000000000-0000000000.checkpoint").exists()
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        cluster = admin.describe_cluster().result(WAIT_S)
        assert cluster.cluster_id == meta.cluster_id
        # the controller listener is never shown to clients: the one broker is the
        # client-facing listener (Kafka's KRaft brokers answer the same)
        assert [(n.id, n.port) for n in cluster.nodes] == [(1, kafka.port)]
        assert cluster.controller.id == 1
        create_topic(kafka.bootstrap_servers, "single-kept", 2, {"retention.ms": "3600000"})
        before = topic_ids(kafka.bootstrap_servers)
    with run_broker(data_dir) as kafka:
        assert MetaProperties.read(data_dir).cluster_id == meta.cluster_id
        assert topic_ids(kafka.bootstrap_servers) == before
    assert not (data_dir / TOPICS_FILE).exists()  # the metadata log holds the topics


def test_a_released_data_dir_starts_with_its_topics_records_and_offsets(tmp_path):
    data_dir = tmp_path / "data"
    with run_released_broker(data_dir) as released:
        create_topic(released, "single-mig-a", 3, {"retention.ms": "123456789",
                                                   "cleanup.policy": "compact,delete"})
        create_topic(released, "single-mig-b", 1)
        confluent_produce(released, "single-mig-b",
                          [{"key": b"k%d" % i, "value": b"v%d" % i} for i in range(5)])
        commit(released, "single-mig-group", TopicPartition("single-mig-b", 0, 3))
        ids_before = topic_ids(released)
    registry = json.loads((data_dir / TOPICS_FILE).read_text())["topics"]
    cluster_id = MetaProperties.read(data_dir).cluster_id
    with run_broker(data_dir) as kafka:
        assert MetaProperties.read(data_dir).cluster_id == cluster_id
        assert topic_ids(kafka.bootstrap_servers) == ids_before
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        res = ConfigResource("topic", "single-mig-a")
        configs = admin.describe_configs([res])[res].result(WAIT_S)
        assert {n: configs[n].value for n in registry["single-mig-a"]["configs"]} == \
            registry["single-mig-a"]["configs"]
        assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
        metadata = admin.list_topics(timeout=WAIT_S)
        assert len(metadata.topics["single-mig-a"].partitions) == 3
        got = confluent_consume(kafka.bootstrap_servers, "single-mig-b", 5)
        assert [m.value() for m in got] == [b"v%d" % i for i in range(5)]
        committed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(
            "single-mig-group", [TopicPartition("single-mig-b", 0)])])[
            "single-mig-group"].result(WAIT_S)
        assert [(p.topic, p.partition, p.offset) for p in committed.topic_partitions] == \
            [("single-mig-b", 0, 3)]
    # once: the second start replays the log and migrates nothing again
    with run_broker(data_dir) as kafka:
        assert topic_ids(kafka.bootstrap_servers) == ids_before
    names = [r.name for r in read_records(data_dir / METADATA_DIR) if isinstance(r, TopicRecord)]
    assert sorted(n for n in names if not n.startswith("__")) == ["single-mig-a", "single-mig-b"]
    assert names.count("single-mig-a") == 1



def _create_answers(bootstrap: str, topic: str) -> list:
    """CreateTopics (v7) answers for a replication factor above the one broker, and for the
    broker defaults (-1), as (error code, message)."""
    out = []
    with WireClient(bootstrap) as c:
        for rf in (3, 2):
            r = c.request(19, 7, CreateTopicsRequest(topics=[CreatableTopic(
                name=f"{topic}-rf{rf}", num_partitions=1, replication_factor=rf, assignments=[],
                configs=[])], timeout_ms=WAIT_S * 1000, validate_only=False))
            out.append([(t.error_code, t.error_message) for t in r.topics])
    return out


@needs_java
def test_the_single_node_answers_as_a_one_broker_kafka(tmp_path, reference_kafka):
    """A replication factor above one is refused with Kafka's INVALID_REPLICATION_FACTOR text,
    and the broker listener advertises what a combined Kafka 4.4 node's does for the APIs
    pykafkad serves (no API only a single node has)."""
    with run_broker(tmp_path / "data") as kafka:
        ours = _create_answers(kafka.bootstrap_servers, "single-rf")
        our_apis = advertised_apis(kafka.bootstrap_servers)
    theirs = _create_answers(reference_kafka.bootstrap_servers, f"single-rf-{uuid.uuid4().hex[:6]}")
    assert ours == theirs
    assert ours[0][0][0] == ErrorCode.INVALID_REPLICATION_FACTOR
    kafka_apis = advertised_apis(reference_kafka.bootstrap_servers)
    assert set(our_apis) - set(kafka_apis) == set()
    assert {k for k, v in our_apis.items() if kafka_apis[k] != v} == set()


def test_the_command_starts_on_a_released_data_dir(tmp_path):
    """``pykafkad --data-dir`` on a released data dir prints its usual ready line, serves the
    old topics under their ids, and stops cleanly."""
    data_dir = tmp_path / "data"
    with run_released_broker(data_dir) as released:
        create_topic(released, "single-cli-mig", 2)
        confluent_produce(released, "single-cli-mig", [{"value": b"old", "partition": 1}])
        ids_before = topic_ids(released)
    proc = BrokerProcess(data_dir).start()
    try:
        assert topic_ids(proc.bootstrap_servers) == ids_before
        got = confluent_consume(proc.bootstrap_servers, "single-cli-mig", 1, partitions=(1,))
        assert [m.value() for m in got] == [b"old"]
    finally:
        assert proc.terminate() == 0
