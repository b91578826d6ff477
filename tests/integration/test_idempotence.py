"""Idempotent producers with five requests in flight: retries caused by lost requests and lost
responses (the broker drops the connection through a test-only fault hook) keep every record
exactly once and in order."""

from __future__ import annotations

import threading

from confluent_kafka import Producer
from kafka import KafkaProducer

from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    create_topic,
    kafka_python_consume,
)

N = 2000


class DropConnections:
    """Drops the connection before the append (lost request) or after it (lost response) on
    some Produce requests for one topic, a bounded number of times."""

    def __init__(self, topic: str, every: int = 7, limit: int = 8):
        self.topic = topic
        self.every = every
        self.limit = limit
        self.calls = 0
        self.dropped_requests = 0
        self.dropped_responses = 0
        self.lock = threading.Lock()
        self.drop_after = False

    def __call__(self, stage, topic, partition, header) -> None:
        if topic != self.topic:
            return
        with self.lock:
            if stage == "before_append":
                self.calls += 1
                self.drop_after = False
                if self.calls % self.every or self.dropped_requests + self.dropped_responses >= (
                    self.limit
                ):
                    return
                if (self.calls // self.every) % 2:
                    self.dropped_requests += 1
                else:
                    self.drop_after = True
                    return
            elif self.drop_after:
                self.drop_after = False
                self.dropped_responses += 1
            else:
                return
        raise ConnectionResetError("test fault: connection dropped")


def test_confluent_idempotent_retries_keep_order_without_duplicates(broker, topic_name):
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name)
    fault = DropConnections(topic_name)
    broker.broker.produce_fault = fault
    p = Producer({
        "bootstrap.servers": bs, "enable.idempotence": True,
        "max.in.flight.requests.per.connection": 5, "linger.ms": 1, "batch.num.messages": 20,
        "retry.backoff.ms": 10,
    })
    errors = []
    for i in range(N):
        p.produce(topic_name, f"m{i}".encode(), partition=0,
                  on_delivery=lambda err, msg: err and errors.append(err))
        if i % 100 == 0:
            p.poll(0)
    assert p.flush(WAIT_S) == 0
    broker.broker.produce_fault = None
    assert not errors, errors
    assert fault.dropped_requests and fault.dropped_responses
    got = confluent_consume(bs, topic_name, N)
    assert [m.value() for m in got] == [f"m{i}".encode() for i in range(N)]
    assert [m.offset() for m in got] == list(range(N))


def test_kafka_python_idempotent_retries_keep_order_without_duplicates(broker, topic_name):
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name)
    fault = DropConnections(topic_name)
    broker.broker.produce_fault = fault
    p = KafkaProducer(bootstrap_servers=bs, enable_idempotence=True, linger_ms=1,
                      max_in_flight_requests_per_connection=5, batch_size=300,
                      retry_backoff_ms=10)
    futures = [p.send(topic_name, f"m{i}".encode(), partition=0) for i in range(N)]
    p.flush(WAIT_S)
    offsets = [f.get(WAIT_S).offset for f in futures]
    p.close()
    broker.broker.produce_fault = None
    assert fault.dropped_requests and fault.dropped_responses
    assert offsets == list(range(N))
    got = kafka_python_consume(bs, topic_name, N)
    assert [r.value for r in got] == [f"m{i}".encode() for i in range(N)]
