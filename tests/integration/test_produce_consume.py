"""Stock clients produce and consume through a real broker: every codec, both directions."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaProducer

from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
    kafka_python_consume,
)

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_produces_kafka_python_reads(broker, topic_name, codec):
    create_topic(broker.bootstrap_servers, topic_name)
    msgs = [
        {"key": f"k{i}".encode(), "value": f"value-{i}".encode() * 20,
         "headers": [("h", f"{i}".encode()), ("n", None)], "timestamp": 1_700_000_000_000 + i}
        for i in range(200)
    ]
    confluent_produce(broker.bootstrap_servers, topic_name, msgs, **{"compression.type": codec})
    got = kafka_python_consume(broker.bootstrap_servers, topic_name, 200)
    assert [(r.offset, r.key, r.value) for r in got] == [
        (i, m["key"], m["value"]) for i, m in enumerate(msgs)
    ]
    assert [r.timestamp for r in got] == [m["timestamp"] for m in msgs]
    assert [list(r.headers) for r in got] == [[("h", f"{i}".encode()), ("n", None)] for i in range(200)]


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_produces_confluent_reads(broker, topic_name, codec):
    create_topic(broker.bootstrap_servers, topic_name)
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap_servers,
        compression_type=None if codec == "none" else codec,
        linger_ms=5,
    )
    futures = [
        producer.send(topic_name, key=f"k{i}".encode(), value=f"v{i}".encode(),
                      headers=[("trace", f"t{i}".encode())], timestamp_ms=1_600_000_000_000 + i)
        for i in range(300)
    ]
    offsets = [f.get(WAIT_S).offset for f in futures]
    producer.close()
    assert offsets == list(range(300))
    got = confluent_consume(broker.bootstrap_servers, topic_name, 300)
    assert [(m.offset(), m.key(), m.value()) for m in got] == [
        (i, f"k{i}".encode(), f"v{i}".encode()) for i in range(300)
    ]
    assert [m.timestamp()[1] for m in got] == [1_600_000_000_000 + i for i in range(300)]
    assert [m.headers() for m in got] == [[("trace", f"t{i}".encode())] for i in range(300)]


def test_keys_land_on_one_partition_each(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name, partitions=4)
    msgs = [{"key": f"key-{i % 8}".encode(), "value": str(i).encode()} for i in range(160)]
    delivered = confluent_produce(broker.bootstrap_servers, topic_name, msgs)
    by_key: dict[bytes, set[int]] = {}
    for m in delivered:
        by_key.setdefault(m.key(), set()).add(m.partition())
    assert all(len(parts) == 1 for parts in by_key.values())
    assert len({p for parts in by_key.values() for p in parts}) > 1
    # and a consumer of all partitions sees everything, each key in order
    got = kafka_python_consume(broker.bootstrap_servers, topic_name, 160, partitions=range(4))
    assert len(got) == 160
    for key in by_key:
        values = [int(r.value) for r in got if r.key == key]
        assert values == sorted(values)


def test_one_megabyte_messages(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name, config={"max.message.bytes": "2000000"})
    big = [bytes([i]) * 1_000_000 for i in range(3)]
    confluent_produce(broker.bootstrap_servers, topic_name, [{"value": v} for v in big],
                      **{"message.max.bytes": 2_000_000})
    got = kafka_python_consume(broker.bootstrap_servers, topic_name, 3, max_partition_fetch_bytes=1024)
    assert [r.value for r in got] == big
    got = confluent_consume(broker.bootstrap_servers, topic_name, 3)
    assert [m.value() for m in got] == big


def test_message_over_max_message_bytes_is_refused(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name, config={"max.message.bytes": "1000"})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, max_request_size=10_000_000)
    future = producer.send(topic_name, value=b"x" * 5000)
    with pytest.raises(Exception) as info:
        future.get(WAIT_S)
    producer.close()
    assert "MessageSizeTooLarge" in type(info.value).__name__ or "TooLarge" in str(info.value)


def test_clients_cannot_write_to_internal_topics(broker):
    """Only the coordinators append to __consumer_offsets: a client's Produce gets
    INVALID_TOPIC_EXCEPTION, as from Kafka."""
    from compat.wire_client import WireClient
    from wire.messages.find_coordinator_request import FindCoordinatorRequest
    from wire.messages.produce_request import (
        PartitionProduceData,
        ProduceRequest,
        TopicProduceData,
    )
    from wire.records.batch import build_batch

    with WireClient(broker.bootstrap_servers) as c:
        # a group lookup makes the broker ask the controller for __consumer_offsets;
        # COORDINATOR_NOT_AVAILABLE until it exists, as from Kafka
        deadline = time.monotonic() + WAIT_S
        while c.send(FindCoordinatorRequest(key="g", key_type=0), 3).error_code != 0:
            assert time.monotonic() < deadline, "no group coordinator"
            time.sleep(0.05)
        resp = c.send(ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[TopicProduceData(
            name="__consumer_offsets", partition_data=[PartitionProduceData(
                index=0, records=build_batch([(b"k", b"v")]))])]), 9)
    part = resp.responses[0].partition_responses[0]
    assert part.error_code == 17  # INVALID_TOPIC_EXCEPTION
