"""The pytest plugin registered by installing pykafkad gives users a ready broker."""

from __future__ import annotations

from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KTopicPartition


def test_pykafkad_broker_fixture(pykafkad_broker):
    producer = KafkaProducer(bootstrap_servers=pykafkad_broker.bootstrap_servers)
    assert producer.send("fixture-topic", b"hello").get(30).offset == 0
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=pykafkad_broker.bootstrap_servers)
    tp = KTopicPartition("fixture-topic", 0)
    assert consumer.end_offsets([tp]) == {tp: 1}
    consumer.close()
    assert (pykafkad_broker.data_dir / "fixture-topic-0").is_dir()
