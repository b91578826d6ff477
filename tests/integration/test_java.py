"""The official Java client (kafka-clients, run as compat/java/CompatClient.java) against a
broker that caps DescribeTopicPartitions pages at 2 partitions: Java's Admin.describeTopics
must page through the cursor to see every partition."""

from __future__ import annotations

from compat.clients.java import run_java
from pykafkad.testing import run_broker
from tests.integration.clients import create_led_topic, needs_java


@needs_java
def test_java_admin_pages_describe_topics_and_basic_clients(tmp_path):
    config = {"max.request.partition.size.limit": "2"}
    with run_broker(tmp_path / "data", config=config) as b:
        scenarios = ["admin-describe-paging", "admin-topics", "produce-consume"]
        results, stderr = run_java(b.bootstrap_servers, scenarios)
    failed = {s: r.reason for s, r in results.items() if r.status != "pass"}
    assert not failed, f"{failed}\n{stderr[-2000:]}"


def test_fetch_of_no_partitions_is_answered_without_long_poll(tmp_path):
    """Java's consumer closes its fetch session on close() with a Fetch of no partitions at
    epoch -1.  Kafka answers a fetch of no partitions at once instead of long-polling it;
    otherwise every Java (and Spark) consumer close waits out max_wait_ms.  The poll asked for
    here is far longer than the client's socket timeout, so a long poll fails the test."""
    from compat.wire_client import WireClient
    from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic

    with run_broker(tmp_path / "data") as b:
        create_led_topic(b.bootstrap_servers, "t")
        with WireClient(b.bootstrap_servers, timeout=30) as c:
            opened = c.request(1, 12, FetchRequest(
                max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_id=0, session_epoch=0,
                topics=[FetchTopic(topic="t", partitions=[FetchPartition(
                    partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]))
            assert opened.error_code == 0 and opened.session_id != 0
            for session_id in (opened.session_id, 0):  # closing a session; a sessionless one
                closed = c.request(1, 12, FetchRequest(
                    max_wait_ms=600_000, min_bytes=1, max_bytes=1 << 20,
                    session_id=session_id, session_epoch=-1, topics=[]))
                assert closed.error_code == 0 and closed.responses == []
