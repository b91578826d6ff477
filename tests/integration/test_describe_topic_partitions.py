"""DescribeTopicPartitions (key 75) on the wire: cursor paging as Apache Kafka 4.1 answers it.

The expected answers were checked against the official broker (compat/kafka_broker.py); the
compat suite's ``admin-describe-paging`` scenario repeats that comparison with Java's admin.
"""

from __future__ import annotations

import pytest

from compat.wire_client import WireClient
from pykafkad.testing import run_broker
from tests.integration.clients import create_topic
from wire.errors import ErrorCode
from wire.messages.describe_topic_partitions_request import (
    Cursor,
    DescribeTopicPartitionsRequest,
    TopicRequest,
)

TOPICS = {"aa": 3, "bb": 4, "cc": 2}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with run_broker(tmp_path_factory.mktemp("dtp") / "data") as b:
        for name, n in TOPICS.items():
            create_topic(b.bootstrap_servers, name, n)
        with WireClient(b.bootstrap_servers) as c:
            yield c


def describe(client, topics, limit=2000, cursor=None):
    req = DescribeTopicPartitionsRequest(
        topics=[TopicRequest(name=t) for t in topics], response_partition_limit=limit,
        cursor=Cursor(topic_name=cursor[0], partition_index=cursor[1]) if cursor else None)
    resp = client.request(75, 0, req)
    page = [(t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in resp.topics]
    nxt = resp.next_cursor
    return page, (nxt.topic_name, nxt.partition_index) if nxt else None


def test_all_topics_sorted_with_ids_and_no_cursor(client):
    req = DescribeTopicPartitionsRequest(topics=[], response_partition_limit=100)
    resp = client.request(75, 0, req)
    assert [t.name for t in resp.topics] == ["aa", "bb", "cc"]
    assert resp.next_cursor is None
    t = resp.topics[0]
    assert t.topic_id != bytes(16) and not t.is_internal
    p = t.partitions[0]
    assert (p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes) == (1, 0, [1], [1])
    assert p.eligible_leader_replicas == [] and p.last_known_elr == [] and p.offline_replicas == []


def test_pages_follow_the_cursor_until_null(client):
    pages = []
    cursor = None
    for _ in range(10):
        page, cursor = describe(client, ["cc", "aa", "bb"], limit=3, cursor=cursor)
        pages.append(page)
        if cursor is None:
            break
    assert pages == [
        [("aa", 0, [0, 1, 2])],
        [("bb", 0, [0, 1, 2])],
        [("bb", 0, [3]), ("cc", 0, [0, 1])],
    ]


def test_full_page_points_at_next_topic(client):
    assert describe(client, ["aa", "bb"], limit=3) == ([("aa", 0, [0, 1, 2])], ("bb", 0))
    assert describe(client, ["aa", "cc"], limit=5) == ([("aa", 0, [0, 1, 2]), ("cc", 0, [0, 1])], None)


def test_cursor_inside_a_topic_and_past_its_end(client):
    assert describe(client, ["aa", "bb", "cc"], limit=2, cursor=("bb", 1)) == (
        [("bb", 0, [1, 2])], ("bb", 3))
    assert describe(client, ["aa", "bb", "cc"], cursor=("bb", 7)) == (
        [("bb", 0, []), ("cc", 0, [0, 1])], None)
    # without a topic list, the cursor's topic need not exist
    assert describe(client, [], cursor=("ab", 1)) == (
        [("bb", 0, [0, 1, 2, 3]), ("cc", 0, [0, 1])], None)


def test_unknown_and_illegal_topics_take_no_room(client):
    page, cursor = describe(client, ["zz-missing", "bad name!", "cc"], limit=3)
    assert page == [
        ("bad name!", ErrorCode.INVALID_TOPIC_EXCEPTION, []),
        ("cc", 0, [0, 1]),
        ("zz-missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []),
    ]
    assert cursor is None
    # ... but a full page stops before them, as before any topic
    assert describe(client, ["zz-missing", "cc"], limit=2) == ([("cc", 0, [0, 1])], ("zz-missing", 0))


def test_invalid_cursors_refuse_the_request(client):
    page, cursor = describe(client, ["aa", "bb"], cursor=("dd", 0))
    assert page == [("aa", ErrorCode.INVALID_REQUEST, []), ("bb", ErrorCode.INVALID_REQUEST, [])]
    assert cursor is None
    page, _ = describe(client, ["aa", "bb"], cursor=("bb", -1))
    assert {code for _, code, _ in page} == {ErrorCode.INVALID_REQUEST}


def test_limit_is_at_least_one_and_capped_by_broker_config(client, tmp_path):
    assert describe(client, ["aa"], limit=0) == ([("aa", 0, [0])], ("aa", 1))
    assert describe(client, ["aa", "cc"], limit=-1) == ([("aa", 0, [0])], ("aa", 1))
    with run_broker(tmp_path / "capped", config={"max.request.partition.size.limit": "2"}) as b:
        create_topic(b.bootstrap_servers, "aa", 3)
        with WireClient(b.bootstrap_servers) as c:
            assert describe(c, ["aa"], limit=100) == ([("aa", 0, [0, 1])], ("aa", 2))
