"""Broker and topic configs: Kafka 4.1's names, defaults, parsing, checks and DescribeConfigs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykafkad.config import (
    BROKER_CONFIGS,
    DYNAMIC_BROKER_CONFIGS,
    TOPIC_CONFIGS,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    ConfigType,
    Endpoint,
    describe_broker_configs,
    describe_topic_configs,
    is_ignored_broker_config,
    parse_properties,
    resolve_topic_config,
    validate_topic_configs,
)
from pykafkad.config.broker import ClusterConfigError
from pykafkad.config.broker_dynamic import UNUSED_DYNAMIC_CONFIGS
from pykafkad.config.broker_unused import UNUSED_BROKER_CONFIGS
from pykafkad.config.types import Password, java_double_str, parse_type

#: the cluster-level config Kafka 4.x's controller writes when a cluster is formatted
CLUSTER_DEFAULTS = {"min.insync.replicas": "1"}

LONG_MAX = 9223372036854775807
INT_MAX = 2147483647
S = ConfigSource


def synonyms(entry):
    return [(s.name, s.value, s.source) for s in entry.synonyms]


def entry(entries, name):
    (found,) = [e for e in entries if e.name == name]
    return found


# --- defaults


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("node.id", 1),
        ("broker.id", 1),
        ("listeners", "PLAINTEXT://:9092"),
        ("advertised.listeners", None),
        ("num.partitions", 1),
        ("default.replication.factor", 1),
        ("auto.create.topics.enable", True),
        ("delete.topic.enable", True),
        ("log.dir", "/tmp/kafka-logs"),
        ("log.dirs", None),
        ("log.segment.bytes", 1073741824),
        ("log.roll.ms", None),
        ("log.roll.hours", 168),
        ("log.retention.ms", None),
        ("log.retention.minutes", None),
        ("log.retention.hours", 168),
        ("log.retention.bytes", -1),
        ("log.retention.check.interval.ms", 300000),
        ("log.index.interval.bytes", 4096),
        ("log.index.size.max.bytes", 10485760),
        ("log.cleanup.policy", ("delete",)),
        ("log.cleaner.delete.retention.ms", 86400000),
        ("log.cleaner.min.compaction.lag.ms", 0),
        ("log.cleaner.max.compaction.lag.ms", LONG_MAX),
        ("log.cleaner.min.cleanable.ratio", 0.5),
        ("log.message.timestamp.type", "CreateTime"),
        ("log.message.timestamp.before.max.ms", LONG_MAX),
        ("log.message.timestamp.after.max.ms", 3600000),
        ("message.max.bytes", 1048588),
        ("log.flush.interval.messages", LONG_MAX),
        ("log.flush.interval.ms", None),
        ("log.flush.scheduler.interval.ms", LONG_MAX),
        ("compression.type", "producer"),
        ("socket.request.max.bytes", 104857600),
        ("replica.fetch.max.bytes", 1048576),
        ("fetch.max.bytes", 57671680),
        ("offsets.topic.num.partitions", 50),
        ("offsets.topic.replication.factor", 3),
        ("offsets.retention.minutes", 10080),
        ("offsets.commit.timeout.ms", 5000),
        ("group.initial.rebalance.delay.ms", 3000),
        ("group.min.session.timeout.ms", 6000),
        ("group.max.session.timeout.ms", 1800000),
        ("group.max.size", INT_MAX),
        ("transaction.max.timeout.ms", 900000),
        ("transactional.id.expiration.ms", 604800000),
        ("producer.id.expiration.ms", 86400000),
        ("transaction.state.log.num.partitions", 50),
        ("transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000),
        ("min.insync.replicas", 1),
        ("unclean.leader.election.enable", False),
        ("num.network.threads", 3),
        ("num.recovery.threads.per.data.dir", 2),
        ("log.cleaner.io.max.bytes.per.second", 1.7976931348623157e308),
    ],
)
def test_broker_defaults_are_kafkas(name, value):
    assert BrokerConfig()[name] == value


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("cleanup.policy", ("delete",)),
        ("compression.type", "producer"),
        ("delete.retention.ms", 86400000),
        ("file.delete.delay.ms", 60000),
        ("flush.messages", LONG_MAX),
        ("flush.ms", LONG_MAX),
        ("follower.replication.throttled.replicas", ()),
        ("index.interval.bytes", 4096),
        ("leader.replication.throttled.replicas", ()),
        ("local.retention.bytes", -2),
        ("local.retention.ms", -2),
        ("max.compaction.lag.ms", LONG_MAX),
        ("max.message.bytes", 1048588),
        ("message.timestamp.type", "CreateTime"),
        ("message.timestamp.before.max.ms", LONG_MAX),
        ("message.timestamp.after.max.ms", 3600000),
        ("min.cleanable.dirty.ratio", 0.5),
        ("min.compaction.lag.ms", 0),
        ("min.insync.replicas", 1),
        ("preallocate", False),
        ("remote.storage.enable", False),
        ("retention.bytes", -1),
        ("retention.ms", 604800000),
        ("segment.bytes", 1073741824),
        ("segment.index.bytes", 10485760),
        ("segment.jitter.ms", 0),
        ("segment.ms", 604800000),
        ("unclean.leader.election.enable", False),
        ("compression.gzip.level", -1),
        ("compression.lz4.level", 9),
        ("compression.zstd.level", 3),
        ("errors.deadletterqueue.group.enable", False),
        ("max.decompressed.message.bytes", 2147483639),
        ("remote.copy.lag.bytes", -1),
        ("remote.copy.lag.ms", 0),
    ],
)
def test_topic_defaults_are_kafkas(name, value):
    assert TOPIC_CONFIGS[name].default == value
    assert resolve_topic_config(BrokerConfig(), {})[name] == value


def test_topic_configs_are_exactly_kafka_44s():
    public = {name for name, d in TOPIC_CONFIGS.items() if not d.internal}
    assert public == {
        "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
        "compression.zstd.level", "delete.retention.ms", "errors.deadletterqueue.group.enable",
        "file.delete.delay.ms",
        "flush.messages", "flush.ms", "follower.replication.throttled.replicas",
        "index.interval.bytes", "leader.replication.throttled.replicas", "local.retention.bytes",
        "local.retention.ms", "max.compaction.lag.ms", "max.decompressed.message.bytes",
        "max.message.bytes",
        "message.timestamp.after.max.ms", "message.timestamp.before.max.ms",
        "message.timestamp.type", "min.cleanable.dirty.ratio", "min.compaction.lag.ms",
        "min.insync.replicas", "preallocate", "remote.log.copy.disable",
        "remote.copy.lag.bytes", "remote.copy.lag.ms", "remote.log.delete.on.disable",
        "remote.storage.enable", "retention.bytes",
        "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms",
        "segment.ms", "unclean.leader.election.enable",
    }  # fmt: skip


def test_broker_topic_synonyms_point_both_ways():
    for name, d in BROKER_CONFIGS.items():
        if d.topic_name is not None:
            assert d.topic_name in TOPIC_CONFIGS, name
    assert BROKER_CONFIGS["log.retention.ms"].topic_name == "retention.ms"
    assert BROKER_CONFIGS["message.max.bytes"].topic_name == "max.message.bytes"


def test_only_the_first_log_synonym_is_dynamic():
    assert "log.retention.ms" in DYNAMIC_BROKER_CONFIGS
    assert not BROKER_CONFIGS["log.retention.ms"].read_only
    assert BROKER_CONFIGS["log.retention.hours"].read_only
    assert BROKER_CONFIGS["log.roll.hours"].read_only
    assert BROKER_CONFIGS["num.partitions"].read_only
    assert not BROKER_CONFIGS["message.max.bytes"].read_only


# --- parsing values


@pytest.mark.parametrize(
    ("raw", "type_", "value"),
    [
        ("true", ConfigType.BOOLEAN, True),
        (" FaLsE ", ConfigType.BOOLEAN, False),
        ("+42", ConfigType.INT, 42),
        ("-2147483648", ConfigType.INT, -(2**31)),
        ("9223372036854775807", ConfigType.LONG, LONG_MAX),
        ("32767", ConfigType.SHORT, 32767),
        ("0.25", ConfigType.DOUBLE, 0.25),
        ("1e3", ConfigType.DOUBLE, 1000.0),
        ("2d", ConfigType.DOUBLE, 2.0),
        ("a, b ,c", ConfigType.LIST, ("a", "b", "c")),
        ("a,,b", ConfigType.LIST, ("a", "", "b")),
        ("  ", ConfigType.LIST, ()),
        ("  text  ", ConfigType.STRING, "text"),
    ],
)
def test_values_parse_like_java(raw, type_, value):
    assert parse_type("x", raw, type_) == value


@pytest.mark.parametrize(
    ("raw", "type_"),
    [
        ("2147483648", ConfigType.INT),
        ("1_000", ConfigType.INT),
        ("0x10", ConfigType.INT),
        ("1.0", ConfigType.LONG),
        ("32768", ConfigType.SHORT),
        ("", ConfigType.INT),
        ("inf", ConfigType.DOUBLE),
        ("1,5", ConfigType.DOUBLE),
    ],
)
def test_values_java_rejects_are_rejected(raw, type_):
    with pytest.raises(ConfigError, match=f"Not a number of type {type_.name}"):
        parse_type("x", raw, type_)


def test_passwords_are_hidden():
    p = parse_type("x", " secret ", ConfigType.PASSWORD)
    assert isinstance(p, Password) and p.value == "secret" and str(p) == "[hidden]"


def test_java_double_formatting():
    assert [java_double_str(d) for d in (0.5, 2.0, 1e7, 1e-4, 1.7976931348623157e308)] == [
        "0.5", "2.0", "1.0E7", "1.0E-4", "1.7976931348623157E308",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"num.partitions": "abc"},
         "Invalid value abc for configuration num.partitions: Not a number of type INT"),
        ({"num.partitions": "0"},
         "Invalid value 0 for configuration num.partitions: Value must be at least 1"),
        ({"auto.create.topics.enable": "yes"},
         "Invalid value yes for configuration auto.create.topics.enable: "
         "Expected value to be either true or false"),
        ({"compression.type": "GZIP"},
         "Invalid value GZIP for configuration compression.type: String must be one of: "
         "uncompressed, zstd, lz4, snappy, gzip, producer"),
        ({"group.consumer.migration.policy": "sideways"},
         "Invalid value sideways for configuration group.consumer.migration.policy: String "
         "must be one of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL"),
        ({"log.cleanup.policy": "delete,foo"},
         "Invalid value foo for configuration log.cleanup.policy: "
         "String must be one of: compact, delete"),
        ({"log.cleaner.min.cleanable.ratio": "1.5"},
         "Invalid value 1.5 for configuration log.cleaner.min.cleanable.ratio: "
         "Value must be no more than 1"),
        ({"log.segment.bytes": "1000"},
         "Invalid value 1000 for configuration log.segment.bytes: Value must be at least 1048576"),
        ({"compression.gzip.level": "0"},
         "Invalid value 0 for configuration compression.gzip.level: "
         "Value must be between 1 and 9 or equal to -1"),
        ({"log.roll.ms": "0"}, "log.roll.ms must be greater than or equal to 1"),
        ({"log.retention.minutes": "0"},
         "log.retention.ms must be unlimited (-1) or, greater than or equal to 1"),
        ({"node.id": "2", "broker.id": "3"},
         "You must set `node.id` to the same value as `broker.id`."),
        ({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
         "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
         "Use a routable IP address."),
        ({"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9093"},
         "Each listener must have a different name, listeners: "
         "PLAINTEXT://:9092,PLAINTEXT://:9093"),
        ({"listeners": "INTERNAL://:9092"}, "Error creating broker listeners from "
         "'[INTERNAL://:9092]': No security protocol defined for listener INTERNAL"),
        ({"listeners": "localhost:9092"}, "Unable to parse localhost:9092 to a broker endpoint"),
        ({"log.cleaner.min.compaction.lag.ms": "10", "log.cleaner.max.compaction.lag.ms": "5"},
         "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
        ({"log.dir": " ", "log.dirs": ","},
         "At least one log directory must be defined via log.dirs or log.dir."),
    ],
)  # fmt: skip
def test_invalid_broker_values_are_rejected_with_kafkas_message(settings, message):
    with pytest.raises(ConfigError) as e:
        BrokerConfig(settings)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)


# --- properties files and sources


def test_properties_syntax_follows_java_util_properties():
    text = (
        "# a comment\n"
        "   ! another comment \\\n"
        "num.partitions=3\n"
        "\n"
        "  log.dirs : /a, \\\n"
        "      /b\n"
        "listeners PLAINTEXT://:9093\r\n"
        "log.retention.hours   =   12   \n"
        "empty=\n"
        "bare\n"
        "key\\ with\\=odd\\:chars=v\\u00e9\\tx\n"
        "escaped.backslash=c:\\\\\n"
        "after=1\n"
        "num.partitions=4\n"
        "#dangling=\\\n"
        "last=x\\"
    )
    assert parse_properties(text) == {
        "num.partitions": "4",
        "log.dirs": "/a, /b",
        "listeners": "PLAINTEXT://:9093",
        "log.retention.hours": "12   ",
        "empty": "",
        "bare": "",
        "key with=odd:chars": "v\u00e9\tx",
        "escaped.backslash": "c:\\",
        "after": "1",
        "last": "x",
    }


def test_malformed_unicode_escape_is_an_error():
    with pytest.raises(ConfigError, match="Malformed"):
        parse_properties("a=\\u12")


def test_from_sources_reads_file_then_overrides(tmp_path: Path):
    path = tmp_path / "server.properties"
    path.write_bytes(b"num.partitions=3\nlog.dirs=/data/caf\xe9\n")  # ISO-8859-1, as Java reads
    overrides = {"num.partitions": "5", "delete.topic.enable": "false"}
    config = BrokerConfig.from_sources(path, overrides)
    assert config["num.partitions"] == 5
    assert config["delete.topic.enable"] is False
    assert config.log_dirs == ["/data/caf\u00e9"]
    assert config.explicit == {
        "num.partitions": "5", "log.dirs": "/data/caf\u00e9", "delete.topic.enable": "false",
    }  # fmt: skip
    assert config.is_set("log.dirs") and not config.is_set("log.retention.hours")
    assert BrokerConfig.from_sources(None, {})["num.partitions"] == 1


def test_unreadable_file_is_a_config_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="missing.properties"):
        BrokerConfig.from_sources(tmp_path / "missing.properties", {})


def test_unknown_key_names_the_key(tmp_path: Path):
    path = tmp_path / "server.properties"
    path.write_text("num.partitions=1\nnum.partitons=3\n")
    with pytest.raises(ConfigError, match="'num.partitons'") as e:
        BrokerConfig.from_sources(path, {})
    assert e.value.name == "num.partitons"
    with pytest.raises(ConfigError, match="retention.ms"):
        BrokerConfig.from_sources(None, {"retention.ms": "1"})  # a topic config, not a broker one


def test_a_stock_kraft_server_properties_loads(tmp_path: Path):
    path = tmp_path / "server.properties"
    path.write_text(
        "process.roles=broker,controller\n"
        "node.id=1\n"
        "controller.quorum.bootstrap.servers=localhost:9093\n"
        "listeners=PLAINTEXT://:9092,CONTROLLER://:9093\n"
        "inter.broker.listener.name=PLAINTEXT\n"
        "advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL\n"
        "num.network.threads=3\nnum.io.threads=8\n"
        "socket.send.buffer.bytes=102400\nsocket.receive.buffer.bytes=102400\n"
        "socket.request.max.bytes=104857600\n"
        "log.dirs=/tmp/kraft-combined-logs\nnum.partitions=1\n"
        "num.recovery.threads.per.data.dir=1\n"
        "offsets.topic.replication.factor=1\n"
        "share.coordinator.state.topic.replication.factor=1\n"
        "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
        "log.retention.hours=168\nlog.segment.bytes=1073741824\n"
        "log.retention.check.interval.ms=300000\n"
        "zookeeper.connect=localhost:2181\n"
        "ssl.keystore.location=/ks.jks\n"
        "listener.name.controller.sasl.enabled.mechanisms=PLAIN\n"
    )
    config = BrokerConfig.from_sources(path, {})
    assert config.node_id == 1 and config["broker.id"] == 1
    assert config.broker_listeners == [Endpoint("PLAINTEXT", None, 9092, "PLAINTEXT")]
    assert config.advertised_listeners == [Endpoint("PLAINTEXT", "localhost", 9092, "PLAINTEXT")]
    assert len(config.listeners) == 2
    assert config["offsets.topic.replication.factor"] == 1
    assert config.node_roles == {"broker", "controller"}
    assert config.quorum_bootstrap_servers == [("localhost", 9093)]
    assert config.inter_broker_listener == Endpoint("PLAINTEXT", "localhost", 9092, "PLAINTEXT")
    assert set(config.ignored) == {
        "share.coordinator.state.topic.replication.factor", "zookeeper.connect",
        "ssl.keystore.location", "listener.name.controller.sasl.enabled.mechanisms",
    }  # fmt: skip


def test_controller_listeners_default_to_plaintext_when_the_map_is_not_set():
    config = BrokerConfig(
        {
            "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
            "controller.listener.names": "CONTROLLER",
        }
    )
    assert [e.listener_name for e in config.broker_listeners] == ["PLAINTEXT"]
    assert config.advertised_listeners == [Endpoint("PLAINTEXT", None, 9092, "PLAINTEXT")]


def test_node_id_and_broker_id_are_synonyms():
    assert BrokerConfig({"broker.id": "7"}).node_id == 7
    assert BrokerConfig({"node.id": "7"})["broker.id"] == 7
    assert BrokerConfig({"node.id": "7", "broker.id": "7"}).node_id == 7
    with pytest.raises(ConfigError, match="node.id: Value must be at least 0"):
        BrokerConfig({"broker.id": "-1"})


# --- unit synonyms


@pytest.mark.parametrize(
    ("settings", "retention_ms"),
    [
        ({}, 168 * 3600000),
        ({"log.retention.hours": "1"}, 3600000),
        ({"log.retention.hours": "1", "log.retention.minutes": "2"}, 120000),
        ({"log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "5"}, 5),
        ({"log.retention.ms": "-1", "log.retention.hours": "1"}, -1),
        ({"log.retention.hours": "-5"}, -1),
        ({"log.retention.ms": "-7"}, -1),
    ],
)
def test_retention_ms_beats_minutes_beats_hours(settings, retention_ms):
    config = BrokerConfig(settings)
    assert config.log_retention_ms == retention_ms
    assert resolve_topic_config(config, {})["retention.ms"] == retention_ms


def test_roll_jitter_and_flush_synonyms():
    config = BrokerConfig({"log.roll.hours": "2", "log.roll.jitter.hours": "1"})
    assert config.log_roll_ms == 7200000 and config.log_roll_jitter_ms == 3600000
    assert BrokerConfig({"log.roll.hours": "2", "log.roll.ms": "10"}).log_roll_ms == 10
    assert BrokerConfig().log_flush_interval_ms == LONG_MAX
    assert BrokerConfig({"log.flush.scheduler.interval.ms": "9"}).log_flush_interval_ms == 9
    config = BrokerConfig({"log.flush.scheduler.interval.ms": "9", "log.flush.interval.ms": "8"})
    assert config.log_flush_interval_ms == 8


# --- topic configs


def test_topic_value_is_override_else_broker_synonym_else_default():
    broker = BrokerConfig(
        {
            "log.roll.hours": "1",
            "message.max.bytes": "2000000",
            "log.cleanup.policy": "compact",
            "log.cleaner.min.cleanable.ratio": "0.1",
        }
    )
    topic = resolve_topic_config(broker, {"segment.ms": "5000", "retention.bytes": "10"})
    assert topic["segment.ms"] == 5000
    assert topic["retention.bytes"] == 10
    assert topic["max.message.bytes"] == 2000000
    assert topic["cleanup.policy"] == ("compact",)
    assert topic["min.cleanable.dirty.ratio"] == 0.1
    assert topic["remote.storage.enable"] is False
    assert topic.is_overridden("segment.ms") and not topic.is_overridden("segment.bytes")
    assert "segment.bytes" in topic and "log.segment.bytes" not in topic
    assert resolve_topic_config(broker, {})["segment.ms"] == 3600000


def test_internal_segment_bytes_overrides_segment_bytes_for_tests():
    topic = resolve_topic_config(BrokerConfig(), {"internal.segment.bytes": "1024"})
    assert topic["segment.bytes"] == 1073741824
    assert topic.effective_segment_bytes == 1024
    assert resolve_topic_config(BrokerConfig(), {}).effective_segment_bytes == 1073741824


def test_unknown_topic_config():
    with pytest.raises(ConfigError) as e:
        validate_topic_configs({"retention.ms": "1", "x": "1"})
    assert str(e.value) == "Unknown topic config name: x" and e.value.name == "x"
    with pytest.raises(ConfigError, match="Unknown topic config name: log.retention.ms"):
        resolve_topic_config(BrokerConfig(), {"log.retention.ms": "1"})


@pytest.mark.parametrize(
    "name", ["message.format.version", "message.timestamp.difference.max.ms",
             "message.downconversion.enable"]
)  # fmt: skip
def test_configs_removed_in_kafka_4_are_unknown(name):
    with pytest.raises(ConfigError, match=f"Unknown topic config name: {name}"):
        validate_topic_configs({name: "true"})


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"retention.ms": "abc"},
         "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
        ({"retention.ms": "-2"},
         "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
        ({"segment.bytes": "13"},
         "Invalid value 13 for configuration segment.bytes: Value must be at least 1048576"),
        ({"cleanup.policy": "compact,nope"},
         "Invalid value nope for configuration cleanup.policy: "
         "String must be one of: compact, delete"),
        ({"message.timestamp.type": "createtime"},
         "Invalid value createtime for configuration message.timestamp.type: "
         "String must be one of: CreateTime, LogAppendTime"),
        ({"min.cleanable.dirty.ratio": "-0.5"},
         "Invalid value -0.5 for configuration min.cleanable.dirty.ratio: "
         "Value must be at least 0"),
        ({"compression.zstd.level": "23"},
         "Invalid value 23 for configuration compression.zstd.level: "
         "Value must be no more than 22"),
        ({"leader.replication.throttled.replicas": "0:1,x"},
         "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: "
         "leader.replication.throttled.replicas must be the literal '*' or a list of replicas "
         "in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."),
        ({"retention.ms": None, "segment.ms": None},
         "Null value not supported for topic configs: retention.ms,segment.ms"),
        ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
         "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
        ({"remote.storage.enable": "true"},
         "Tiered Storage functionality is disabled in the broker. "
         "Topic cannot be configured with remote log storage."),
    ],
)  # fmt: skip
def test_invalid_topic_configs(configs, message):
    with pytest.raises(ConfigError) as e:
        validate_topic_configs(configs)
    assert str(e.value) == message


def test_valid_topic_configs_pass():
    validate_topic_configs(
        {
            "cleanup.policy": "compact, delete",
            "compression.type": "zstd",
            "leader.replication.throttled.replicas": "*",
            "follower.replication.throttled.replicas": "0:1,1:1",
            "retention.ms": "-1",
            "preallocate": "TRUE",
            "internal.segment.bytes": "100",
        }
    )
    validate_topic_configs({})


def test_topic_checks_combine_with_the_brokers_defaults():
    broker = BrokerConfig({"log.cleaner.max.compaction.lag.ms": "100"})
    validate_topic_configs({"min.compaction.lag.ms": "200"})
    with pytest.raises(ConfigError, match=r"min.compaction.lag.ms \(200\) > "):
        validate_topic_configs({"min.compaction.lag.ms": "200"}, broker=broker)


# --- DescribeConfigs


def test_describe_topic_sources_and_synonyms():
    broker = BrokerConfig({"log.segment.bytes": "2097152", "log.retention.hours": "24"})
    entries = describe_topic_configs(
        broker, {"cleanup.policy": "compact", "retention.ms": "1000"}, None, True, True
    )
    assert [e.name for e in entries] == sorted(e.name for e in entries)
    assert {e.name for e in entries} == {n for n, d in TOPIC_CONFIGS.items() if not d.internal}

    cleanup = entry(entries, "cleanup.policy")
    assert (cleanup.value, cleanup.source) == ("compact", S.DYNAMIC_TOPIC_CONFIG)
    assert not cleanup.read_only
    assert synonyms(cleanup) == [
        ("cleanup.policy", "compact", S.DYNAMIC_TOPIC_CONFIG),
        ("log.cleanup.policy", "delete", S.DEFAULT_CONFIG),
    ]
    assert cleanup.config_type is ConfigType.LIST and cleanup.documentation

    segment = entry(entries, "segment.bytes")
    assert (segment.value, segment.source) == ("2097152", S.STATIC_BROKER_CONFIG)
    assert synonyms(segment) == [
        ("log.segment.bytes", "2097152", S.STATIC_BROKER_CONFIG),
        ("log.segment.bytes", "1073741824", S.DEFAULT_CONFIG),
    ]
    assert not segment.is_default

    retention = entry(entries, "retention.ms")
    assert synonyms(retention) == [("retention.ms", "1000", S.DYNAMIC_TOPIC_CONFIG)]

    ratio = entry(entries, "min.cleanable.dirty.ratio")
    assert (ratio.value, ratio.config_type) == ("0.5", ConfigType.DOUBLE)

    remote = entry(entries, "remote.storage.enable")
    assert (remote.value, remote.source, remote.synonyms) == ("false", S.DEFAULT_CONFIG, ())
    assert remote.is_default


def test_describe_topic_retention_without_override_shows_kafkas_synonym_quirk():
    # Kafka drops leading synonyms that are not log.retention.ms itself: only hours have values.
    broker = BrokerConfig({"log.retention.hours": "24"})
    (retention,) = describe_topic_configs(broker, {}, ["retention.ms"], True)
    assert (retention.value, retention.source) == ("86400000", S.DEFAULT_CONFIG)
    assert retention.synonyms == ()


def test_describe_topic_filters_names_and_omits_extras():
    entries = describe_topic_configs(BrokerConfig(), {}, ["segment.ms", "nope"], False, False)
    assert [(e.name, e.value, e.synonyms, e.documentation) for e in entries] == [
        ("segment.ms", "604800000", (), None)
    ]


def test_describe_broker_sources_read_only_and_synonyms():
    broker = BrokerConfig({"log.retention.hours": "24", "num.partitions": "3"})
    entries = describe_broker_configs(broker, None, True)
    assert {e.name for e in entries} == {
        n for n, d in BROKER_CONFIGS.items() if not d.internal} | set(UNUSED_BROKER_CONFIGS)
    partitions = entry(entries, "num.partitions")
    assert (partitions.value, partitions.source, partitions.read_only) == (
        "3", S.STATIC_BROKER_CONFIG, True,
    )  # fmt: skip
    assert synonyms(partitions) == [
        ("num.partitions", "3", S.STATIC_BROKER_CONFIG),
        ("num.partitions", "1", S.DEFAULT_CONFIG),
    ]
    hours = entry(entries, "log.retention.hours")
    assert synonyms(hours) == [
        ("log.retention.hours", "24", S.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", S.DEFAULT_CONFIG),
    ]
    ms = entry(entries, "log.retention.ms")
    assert (ms.value, ms.source, ms.read_only, ms.synonyms) == (None, S.DEFAULT_CONFIG, False, ())
    policy = entry(entries, "log.cleanup.policy")
    assert (policy.value, policy.config_type) == ("delete", ConfigType.LIST)
    assert entry(entries, "offsets.topic.replication.factor").config_type is ConfigType.SHORT
    # only Kafka's passwords, which pykafkad accepts but does not use, and never their values
    sensitive = [e for e in entries if e.is_sensitive]
    assert "ssl.keystore.password" in {e.name for e in sensitive}
    assert all(e.config_type is ConfigType.PASSWORD and e.value is None for e in sensitive)
    assert all(e.documentation is None for e in entries)


def test_describe_broker_lists_kafkas_configs_pykafkad_does_not_use():
    broker = BrokerConfig({"process.roles": "broker,controller", "node.id": "1",
                           "controller.quorum.voters": "1@localhost:9093",
                           "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
                           "controller.listener.names": "CONTROLLER",
                           "sasl.enabled.mechanisms": "PLAIN"})
    broker.set_dynamic("sasl.kerberos.min.time.before.relogin", "+58000", per_broker=True)
    entries = describe_broker_configs(broker, ["process.roles", "sasl.enabled.mechanisms",
                                               "sasl.kerberos.min.time.before.relogin",
                                               "ssl.protocol", "listeners", "node.id"], True)
    assert [(e.name, e.value, e.source, e.read_only, e.config_type, synonyms(e))
            for e in entries] == [
        ("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093", S.STATIC_BROKER_CONFIG, False,
         ConfigType.LIST,
         [("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093", S.STATIC_BROKER_CONFIG),
          ("listeners", "PLAINTEXT://:9092", S.DEFAULT_CONFIG)]),
        ("node.id", "1", S.STATIC_BROKER_CONFIG, True, ConfigType.INT,
         [("node.id", "1", S.STATIC_BROKER_CONFIG)]),
        ("process.roles", "broker,controller", S.STATIC_BROKER_CONFIG, True, ConfigType.LIST,
         [("process.roles", "broker,controller", S.STATIC_BROKER_CONFIG)]),
        ("sasl.enabled.mechanisms", "PLAIN", S.STATIC_BROKER_CONFIG, False, ConfigType.LIST,
         [("sasl.enabled.mechanisms", "PLAIN", S.STATIC_BROKER_CONFIG),
          ("sasl.enabled.mechanisms", "GSSAPI", S.DEFAULT_CONFIG)]),
        ("sasl.kerberos.min.time.before.relogin", "58000", S.DYNAMIC_BROKER_CONFIG, False,
         ConfigType.LONG,
         [("sasl.kerberos.min.time.before.relogin", "+58000", S.DYNAMIC_BROKER_CONFIG),
          ("sasl.kerberos.min.time.before.relogin", "60000", S.DEFAULT_CONFIG)]),
        ("ssl.protocol", "TLSv1.3", S.DEFAULT_CONFIG, False, ConfigType.STRING,
         [("ssl.protocol", "TLSv1.3", S.DEFAULT_CONFIG)]),
    ]  # fmt: skip


def test_describe_broker_default_resource_lists_only_dynamic_defaults():
    broker = BrokerConfig({"log.retention.hours": "24"})
    # Kafka 4.x's controller writes min.insync.replicas at the cluster level (ELR)
    (isr,) = describe_broker_configs(broker, None, True, per_broker=False)
    assert (isr.name, isr.value, isr.source) == (
        "min.insync.replicas", "1", S.DYNAMIC_DEFAULT_BROKER_CONFIG)
    broker.set_dynamic("log.retention.ms", "5000")
    broker.set_dynamic("message.max.bytes", "2000", per_broker=True)
    retention, _ = describe_broker_configs(broker, None, True, per_broker=False)
    assert (retention.name, retention.value, retention.source) == (
        "log.retention.ms", "5000", S.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )  # fmt: skip
    assert synonyms(retention) == [("log.retention.ms", "5000", S.DYNAMIC_DEFAULT_BROKER_CONFIG)]


# --- dynamic broker configs


def test_dynamic_default_and_per_broker_precedence():
    broker = BrokerConfig({"log.retention.hours": "24", "message.max.bytes": "1000"})
    version = broker.version
    broker.set_dynamic("log.retention.ms", "60000")
    assert broker.log_retention_ms == 60000  # a dynamic ms beats the static hours
    assert resolve_topic_config(broker, {})["retention.ms"] == 60000
    assert broker.version > version

    broker.set_dynamic("message.max.bytes", "2000")
    broker.set_dynamic("message.max.bytes", "3000", per_broker=True)
    assert broker["message.max.bytes"] == 3000
    (entry_,) = describe_broker_configs(broker, ["message.max.bytes"], True)
    assert synonyms(entry_) == [
        ("message.max.bytes", "3000", S.DYNAMIC_BROKER_CONFIG),
        ("message.max.bytes", "2000", S.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("message.max.bytes", "1000", S.STATIC_BROKER_CONFIG),
        ("message.max.bytes", "1048588", S.DEFAULT_CONFIG),
    ]
    (topic_entry,) = describe_topic_configs(broker, {}, ["max.message.bytes"], True)
    assert (topic_entry.value, topic_entry.source) == ("3000", S.DYNAMIC_BROKER_CONFIG)

    broker.delete_dynamic("message.max.bytes", per_broker=True)
    assert broker["message.max.bytes"] == 2000
    broker.delete_dynamic("message.max.bytes")
    broker.delete_dynamic("message.max.bytes")  # not set: no error, as in Kafka
    broker.delete_dynamic("log.retention.ms")
    assert broker["message.max.bytes"] == 1000
    assert broker.log_retention_ms == 86400000
    assert broker.dynamic_default_configs == CLUSTER_DEFAULTS
    assert broker.dynamic_broker_configs == {}


@pytest.mark.parametrize(
    ("name", "value", "per_broker", "message"),
    [
        ("num.partitions", "3", False,
         "Cannot update these configs dynamically: [num.partitions]"),
        ("log.retention.hours", "3", True,
         "Cannot update these configs dynamically: [log.retention.hours]"),
        ("listeners", "PLAINTEXT://:1", False,
         "Cannot update these configs at default cluster level, broker id must be specified: "
         "[listeners]"),
        ("sasl.kerberos.min.time.before.relogin", "60000", False,
         "Cannot update these configs at default cluster level, broker id must be specified: "
         "[sasl.kerberos.min.time.before.relogin]"),
        ("sasl.kerberos.min.time.before.relogin", "abc", True,
         "Invalid value abc for configuration sasl.kerberos.min.time.before.relogin: "
         "Not a number of type LONG"),
        ("ssl.keystore.location", "/k", True,
         "These security configs can be dynamically updated only per-listener using the "
         "listener prefix: [ssl.keystore.location]"),
        ("min.insync.replicas", "2", True,
         "Broker-level min.insync.replicas cannot be altered while ELR is enabled."),
        ("log.retention.ms", None, False, "Null value not supported for : log.retention.ms"),
        ("log.retention.ms", "x", False,
         "Invalid value x for configuration log.retention.ms: Not a number of type LONG"),
        ("log.retention.ms", "0", False,
         "log.retention.ms must be unlimited (-1) or, greater than or equal to 1"),
        ("num.io.threads", "17", False,
         "Dynamic thread count update validation failed for num.io.threads=17, "
         "value should not be greater than double the current value 8"),
        ("num.io.threads", "3", False,
         "Dynamic thread count update validation failed for num.io.threads=3, "
         "value should be at least half the current value 8"),
    ],
)  # fmt: skip
def test_dynamic_changes_kafka_refuses(name, value, per_broker, message):
    broker = BrokerConfig()
    with pytest.raises(ConfigError) as e:
        broker.set_dynamic(name, value, per_broker=per_broker)
    assert str(e.value) == message
    assert broker.dynamic_default_configs == CLUSTER_DEFAULTS
    assert broker.dynamic_broker_configs == {}
    assert broker.version == 0


@pytest.mark.parametrize(
    "value,message",
    [
        ("/data", None), ("*", None), (" * ", None), ("", None), ("/data,/other", None),
        ("/elsewhere", "requirement failed: All entries in cordoned.log.dirs must be present in "
         "log.dirs or log.dir. Missing entries : /elsewhere"),
        ("/b,/data,/a", "requirement failed: All entries in cordoned.log.dirs must be present in "
         "log.dirs or log.dir. Missing entries : /b, /a"),
        ("/data,*", "requirement failed: When cordoned.log.dirs is set to *, it must not "
         "contain other values"),
        ("*,*", "Configuration 'cordoned.log.dirs' values must not be duplicated."),
    ],
)  # fmt: skip
def test_cordoned_log_dirs_must_be_log_dirs(value, message):
    """KIP-1066's rule, checked (with the broker's log dir names) before anything changes."""
    broker = BrokerConfig()
    if message is None:
        broker.alter_dynamic({"cordoned.log.dirs": value}, per_broker=True,
                             served_log_dirs=["/data", "/other"])
        assert broker.dynamic_broker_configs == {"cordoned.log.dirs": value}
        return
    with pytest.raises(ConfigError) as e:
        broker.alter_dynamic({"cordoned.log.dirs": value}, per_broker=True,
                             served_log_dirs=["/data", "/other"])
    assert str(e.value) == message
    assert broker.dynamic_broker_configs == {}


def test_dynamic_configs_kafka_accepts_but_pykafkad_does_not_use():
    """librdkafka 0081 alters sasl.kerberos.min.time.before.relogin; Kafka accepts names it
    does not know at all, at either level."""
    broker = BrokerConfig()
    broker.set_dynamic("sasl.kerberos.min.time.before.relogin", "60000", per_broker=True)
    broker.set_dynamic("listener.name.plaintext.ssl.keystore.location", "/k", per_broker=True)
    broker.set_dynamic("no.such.config", "1")
    assert broker.dynamic_broker_configs == {
        "sasl.kerberos.min.time.before.relogin": "60000",
        "listener.name.plaintext.ssl.keystore.location": "/k"}
    assert broker.dynamic_default_configs == {**CLUSTER_DEFAULTS, "no.such.config": "1"}
    assert [e.name for e in describe_broker_configs(broker, per_broker=False)] == [
        "min.insync.replicas"]
    broker.set_dynamic("min.insync.replicas", "2")
    assert broker["min.insync.replicas"] == 2
    with pytest.raises(ClusterConfigError) as e:
        broker.delete_dynamic("min.insync.replicas")
    assert str(e.value) == "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."


def test_alter_dynamic_is_all_or_nothing_and_can_validate_or_replace():
    broker = BrokerConfig()
    with pytest.raises(ConfigError):
        broker.alter_dynamic({"log.retention.ms": "5", "num.partitions": "2"})
    assert broker.dynamic_default_configs == CLUSTER_DEFAULTS
    broker.alter_dynamic({"log.retention.ms": "5"}, validate_only=True)
    assert broker.dynamic_default_configs == CLUSTER_DEFAULTS
    broker.alter_dynamic({"log.retention.ms": "5", "log.cleaner.threads": "2"})
    with pytest.raises(ClusterConfigError):  # would remove the cluster's min.insync.replicas
        broker.alter_dynamic({"log.segment.bytes": "2097152"}, replace=True)
    broker.alter_dynamic({"log.segment.bytes": "2097152", **CLUSTER_DEFAULTS}, replace=True)
    assert broker.dynamic_default_configs == {"log.segment.bytes": "2097152", **CLUSTER_DEFAULTS}
    assert broker.log_retention_ms == 168 * 3600000 and broker["log.segment.bytes"] == 2097152
    broker.set_dynamic("num.io.threads", "16")
    assert broker["num.io.threads"] == 16


def test_kafkas_unused_broker_configs_are_described_with_their_dynamic_types():
    assert not set(UNUSED_BROKER_CONFIGS) & set(BROKER_CONFIGS)
    # the others are internal or dynamic-only (leader.replication.throttled.rate), which Kafka
    # does not describe either
    for name, type_ in UNUSED_DYNAMIC_CONFIGS.items():
        assert UNUSED_BROKER_CONFIGS.get(name, (type_,))[0] is type_, name
    assert all(is_ignored_broker_config(name) for name in UNUSED_BROKER_CONFIGS)
