"""Small helpers around the stock clients, so tests read as Kafka usage."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer
from kafka import TopicPartition as KTopicPartition

#: Java tests skip only outside CI when java/mvn are missing; in CI (scripts/test installs
#: them) a missing tool is a failure, never a skip
needs_java = pytest.mark.skipif(
    (shutil.which("java") is None or shutil.which("mvn") is None) and not os.environ.get("CI"),
    reason="java and mvn are needed (scripts/test installs them)")

#: upper bound for any one client wait; tests finish far sooner on a working broker
WAIT_S = 30


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})]
    )
    futures[name].result(WAIT_S)


def create_led_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    """``create_topic``, then waits until the broker's Metadata gives every partition a leader
    (a KRaft broker applies the controller's records just after CreateTopics answers)."""
    create_topic(bootstrap, name, partitions)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + WAIT_S
    while True:
        topic = admin.list_topics(name, timeout=WAIT_S).topics.get(name)
        if topic is not None and topic.error is None and len(topic.partitions) == partitions \
                and all(p.leader >= 0 for p in topic.partitions.values()):
            return
        assert time.monotonic() < deadline, f"{name} has no leader on {bootstrap}"
        time.sleep(0.02)


def confluent_produce(bootstrap: str, topic: str, messages, **conf) -> list:
    """messages: iterable of dicts with value/key/headers/timestamp/partition."""
    delivered = []
    errors = []

    def on_delivery(err, msg):
        (errors if err else delivered).append(err or msg)

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    for m in messages:
        kwargs = {k: v for k, v in m.items() if v is not None}
        p.produce(topic, on_delivery=on_delivery, **kwargs)
    remaining = p.flush(WAIT_S)
    assert remaining == 0, f"{remaining} messages not delivered"
    assert not errors, errors
    return delivered


def confluent_consume(bootstrap: str, topic: str, count: int, partitions=(0,), **conf) -> list:
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "pykafkad-tests",
        "enable.auto.commit": False,
        "enable.partition.eof": False,
        **conf,
    })
    c.assign([TopicPartition(topic, p, -2) for p in partitions])  # -2: OFFSET_BEGINNING
    out = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(out) < count and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            out.append(msg)
    finally:
        c.close()
    return out


def kafka_python_consume(bootstrap: str, topic: str, count: int, partitions=(0,), **conf) -> list:
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **conf)
    tps = [KTopicPartition(topic, p) for p in partitions]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    out = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(out) < count and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=500).values():
                out.extend(records)
    finally:
        c.close()
    return out
