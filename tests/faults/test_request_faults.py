"""Per-request fault rules on a single broker, seen through stock clients: an error answer
the client retries, a delayed Fetch, a closed connection the client reopens."""

from __future__ import annotations

import subprocess
import sys

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer

from pykafkad.faults.control import FaultControlError
from tests.integration.clients import WAIT_S, confluent_consume, create_topic


def _rule(faults, rule_id: int) -> dict:
    return next(r for r in faults.list() if r["rule_id"] == rule_id)


def test_confluent_producer_retries_two_not_leader_answers_to_success(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    rule_id = broker.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=2,
                                topic=topic_name)
    outcomes = []
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "retry.backoff.ms": 20,
                  "enable.idempotence": True})
    p.produce(topic_name, b"survives", on_delivery=lambda err, msg: outcomes.append(
        (err, msg.offset())))
    assert p.flush(WAIT_S) == 0
    assert outcomes == [(None, 0)]
    rule = _rule(broker.faults, rule_id)
    assert (rule["fired"], rule["count"], rule["error_name"]) == (2, 0, "NOT_LEADER_OR_FOLLOWER")
    assert [m.value() for m in confluent_consume(broker.bootstrap_servers, topic_name, 1)] == [
        b"survives"]


def test_rule_for_another_topic_leaves_the_request_alone(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    rule_id = broker.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=1,
                                topic=topic_name + "-other")
    p = Producer({"bootstrap.servers": broker.bootstrap_servers})
    p.produce(topic_name, b"v")
    assert p.flush(WAIT_S) == 0
    assert _rule(broker.faults, rule_id)["fired"] == 0
    assert broker.faults.clear(rule_id) == 1
    assert broker.faults.list() == []


def test_non_retriable_error_reaches_the_application(broker, topic_name):
    """The error answer has Produce's shape: librdkafka reports the partition's error."""
    create_topic(broker.bootstrap_servers, topic_name)
    broker.faults.add(api="Produce", error="RECORD_LIST_TOO_LARGE", count=1)
    errors = []
    p = Producer({"bootstrap.servers": broker.bootstrap_servers})
    p.produce(topic_name, b"v", on_delivery=lambda err, msg: errors.append(err))
    p.flush(WAIT_S)
    assert [e.name() for e in errors] == ["RECORD_LIST_TOO_LARGE"]


def test_kafka_python_consumer_gets_its_records_through_a_delayed_fetch(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    producer.send(topic_name, b"late").get(WAIT_S)
    producer.close()
    rule_id = broker.faults.add(api="Fetch", delay_ms=700, count=1, topic=topic_name)
    consumer = KafkaConsumer(topic_name, bootstrap_servers=broker.bootstrap_servers,
                             auto_offset_reset="earliest", consumer_timeout_ms=WAIT_S * 1000)
    try:
        record = next(iter(consumer))
    finally:
        consumer.close()
    assert record.value == b"late"
    rule = _rule(broker.faults, rule_id)
    assert (rule["fired"], rule["delay_ms"], rule["error"]) == (1, 700, None)


def test_closed_connection_on_metadata_and_the_client_reconnects(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    rule_id = broker.faults.add(api="Metadata", close=True, count=1)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retries=5,
                             reconnect_backoff_ms=20)
    try:
        metadata = producer.send(topic_name, b"after-reconnect").get(WAIT_S)
    finally:
        producer.close()
    assert metadata.offset == 0
    assert _rule(broker.faults, rule_id)["fired"] == 1


def test_metadata_error_is_per_topic_and_the_client_retries(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    rule_id = broker.faults.add(api="Metadata", error="LEADER_NOT_AVAILABLE", count=2,
                                topic=topic_name)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retry_backoff_ms=20)
    try:
        assert producer.send(topic_name, b"v").get(WAIT_S).offset == 0
    finally:
        producer.close()
    assert _rule(broker.faults, rule_id)["fired"] == 2


def test_bad_rules_are_refused_with_their_reason(broker):
    with pytest.raises(FaultControlError, match="unknown API 'Produc'"):
        broker.faults.add(api="Produc", error=6)
    with pytest.raises(FaultControlError, match="unknown error 'NOT_A_CODE'"):
        broker.faults.add(api="Produce", error="NOT_A_CODE")
    with pytest.raises(FaultControlError, match="needs an error, a delay or close"):
        broker.faults.add(api="Produce")
    assert broker.faults.list() == []


def test_control_channel_is_off_unless_enabled(broker):
    """A node without pykafkad.faults.enable=true treats the control key as any unknown API:
    the connection closes; Kafka's clients keep working."""
    broker.call(setattr, broker.server.faults, "enabled", False)
    with pytest.raises(FaultControlError, match="closed the control connection"):
        broker.faults.list()


def _faults_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pykafkad", "faults", *args],
                          capture_output=True, text=True, timeout=WAIT_S)


def test_faults_command_adds_lists_and_clears(broker):
    bootstrap = ["--bootstrap-server", broker.bootstrap_servers]
    added = _faults_cli("add", *bootstrap, "--api", "Produce", "--error",
                        "NOT_LEADER_OR_FOLLOWER", "--count", "3")
    assert added.returncode == 0, added.stderr
    rule_id = int(added.stdout)
    listed = _faults_cli("list", *bootstrap)
    assert f'"rule_id": {rule_id}' in listed.stdout and '"count": 3' in listed.stdout
    assert _faults_cli("clear", *bootstrap).stdout.strip() == "removed 1"
    bad = _faults_cli("add", *bootstrap, "--api", "Produce", "--error", "NOPE")
    assert (bad.returncode, bad.stderr.strip()) == (
        1, "pykafkad faults: unknown error 'NOPE': give Kafka's name "
           "(e.g. NOT_LEADER_OR_FOLLOWER) or its code")


def test_group_filter_hits_only_that_groups_coordinator_lookups(broker, topic_name):
    """Two COORDINATOR_NOT_AVAILABLE answers to the group's FindCoordinator: the consumer
    looks again and joins."""
    create_topic(broker.bootstrap_servers, topic_name)
    group = f"g-{topic_name}"
    rule_id = broker.faults.add(api="FindCoordinator", error="COORDINATOR_NOT_AVAILABLE",
                                count=2, group=group)
    other = broker.faults.add(api="FindCoordinator", error="COORDINATOR_NOT_AVAILABLE",
                              count=1, group=group + "-other")
    confluent_produce_one(broker.bootstrap_servers, topic_name)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                         "auto.offset.reset": "earliest", "retry.backoff.ms": 20})
    consumer.subscribe([topic_name])
    try:
        msg = None
        for _ in range(WAIT_S):
            msg = consumer.poll(1)
            if msg is not None and msg.error() is None:
                break
        assert msg is not None and msg.value() == b"x"
    finally:
        consumer.close()
    assert _rule(broker.faults, rule_id)["fired"] == 2
    assert _rule(broker.faults, other)["fired"] == 0


def test_transactional_id_filter_and_a_retried_init(broker):
    """InitProducerId answers CONCURRENT_TRANSACTIONS twice for one transactional id; the
    transactional producer retries and initializes."""
    rule_id = broker.faults.add(api="InitProducerId", error="CONCURRENT_TRANSACTIONS", count=2,
                                transactional_id="faults-txn")
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers,
                         "transactional.id": "faults-txn", "retry.backoff.ms": 20})
    producer.init_transactions(WAIT_S)
    assert _rule(broker.faults, rule_id)["fired"] == 2


def confluent_produce_one(bootstrap: str, topic: str) -> None:
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"x")
    assert p.flush(WAIT_S) == 0
