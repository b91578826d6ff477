"""Client quotas with stock clients: AlterClientQuotas/DescribeClientQuotas answers and
kafka-configs output against Apache Kafka 4.4, and throttling seen by confluent-kafka
(throttle_cb, stats) and kafka-python (fetch throttle metrics).

No Python client sends AlterClientQuotas/DescribeClientQuotas (kafka-python 3.0 and
confluent-kafka 2.16 have no quota admin calls), so those comparisons use raw frames."""

from __future__ import annotations

import json
import uuid

from kafka import KafkaConsumer
from kafka import TopicPartition as KTopicPartition

from compat.kafka_tools import run_tool
from compat.wire_client import WireClient
from tests.integration.clients import confluent_produce, create_topic, needs_java
from wire.messages.alter_client_quotas_request import (
    AlterClientQuotasRequest,
    EntityData,
    EntryData,
    OpData,
)
from wire.messages.describe_client_quotas_request import ComponentData, DescribeClientQuotasRequest

QUOTA = 10240  # 10 KB/s
#: a fresh rate is measured over at least (quota.window.num - 1) windows of 1 s
MIN_WINDOW_S = 10


def set_quota(bootstrap: str, entity: list, key: str, value: float) -> None:
    with WireClient(bootstrap) as c:
        r = c.request(49, 1, AlterClientQuotasRequest(entries=[EntryData(
            entity=[EntityData(t, n) for t, n in entity], ops=[OpData(key, value, False)])],
            validate_only=False))
    assert r.entries[0].error_code == 0, r.entries[0].error_message


def _alter_answers(bootstrap: str, prefix: str) -> list:
    cases = [
        ([("user", f"{prefix}u")], [("producer_byte_rate", 1024, False)]),
        ([("user", f"{prefix}u")], [("producer_byte_rate", 1024.5, False)]),
        ([("user", f"{prefix}u")], [("producer_byte_rate", 0, False)]),
        ([("user", f"{prefix}u")], [("request_percentage", -0.5, False)]),
        ([("user", f"{prefix}u")], [("bogus", 1, False)]),
        ([("user", f"{prefix}u")], [("connection_creation_rate", 1, False)]),
        ([("ip", "127.0.0.1")], [("connection_creation_rate", 1.5, False)]),
        ([("ip", "127.0.0.1")], [("producer_byte_rate", 1, False)]),
        ([("ip", "not an ip")], [("connection_creation_rate", 1, False)]),
        ([("ip", "1.2.3.4"), ("user", "x")], [("connection_creation_rate", 1, False)]),
        ([("group", "x")], [("producer_byte_rate", 1, False)]),
        ([], [("producer_byte_rate", 1, False)]),
        ([("user", "")], [("producer_byte_rate", 1, False)]),
        ([("user", "x")], [("producer_byte_rate", 1, False), ("producer_byte_rate", 2, False)]),
    ]
    out = []
    with WireClient(bootstrap) as c:
        for entity, ops in cases:
            r = c.request(49, 1, AlterClientQuotasRequest(entries=[EntryData(
                entity=[EntityData(t, n) for t, n in entity],
                ops=[OpData(k, v, rm) for k, v, rm in ops])], validate_only=True))
            out.append((entity, ops, r.entries[0].error_code, r.entries[0].error_message))
        for comps in ([("user", 0, None)], [("user", 3, None)], [("user", 1, "x")],
                      [("group", 2, None)], [("user", 2, None), ("user", 2, None)],
                      [("ip", 2, None), ("user", 2, None)]):
            r = c.request(48, 1, DescribeClientQuotasRequest(
                components=[ComponentData(*x) for x in comps], strict=False))
            out.append((comps, r.error_code, r.error_message))
    return out


def _kafka_configs(bootstrap: str, prefix: str) -> list:
    steps = [
        ["--alter", "--entity-type", "clients", "--entity-name", f"{prefix}x", "--add-config",
         "producer_byte_rate=1024,request_percentage=12.5"],
        ["--describe", "--entity-type", "clients", "--entity-name", f"{prefix}x"],
        ["--alter", "--entity-type", "users", "--entity-name", f"{prefix}u", "--entity-type",
         "clients", "--entity-default", "--add-config", "consumer_byte_rate=2048"],
        ["--describe", "--entity-type", "users", "--entity-name", f"{prefix}u", "--entity-type",
         "clients", "--entity-default"],
        ["--alter", "--entity-type", "clients", "--entity-name", f"{prefix}x", "--add-config",
         "producer_byte_rate=10.5"],
        ["--alter", "--entity-type", "clients", "--entity-name", f"{prefix}x", "--delete-config",
         "producer_byte_rate,request_percentage"],
        ["--alter", "--entity-type", "users", "--entity-name", f"{prefix}u", "--entity-type",
         "clients", "--entity-default", "--delete-config", "consumer_byte_rate"],
        ["--describe", "--entity-type", "clients", "--entity-name", f"{prefix}x"],
    ]
    out = []
    for args in steps:
        p = run_tool("kafka-configs", ["--bootstrap-server", bootstrap, *args])
        causes = [line for line in p.stderr.splitlines() if line.startswith("Caused by: ")]
        out.append((p.returncode, p.stdout.strip(), causes))
    return out


@needs_java
def test_quota_answers_and_kafka_configs_output_match_apache_kafka(broker, reference_kafka):
    prefix = f"quotas-{uuid.uuid4().hex[:6]}-"
    theirs = _alter_answers(reference_kafka.bootstrap_servers, prefix)
    ours = _alter_answers(broker.bootstrap_servers, prefix)
    assert ours == theirs
    theirs = _kafka_configs(reference_kafka.bootstrap_servers, prefix)
    ours = _kafka_configs(broker.bootstrap_servers, prefix)
    assert ours == theirs
    assert ours[1][1] == (f"Quota configs for client-id '{prefix}x' are "
                          "request_percentage=12.5, producer_byte_rate=1024.0")


def test_confluent_producer_is_throttled_by_producer_byte_rate(broker):
    topic = f"quotas-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap_servers, topic)
    set_quota(broker.bootstrap_servers, [("client-id", "quotas-producer")],
              "producer_byte_rate", QUOTA)
    throttles, stats = [], []
    value = b"x" * 10000
    count = 20
    delivered = confluent_produce(
        broker.bootstrap_servers, topic, [{"value": value} for _ in range(count)],
        **{"client.id": "quotas-producer", "linger.ms": 0, "batch.size": 12000,
           "statistics.interval.ms": 100,
           "throttle_cb": lambda e: throttles.append(round(e.throttle_time * 1000)),
           "stats_cb": lambda s: stats.append(json.loads(s))})
    assert len(delivered) == count  # throttled, nothing lost
    throttled = [t for t in throttles if t > 0]  # librdkafka also reports the end (0)
    assert throttled
    # every throttle is Kafka's (rate - quota) / quota * window with the window at least
    # 10 s: never more than the time the bytes beyond 10 s of quota take at the quota
    sent = count * (len(value) + 200)  # an upper bound on the produce request bytes
    assert max(throttled) <= (sent - MIN_WINDOW_S * QUOTA) * 1000 / QUOTA
    # nothing is throttled before 10 s worth of quota was sent
    assert len(throttled) <= count - (MIN_WINDOW_S * QUOTA) // (len(value) + 200)
    # librdkafka's statistics saw the same throttle times (ms, per broker)
    seen = max(b["throttle"]["max"] for s in stats for b in s["brokers"].values())
    assert 0 < seen <= max(throttled)


def test_kafka_python_consumer_is_throttled_by_consumer_byte_rate(broker):
    topic = f"quotas-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap_servers, topic)
    value = b"y" * 10000
    count = 20
    # one record a batch: a batch larger than a quota window's bytes would be throttled and
    # dropped from every fetch (KIP-74 still answers it whole)
    confluent_produce(broker.bootstrap_servers, topic, [{"value": value} for _ in range(count)],
                      **{"linger.ms": 0, "batch.size": 12000})
    set_quota(broker.bootstrap_servers, [("client-id", "quotas-consumer")],
              "consumer_byte_rate", QUOTA)
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, client_id="quotas-consumer",
                      enable_auto_commit=False, max_partition_fetch_bytes=20000,
                      fetch_max_bytes=20000)
    tp = KTopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    try:
        for _ in range(600):  # bounded: each poll waits at most 500 ms
            for records in c.poll(timeout_ms=500).values():
                got.extend(records)
            if len(got) >= count:
                break
        metrics = c.metrics()
    finally:
        c.close()
    assert [r.offset for r in got] == list(range(count))  # throttled fetches lose nothing
    seen = max(group["throttle-time-max"] for group in metrics.values()
               if "throttle-time-max" in group)
    assert seen > 0
    # a fetch answers at most 10 windows of quota (Kafka's getMaxValueInQuotaWindow), so no
    # single throttle goes beyond what two such fetches exceed a fresh 10 s window by
    limit = (2 * MIN_WINDOW_S * QUOTA + 2 * (len(value) + 200) - MIN_WINDOW_S * QUOTA)
    assert seen <= limit * 1000 / QUOTA
