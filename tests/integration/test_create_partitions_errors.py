"""CreatePartitions refusals carry Kafka 4.4's error codes and messages (kafka-topics --alter
prints them as they come)."""

from __future__ import annotations

import uuid

from confluent_kafka.admin import AdminClient, NewPartitions

from tests.integration.clients import WAIT_S, create_topic, needs_java


def _refusals(bootstrap: str, topic: str) -> dict[str, tuple[str, str]]:
    create_topic(bootstrap, topic, partitions=3)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    out = {}
    for label, name, count in (("same", topic, 3), ("fewer", topic, 2),
                               ("missing", topic + "-missing", 4)):
        try:
            admin.create_partitions([NewPartitions(name, count)])[name].result(WAIT_S)
            out[label] = ("accepted", "")
        except Exception as e:  # the future raises KafkaException(KafkaError)
            err = e.args[0]
            out[label] = (err.name(), err.str())
    return out


@needs_java
def test_refusals_as_apache_kafka(broker, reference_kafka):
    topic = f"reference-partitions-{uuid.uuid4().hex[:8]}"
    ours = _refusals(broker.bootstrap_servers, topic)
    assert ours == _refusals(reference_kafka.bootstrap_servers, topic)
    assert ours["fewer"] == ("INVALID_PARTITIONS", f"The topic {topic} currently has 3 "
                             "partition(s); 2 would not be an increase.")
    assert ours["same"] == ("INVALID_PARTITIONS", "Topic already has 3 partition(s).")
    assert ours["missing"][0] == "UNKNOWN_TOPIC_OR_PART"
