"""Both clients' admin APIs: topics, partitions, configs, cluster."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)
from confluent_kafka.error import KafkaException
from kafka.admin import ConfigResource as KConfigResource
from kafka.admin import ConfigResourceType, KafkaAdminClient
from kafka.admin import NewPartitions as KNewPartitions
from kafka.admin import NewTopic as KNewTopic
from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError

from tests.integration.clients import WAIT_S, needs_java


def test_confluent_admin_topics_and_configs(broker, topic_name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(topic_name, 3, 1, config={"retention.ms": "12345"})])[
        topic_name].result(WAIT_S)
    md = admin.list_topics(timeout=WAIT_S)
    assert len(md.topics[topic_name].partitions) == 3
    assert md.controller_id == md.brokers[next(iter(md.brokers))].id

    with pytest.raises(KafkaException) as info:
        admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(WAIT_S)
    assert info.value.args[0].name() == "TOPIC_ALREADY_EXISTS"

    res = ConfigResource("topic", topic_name)
    configs = admin.describe_configs([res])[res].result(WAIT_S)
    assert configs["retention.ms"].value == "12345"
    assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["cleanup.policy"].value == "delete"
    assert configs["cleanup.policy"].is_default

    alter = ConfigResource("topic", topic_name, incremental_configs=[
        ConfigEntry("retention.ms", "999", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([alter])[alter].result(WAIT_S)
    configs = admin.describe_configs([res])[res].result(WAIT_S)
    assert configs["retention.ms"].value == "999"

    # legacy AlterConfigs replaces every override: retention.ms returns to its default
    legacy = ConfigResource("topic", topic_name, set_config={"retention.bytes": "65536"})
    admin.alter_configs([legacy])[legacy].result(WAIT_S)
    configs = admin.describe_configs([res])[res].result(WAIT_S)
    assert configs["retention.bytes"].value == "65536"
    assert configs["retention.ms"].value == "604800000" and configs["retention.ms"].is_default

    bad = ConfigResource("topic", topic_name, incremental_configs=[
        ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException) as info:
        admin.incremental_alter_configs([bad])[bad].result(WAIT_S)
    assert info.value.args[0].name() == "INVALID_CONFIG"

    admin.create_partitions([NewPartitions(topic_name, 5)])[topic_name].result(WAIT_S)
    assert len(admin.list_topics(timeout=WAIT_S).topics[topic_name].partitions) == 5

    bres = ConfigResource("broker", "1")
    bconf = admin.describe_configs([bres])[bres].result(WAIT_S)
    assert bconf["num.partitions"].value == "1"

    admin.delete_topics([topic_name])[topic_name].result(WAIT_S)
    assert topic_name not in admin.list_topics(timeout=WAIT_S).topics


def test_kafka_44_topic_configs_at_creation(broker, topic_name):
    """Kafka 4.4's newer topic configs: taken by CreateTopics, described, validated."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    given = {"errors.deadletterqueue.group.enable": "true",
             "max.decompressed.message.bytes": "1048576", "remote.copy.lag.ms": "-1"}
    admin.create_topics([NewTopic(topic_name, 1, 1, config=given)])[topic_name].result(WAIT_S)
    res = ConfigResource("topic", topic_name)
    configs = admin.describe_configs([res])[res].result(WAIT_S)
    assert {n: (configs[n].value, configs[n].source) for n in (*given, "remote.copy.lag.bytes")} \
        == {**{n: (v, ConfigSource.DYNAMIC_TOPIC_CONFIG.value) for n, v in given.items()},
            "remote.copy.lag.bytes": ("-1", ConfigSource.DEFAULT_CONFIG.value)}
    bad = f"{topic_name}-bad"
    with pytest.raises(KafkaException) as info:
        admin.create_topics([NewTopic(bad, 1, 1, config={
            "max.decompressed.message.bytes": "0"})])[bad].result(WAIT_S)
    err = info.value.args[0]
    assert (err.name(), err.str()) == (
        "INVALID_CONFIG", "Invalid value 0 for configuration max.decompressed.message.bytes: "
        "Value must be at least 1")


def test_confluent_replication_factor_above_one_is_refused(broker, topic_name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    with pytest.raises(KafkaException) as info:
        admin.create_topics([NewTopic(topic_name, 1, 3)])[topic_name].result(WAIT_S)
    assert info.value.args[0].name() == "INVALID_REPLICATION_FACTOR"


def test_kafka_python_admin(broker, topic_name):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    admin.create_topics([KNewTopic(topic_name, 2, 1, topic_configs={"cleanup.policy": "delete"})])
    assert topic_name in admin.list_topics()
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([KNewTopic(topic_name, 2, 1)])
    with pytest.raises(InvalidReplicationFactorError):
        admin.create_topics([KNewTopic(topic_name + "x", 1, 2)])
    # validate_only creates nothing
    admin.create_topics([KNewTopic(topic_name + "-v", 1, 1)], validate_only=True)
    assert topic_name + "-v" not in admin.list_topics()

    result = admin.describe_configs([KConfigResource(ConfigResourceType.TOPIC, topic_name)],
                                    config_filter="all")
    entries = result["topic"][topic_name]
    assert entries["segment.bytes"]["value"] == "1073741824"
    assert entries["segment.bytes"]["config_source"] == "DEFAULT_CONFIG"
    assert entries["cleanup.policy"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"

    def overrides():
        result = admin.describe_configs([KConfigResource(ConfigResourceType.TOPIC, topic_name)])
        return {k: v["value"] for k, v in result["topic"][topic_name].items()}

    # IncrementalAlterConfigs (the default) adds to the overrides ...
    admin.alter_configs([KConfigResource(ConfigResourceType.TOPIC, topic_name,
                                         configs={"retention.bytes": "4096"})])
    assert overrides() == {"cleanup.policy": "delete", "retention.bytes": "4096"}
    # ... legacy AlterConfigs replaces the whole set (this client re-sends the other keys)
    admin.alter_configs([KConfigResource(ConfigResourceType.TOPIC, topic_name,
                                         configs={"retention.bytes": "8192"})], incremental=False)
    assert overrides() == {"cleanup.policy": "delete", "retention.bytes": "8192"}

    admin.create_partitions({topic_name: KNewPartitions(4)})
    cluster = admin.describe_cluster()
    assert cluster["controller_id"] == 1 and len(cluster["brokers"]) == 1

    described = admin.describe_topics([topic_name])
    assert len(described[0]["partitions"]) == 4

    admin.delete_topics([topic_name])
    assert topic_name not in admin.list_topics()
    admin.close()


def test_auto_topic_creation_follows_num_partitions(tmp_path, topic_name):
    from kafka import KafkaProducer

    from pykafkad.testing import run_broker

    with run_broker(tmp_path / "d", config={"num.partitions": "3"}) as b:
        p = KafkaProducer(bootstrap_servers=b.bootstrap_servers)
        p.send(topic_name, b"x").get(WAIT_S)
        assert p.partitions_for(topic_name) == {0, 1, 2}
        p.close()
    with run_broker(tmp_path / "e", config={"auto.create.topics.enable": "false"}) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        md = admin.list_topics(topic_name, timeout=WAIT_S)
        assert md.topics[topic_name].error is not None


def test_topic_name_rules(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic("a.b", 1, 1)])["a.b"].result(WAIT_S)
    for bad, code in [("a_b", "TOPIC_EXCEPTION"), ("bad name!", "TOPIC_EXCEPTION"),
                      ("x" * 250, "TOPIC_EXCEPTION"), ("..", "TOPIC_EXCEPTION")]:
        with pytest.raises(KafkaException) as info:
            admin.create_topics([NewTopic(bad, 1, 1)])[bad].result(WAIT_S)
        assert info.value.args[0].name() == code, bad  # librdkafka names 17 so


@needs_java
def test_log_dirs_is_described_as_the_data_dir(broker, reference_kafka):
    """Kafka describes its ``log.dirs`` as the static config it was started with; pykafkad's
    data dir (``--data-dir``, a test's directory, the default) is that directory."""

    def described(bootstrap: str):
        admin = AdminClient({"bootstrap.servers": bootstrap})
        resource = ConfigResource("BROKER", "1")
        configs = admin.describe_configs([resource])[resource].result(WAIT_S)
        return configs["log.dirs"], configs["log.dir"]

    (ours, our_dir), (kafkas, kafka_dir) = described(broker.bootstrap_servers), described(
        reference_kafka.bootstrap_servers)
    assert ours.value == str(broker.data_dir.resolve())
    assert kafkas.value == str(reference_kafka.data_dir / "logs")
    assert ours.source == kafkas.source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert (our_dir.value, our_dir.source) == (kafka_dir.value, kafka_dir.source)
