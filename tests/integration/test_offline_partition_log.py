"""A partition whose log cannot be created (here a regular file where its directory goes) is
what Kafka calls a partition in an offline log dir: Produce, Fetch, ListOffsets and
OffsetForLeaderEpoch answer KAFKA_STORAGE_ERROR (retriable), never UNKNOWN_TOPIC_OR_PARTITION;
Fetch v0-5 answers NOT_LEADER_OR_FOLLOWER instead, as Kafka does for clients that may not know
code 56.  Once the obstacle is gone the partition is served."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from compat.wire_client import WireClient
from tests.integration.clients import WAIT_S, create_topic
from tests.integration.test_protocol_edges import fetch
from wire.errors import ErrorCode
from wire.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)


def _fetch_errors(bootstrap: str, topic: str) -> dict[int, int]:
    with WireClient(bootstrap) as c:
        return {v: fetch(c, topic, [0], version=v).responses[0].partitions[0].error_code
                for v in (4, 5, 6, 12)}


def _epoch_error(bootstrap: str, topic: str) -> int:
    """OffsetForLeaderEpoch (what the Java consumer validates positions with)."""
    req = OffsetForLeaderEpochRequest(replica_id=-1, topics=[OffsetForLeaderTopic(
        topic=topic, partitions=[OffsetForLeaderPartition(partition=0, leader_epoch=0)])])
    with WireClient(bootstrap) as c:
        return c.send(req, 4).topics[0].partitions[0].error_code


def test_partition_whose_log_cannot_be_created_answers_storage_error(broker, topic_name):
    (broker.data_dir / f"{topic_name}-0").write_bytes(b"in the way")
    create_topic(broker.bootstrap_servers, topic_name, 1)
    tp = TopicPartition(topic_name, 0)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    with pytest.raises(KafkaException) as listed:
        admin.list_offsets({tp: OffsetSpec.latest()})[tp].result(WAIT_S)
    assert listed.value.args[0].code() == KafkaError.KAFKA_STORAGE_ERROR
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": topic_name})
    try:
        with pytest.raises(KafkaException) as watermarks:
            consumer.get_watermark_offsets(tp, timeout=WAIT_S)
        assert watermarks.value.args[0].code() == KafkaError.KAFKA_STORAGE_ERROR
        assert _fetch_errors(broker.bootstrap_servers, topic_name) == {
            4: ErrorCode.NOT_LEADER_OR_FOLLOWER, 5: ErrorCode.NOT_LEADER_OR_FOLLOWER,
            6: ErrorCode.KAFKA_STORAGE_ERROR, 12: ErrorCode.KAFKA_STORAGE_ERROR}
        assert _epoch_error(broker.bootstrap_servers, topic_name) == ErrorCode.KAFKA_STORAGE_ERROR

        (broker.data_dir / f"{topic_name}-0").unlink()  # the dir can be made now
        assert consumer.get_watermark_offsets(tp, timeout=WAIT_S) == (0, 0)
        assert set(_fetch_errors(broker.bootstrap_servers, topic_name).values()) == {0}
        assert _epoch_error(broker.bootstrap_servers, topic_name) == 0
    finally:
        consumer.close()
