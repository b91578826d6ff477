"""An offset commit is answered once its record is in every ISR member's log, as Kafka's group
coordinator answers it (acks=all): with the other replicas of the group's __consumer_offsets
partition paused, OffsetCommit answers COORDINATOR_NOT_AVAILABLE after
offsets.commit.timeout.ms (or at once, when the ISR already fell below min.insync.replicas),
never NONE; once they are back, the same commit succeeds and a stock client reads it."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat.wire_client import WireClient
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S
from tests.kraft.test_broker_replication import find_coordinator, node_bootstrap
from wire.errors import ErrorCode
from wire.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)

CONFIG = {"offsets.topic.num.partitions": "1", "offsets.commit.timeout.ms": "2000",
          "min.insync.replicas": "2"}


def commit(address: str, group: str, topic: str, offset: int) -> int:
    """A simple (memberless) OffsetCommit v8 of partition 0 to ``address``: its error code."""
    with WireClient(address, timeout=60) as client:
        resp = client.request(8, 8, OffsetCommitRequest(
            group_id=group, generation_id_or_member_epoch=-1, member_id="",
            group_instance_id=None, topics=[OffsetCommitRequestTopic(name=topic, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                             committed_leader_epoch=-1,
                                             committed_metadata="")])]))
    return resp.topics[0].partitions[0].error_code


def test_a_commit_is_answered_once_replicated(tmp_path):
    topic, group = f"rc-{uuid.uuid4().hex[:6]}", f"g-{uuid.uuid4().hex[:6]}"
    with run_cluster(3, config=CONFIG, data_dir=tmp_path / "cluster") as c:
        admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
        admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(WAIT_S)
        deadline = time.monotonic() + WAIT_S
        while True:  # the coordinator, once __consumer_offsets is fully replicated
            code, coordinator = find_coordinator(c.bootstrap_servers, group)
            if code == ErrorCode.NONE and commit(node_bootstrap(c, coordinator), group, topic,
                                                 1) == ErrorCode.NONE:
                break
            assert time.monotonic() < deadline, "no coordinator took a first commit"
            time.sleep(0.2)
        at = node_bootstrap(c, coordinator)
        followers = [n for n in c.nodes if n != coordinator]
        for n in followers:
            c.pause(n)
        try:
            assert commit(at, group, topic, 2) == ErrorCode.COORDINATOR_NOT_AVAILABLE
        finally:
            for n in followers:
                c.resume(n)
        deadline = time.monotonic() + 60
        while commit(at, group, topic, 3) != ErrorCode.NONE:
            assert time.monotonic() < deadline, "the commit never succeeded after resuming"
            time.sleep(0.2)
        consumer = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": group})
        try:
            [tp] = consumer.committed([CTopicPartition(topic, 0)], timeout=WAIT_S)
        finally:
            consumer.close()
        assert tp.offset == 3
