"""ListOffsets through both clients: earliest, latest, by timestamp."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KTopicPartition

from tests.integration.clients import WAIT_S, confluent_produce, create_topic

BASE_TS = 1_700_000_000_000


def _fill(broker, topic_name, n=50):
    create_topic(broker.bootstrap_servers, topic_name)
    confluent_produce(
        broker.bootstrap_servers, topic_name,
        [{"value": str(i).encode(), "timestamp": BASE_TS + 1000 * i} for i in range(n)],
        **{"linger.ms": 0, "batch.num.messages": 7},
    )


def test_kafka_python_offsets_for_times_and_ends(broker, topic_name):
    _fill(broker, topic_name)
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
    tp = KTopicPartition(topic_name, 0)
    assert c.beginning_offsets([tp]) == {tp: 0}
    assert c.end_offsets([tp]) == {tp: 50}
    found = c.offsets_for_times({tp: BASE_TS + 10_500})
    assert found[tp].offset == 11 and found[tp].timestamp == BASE_TS + 11_000
    exact = c.offsets_for_times({tp: BASE_TS + 20_000})
    assert exact[tp].offset == 20
    assert c.offsets_for_times({tp: BASE_TS + 10_000_000})[tp] is None
    c.close()


def test_confluent_offsets_for_times_and_watermarks(broker, topic_name):
    _fill(broker, topic_name)
    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g"})
    assert c.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=WAIT_S) == (0, 50)
    res = c.offsets_for_times([TopicPartition(topic_name, 0, BASE_TS + 33_000)], timeout=WAIT_S)
    assert res[0].offset == 33
    res = c.offsets_for_times([TopicPartition(topic_name, 0, BASE_TS + 99_999_999)], timeout=WAIT_S)
    assert res[0].offset == -1  # OFFSET_END: no record that late
    c.close()


def test_delete_records_moves_log_start(broker, topic_name):
    from confluent_kafka.admin import AdminClient

    _fill(broker, topic_name)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    fut = admin.delete_records([TopicPartition(topic_name, 0, 20)])
    result = list(fut.values())[0].result(WAIT_S)
    assert result.low_watermark == 20
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
    tp = KTopicPartition(topic_name, 0)
    assert c.beginning_offsets([tp]) == {tp: 20}
    c.assign([tp])
    c.seek_to_beginning(tp)
    records = []
    while len(records) < 30:
        for batch in c.poll(timeout_ms=1000).values():
            records.extend(batch)
    assert records[0].offset == 20
    c.close()
