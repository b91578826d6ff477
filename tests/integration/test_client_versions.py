"""The newest stock clients pick Kafka 4.4's newest versions from pykafkad's ApiVersions and
work with them: the Java 4.4.0 client, kafka-python 3.0.12 (which infers the broker's release
from the advertised maxima) and confluent-kafka."""

from __future__ import annotations

import re

from compat.clients.java import run_java
from compat.kafka_specs import SPECS_VERSION
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
    needs_java,
)

#: what the Java 4.4.0 client sends to a broker advertising Kafka 4.4's ranges (its classic
#: consumer group commits and fetches offsets by name: OffsetCommit/OffsetFetch v9)
JAVA_44_VERSIONS = {"API_VERSIONS": 5, "METADATA": 13, "PRODUCE": 13, "FETCH": 18,
                    "LIST_OFFSETS": 11, "DESCRIBE_CLUSTER": 2, "CREATE_TOPICS": 7,
                    "OFFSET_COMMIT": 9, "OFFSET_FETCH": 9}

#: the release kafka-python 3.0.12 infers from Kafka 4.4.0's ApiVersions (its newest check needs
#: DescribeLogDirs v5; test_kafka_python_infers_what_it_infers_from_kafka compares the two)
KAFKA_PYTHON_INFERS_FROM_KAFKA_44 = (4, 3)


@needs_java
def test_java_44_client_uses_the_newest_versions(broker):
    results, stderr = run_java(
        broker.bootstrap_servers, ["produce-consume", "offset-commit", "offsets-by-time"],
        version=SPECS_VERSION,
        jvm_options=("-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient=debug",))
    failed = {s: r.reason for s, r in results.items() if r.status != "pass"}
    assert not failed, f"{failed}\n{stderr[-2000:]}"
    used: dict[str, set[int]] = {}
    for m in re.finditer(r"apiKey=(\w+), apiVersion=(\d+)", stderr):
        used.setdefault(m.group(1), set()).add(int(m.group(2)))
    assert {api: max(used.get(api, {-1})) for api in JAVA_44_VERSIONS} == JAVA_44_VERSIONS


def test_kafka_python_infers_kafka_44s_release_and_works(broker, topic_name):
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    try:
        assert producer.config["api_version"] == KAFKA_PYTHON_INFERS_FROM_KAFKA_44
        for i in range(3):
            producer.send(topic_name, f"m{i}".encode()).get(WAIT_S)
    finally:
        producer.close()
    consumer = KafkaConsumer(topic_name, bootstrap_servers=broker.bootstrap_servers,
                             auto_offset_reset="earliest", group_id="kp-4x",
                             consumer_timeout_ms=WAIT_S * 1000)
    try:
        got = []
        for record in consumer:
            got.append(record.value)
            if len(got) == 3:
                break
        consumer.commit()
        assert got == [b"m0", b"m1", b"m2"]
        assert consumer.config["api_version"] == KAFKA_PYTHON_INFERS_FROM_KAFKA_44
    finally:
        consumer.close()


def test_confluent_kafka_keeps_working(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    confluent_produce(broker.bootstrap_servers, topic_name, [{"value": b"a"}, {"value": b"b"}])
    got = confluent_consume(broker.bootstrap_servers, topic_name, 2)
    assert [m.value() for m in got] == [b"a", b"b"]
