"""Logs open lazily after a restart (on first use, or by the background loader), and clients see
exactly what they saw before: offsets, timestamps, the producer state of idempotent producers,
and the recovery of a torn tail after kill -9."""

from __future__ import annotations

import socket

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S, confluent_consume, create_topic

PARTITIONS = 40
BASE_TS = 1_700_000_000_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _produce(producer: Producer, topic: str, partition: int, values: range) -> list[int]:
    delivered: list[int] = []
    errors: list = []

    def on_delivery(err, msg):
        (errors.append(err) if err else delivered.append(msg.offset()))

    for i in values:
        producer.produce(topic, value=f"v{i}".encode(), partition=partition,
                         timestamp=BASE_TS + 1000 * i, on_delivery=on_delivery)
    assert producer.flush(WAIT_S) == 0
    assert not errors, errors
    return delivered


def test_untouched_partitions_after_kill_9(tmp_path, topic_name):
    data = tmp_path / "data"
    port = _free_port()
    proc = BrokerProcess(data, "--port", str(port)).start()
    create_topic(proc.bootstrap_servers, topic_name, partitions=PARTITIONS)
    producer = Producer({"bootstrap.servers": proc.bootstrap_servers, "enable.idempotence": True,
                         "linger.ms": 5})
    last = PARTITIONS - 1  # opened last by the background loader
    for p in range(PARTITIONS):
        assert _produce(producer, topic_name, p, range(5)) == list(range(5))
    proc.kill()  # kill -9: every active segment lies past its recovery point
    segment = sorted((data / f"{topic_name}-{last}").glob("*.log"))[-1]
    with open(segment, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x01\x00torn")

    proc = BrokerProcess(data, "--port", str(port)).start()
    try:
        # the same idempotent producer goes on: its sequence state was rebuilt from the log
        assert _produce(producer, topic_name, last, range(5, 8)) == [5, 6, 7]
        assert _produce(producer, topic_name, 0, range(5, 6)) == [5]
        c = Consumer({"bootstrap.servers": proc.bootstrap_servers, "group.id": "lazy-logs",
                      "enable.auto.commit": False})
        try:
            tp = TopicPartition(topic_name, PARTITIONS - 2)
            assert c.get_watermark_offsets(tp, timeout=WAIT_S) == (0, 5)
            found = c.offsets_for_times(
                [TopicPartition(topic_name, PARTITIONS - 3, BASE_TS + 2500)], timeout=WAIT_S)
            assert found[0].offset == 3
        finally:
            c.close()
        got = confluent_consume(proc.bootstrap_servers, topic_name, 8, partitions=(last,))
        assert [(m.offset(), m.value()) for m in got] == [(i, f"v{i}".encode()) for i in range(8)]
        assert [m.timestamp()[1] for m in got] == [BASE_TS + 1000 * i for i in range(8)]
    finally:
        producer.flush(WAIT_S)
        assert proc.terminate() == 0
        logged = proc.proc.stderr.read()
    assert f"{topic_name}-{last}" in logged and "16 bytes cut" in logged


def test_a_log_opens_on_first_use_recovered(tmp_path, topic_name, monkeypatch):
    """With the background loader held back, the partition is still unopened when the first
    request for it arrives: ListOffsets, Fetch and Produce open it, after its recovery."""
    from pykafkad.broker import Broker
    from pykafkad.testing import run_broker

    data = tmp_path / "data"
    proc = BrokerProcess(data).start()
    create_topic(proc.bootstrap_servers, topic_name, partitions=2)
    producer = Producer({"bootstrap.servers": proc.bootstrap_servers, "linger.ms": 5})
    for p in range(2):
        assert _produce(producer, topic_name, p, range(5)) == list(range(5))
    proc.kill()
    segment = sorted((data / f"{topic_name}-1").glob("*.log"))[-1]
    size = segment.stat().st_size
    with open(segment, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x01\x00torn")

    async def held_back(self):
        return None

    monkeypatch.setattr(Broker, "open_logs_in_background", held_back)
    with run_broker(data) as b:
        logs = b.broker.logs
        assert b.call(lambda: (topic_name, 1) in logs.logs()) is False
        assert segment.stat().st_size == size + 16  # nothing recovered yet
        c = Consumer({"bootstrap.servers": b.bootstrap_servers, "group.id": "lazy-logs",
                      "enable.auto.commit": False})
        try:
            tp = TopicPartition(topic_name, 1)
            assert c.get_watermark_offsets(tp, timeout=WAIT_S) == (0, 5)
            assert segment.stat().st_size == size  # recovered before it answered
            found = c.offsets_for_times(
                [TopicPartition(topic_name, 1, BASE_TS + 3500)], timeout=WAIT_S)
            assert found[0].offset == 4
        finally:
            c.close()
        producer = Producer({"bootstrap.servers": b.bootstrap_servers, "linger.ms": 5})
        assert _produce(producer, topic_name, 1, range(5, 6)) == [5]
        got = confluent_consume(b.bootstrap_servers, topic_name, 6, partitions=(1,))
        assert [m.value() for m in got] == [f"v{i}".encode() for i in range(6)]
