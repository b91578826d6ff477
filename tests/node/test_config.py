"""KRaft node configs: Kafka 4.4's validation messages (captured from its ``kafka.Kafka`` on the
same properties, and compared live where Java runs), the parsed views the cluster areas read,
and how ``pykafkad`` exits on them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pykafkad.config import BrokerConfig, ConfigError, Endpoint
from tests.integration.clients import needs_java

ROOT = Path(__file__).resolve().parents[2]

#: a valid combined node, to which each case applies its changes (None removes a key)
BASE = {
    "process.roles": "broker,controller", "node.id": "1",
    "controller.quorum.voters": "1@127.0.0.1:39193",
    "listeners": "PLAINTEXT://127.0.0.1:39192,CONTROLLER://127.0.0.1:39193",
    "controller.listener.names": "CONTROLLER",
}

#: (changes, Kafka 4.4.0's message); "requirement failed: " left out, as pykafkad prints
CASES = [
    ({"process.roles": "foo"},
     "Invalid value foo for configuration process.roles: String must be one of: broker, controller"),
    ({"process.roles": ""},
     "Configuration 'process.roles' must not be empty. Valid values include: [broker, controller]"),
    ({"node.id": None}, 'Missing required configuration "node.id" which has no default value.'),
    ({"node.id": "-1"}, "Invalid value -1 for configuration node.id: Value must be at least 0"),
    ({"controller.listener.names": None},
     'Missing required configuration "controller.listener.names" which has no default value.'),
    ({"controller.quorum.voters": ""},
     "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of "
     "bootstrap controllers or controller.quorum.voters must contain a parseable set of "
     "controllers."),
    ({"controller.quorum.voters": "localhost:9093"},
     "Invalid configuration value for controller.quorum.voters. Each entry should be in the form "
     "`{id}@{host}:{port}`."),
    ({"controller.quorum.voters": "x@localhost:9093"},
     "Failed to parse voter ID as an integer from x"),
    ({"controller.quorum.voters": "1@localhost"},
     "Failed to parse host name from entry 1@localhost for the configuration "
     "controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."),
    ({"controller.quorum.voters": None, "controller.quorum.bootstrap.servers": "localhost"},
     "Failed to parse host name from localhost for the configuration "
     'controller.quorum.bootstrap.servers. Each entry should be in the form "{host}:{port}"'),
    ({"controller.quorum.voters": "2@127.0.0.1:39193"},
     "If process.roles contains the 'controller' role, the node id 1 must be included in the set "
     "of voters controller.quorum.voters=Set(2)"),
    ({"process.roles": "broker", "listeners": "PLAINTEXT://127.0.0.1:39192"},
     "If process.roles contains just the 'broker' role, the node id 1 must not be included in the "
     "set of voters controller.quorum.voters=Set(1)"),
    ({"process.roles": "broker", "controller.quorum.voters": "2@127.0.0.1:39193"},
     "controller.listener.names must not contain a value appearing in the 'listeners' "
     "configuration when running KRaft with just the broker role"),
    ({"process.roles": "broker", "controller.quorum.voters": "2@127.0.0.1:39193",
      "listeners": "PLAINTEXT://127.0.0.1:39192",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"},
     "Controller listener with name CONTROLLER defined in controller.listener.names not found in "
     "listener.security.protocol.map  (an explicit security mapping for each controller listener "
     "is required if listener.security.protocol.map is non-empty, or if there are security "
     "protocols other than PLAINTEXT in use)"),
    ({"process.roles": "controller"},
     "The listeners config must only contain KRaft controller listeners from "
     "controller.listener.names when process.roles=controller"),
    ({"controller.listener.names": "CTRL",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,CTRL:PLAINTEXT"},
     "controller.listener.names must contain at least one value appearing in the 'listeners' "
     "configuration when running the KRaft controller role"),
    ({"controller.listener.names": "CTRL"},
     "Error creating broker listeners from '[PLAINTEXT://127.0.0.1:39192, "
     "CONTROLLER://127.0.0.1:39193]': No security protocol defined for listener CONTROLLER"),
    ({"inter.broker.listener.name": "FOO"},
     "Listener with name FOO defined in inter.broker.listener.name not found in "
     "listener.security.protocol.map."),
    ({"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
     "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."),
    ({"security.inter.broker.protocol": "SSL"},
     "inter.broker.listener.name must be a listener name defined in advertised.listeners. The "
     "valid options based on currently configured listeners are PLAINTEXT"),
    ({"replica.fetch.wait.max.ms": "40000"},
     "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent "
     "unnecessary socket timeouts"),
    ({"controller.quorum.election.timeout.ms": "abc"},
     "Invalid value abc for configuration controller.quorum.election.timeout.ms: Not a number of "
     "type INT"),
    ({"controller.quorum.fetch.timeout.ms": "-1"},
     "Invalid value -1 for configuration controller.quorum.fetch.timeout.ms: Value must be at "
     "least 0"),
    ({"num.replica.fetchers": "0"},
     "Invalid value 0 for configuration num.replica.fetchers: Value must be at least 1"),
    ({"leader.imbalance.check.interval.seconds": "0"},
     "Invalid value 0 for configuration leader.imbalance.check.interval.seconds: Value must be "
     "at least 1"),
    ({"transaction.state.log.min.isr": "0"},
     "Invalid value 0 for configuration transaction.state.log.min.isr: Value must be at least 1"),
    ({"group.consumer.migration.policy": "sideways"},
     "Invalid value sideways for configuration group.consumer.migration.policy: String must be "
     "one of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL"),
    ({"group.streams.num.standby.replicas": "3"},
     "group.streams.num.standby.replicas must be less than or equal to "
     "group.streams.max.standby.replicas"),
    ({"group.share.partition.max.record.locks": "50"},
     "Invalid value 50 for configuration group.share.partition.max.record.locks: Value must be "
     "at least 100"),
    ({"group.share.partition.max.record.locks": "5000"},
     "group.share.max.partition.max.record.locks must be greater than or equal to "
     "group.share.partition.max.record.locks"),
    ({"group.share.min.partition.max.record.locks": "1500",
      "group.share.partition.max.record.locks": "1000"},
     "group.share.partition.max.record.locks must be greater than or equal to "
     "group.share.min.partition.max.record.locks"),
]  # fmt: skip

#: a few of CASES asked of Apache Kafka itself (one JVM each, ~1 s)
LIVE = [0, 2, 7, 10, 12, 17, 19, len(CASES) - 5, len(CASES) - 4, len(CASES) - 3,
        len(CASES) - 2, len(CASES) - 1]


def props(changes: dict) -> dict[str, str]:
    out = dict(BASE)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


@pytest.mark.parametrize(("changes", "message"), CASES)
def test_bad_kraft_configs_are_refused_with_kafkas_message(changes, message):
    with pytest.raises(ConfigError) as e:
        BrokerConfig(props(changes))
    assert str(e.value) == message


@needs_java
def test_kafka_refuses_the_same_configs_with_the_same_message(tmp_path):
    from compat.kafka_broker import kafka_config_error

    for i in LIVE:
        changes, message = CASES[i]
        given = {**props(changes), "log.dirs": str(tmp_path / f"logs-{i}")}
        status, kafka_message = kafka_config_error(given, tmp_path / f"case-{i}")
        assert (status, kafka_message) == (1, message), changes
    # a config both accept stops at the storage check, with the line pykafkad prints too
    status, kafka_message = kafka_config_error(
        {**BASE, "log.dirs": str(tmp_path / "unformatted")}, tmp_path / "ok")
    assert (status, kafka_message) == (1, "No readable meta.properties files found.")


def test_parsed_views_for_the_cluster_areas():
    config = BrokerConfig({
        **BASE, "controller.quorum.voters": "1@127.0.0.1:39193,2@h2:9093,3@[::1]:9095",
        "listeners": "PLAINTEXT://127.0.0.1:39192,INTERNAL://:39194,CONTROLLER://127.0.0.1:39193",
        "advertised.listeners": "PLAINTEXT://a:1,INTERNAL://b:2",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,"
                                          "CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
    })
    assert config.node_roles == {"broker", "controller"}
    assert config.quorum_voters == [(1, "127.0.0.1", 39193), (2, "h2", 9093), (3, "::1", 9095)]
    assert config.controller_listener_names == ["CONTROLLER"]
    assert [e.listener_name for e in config.listeners] == ["PLAINTEXT", "INTERNAL", "CONTROLLER"]
    assert config.controller_listeners == [
        Endpoint("CONTROLLER", "127.0.0.1", 39193, "PLAINTEXT")]
    assert config.advertised_listeners == [Endpoint("PLAINTEXT", "a", 1, "PLAINTEXT"),
                                           Endpoint("INTERNAL", "b", 2, "PLAINTEXT")]
    assert config.inter_broker_listener == Endpoint("INTERNAL", "b", 2, "PLAINTEXT")
    assert config.advertised_controller_listeners == config.controller_listeners
    moved = BrokerConfig({**BASE, "advertised.listeners":
                          "PLAINTEXT://a:1,CONTROLLER://c:3"})
    assert moved.advertised_controller_listeners == [
        Endpoint("CONTROLLER", "c", 3, "PLAINTEXT")]
    assert moved.advertised_listeners == [Endpoint("PLAINTEXT", "a", 1, "PLAINTEXT")]
    single = BrokerConfig({})
    assert single.node_roles == frozenset() and not single.is_kraft
    assert single.quorum_voters == []


def test_heartbeat_longer_than_half_the_session_is_only_logged(caplog):
    config = BrokerConfig({**BASE, "broker.heartbeat.interval.ms": "5000"})
    assert config["broker.heartbeat.interval.ms"] == 5000
    assert "broker.heartbeat.interval.ms (5000 ms) must be less than or equal to half of the " \
           "broker.session.timeout.ms (9000 ms)." in caplog.text


def run_pykafkad(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pykafkad", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def write(path: Path, values: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def test_a_bad_kraft_config_exits_2_with_one_line(tmp_path):
    bad = write(tmp_path / "server.properties", props({"controller.quorum.voters": "1@localhost"}))
    result = run_pykafkad("--config", str(bad))
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"pykafkad: {CASES[8][1]}"


def test_an_unformatted_node_exits_2_as_kafka_says(tmp_path):
    path = write(tmp_path / "server.properties",
                 {**BASE, "log.dirs": str(tmp_path / "data")})
    result = run_pykafkad("--config", str(path))
    assert (result.returncode, result.stderr.strip()) == (
        2, "pykafkad: No readable meta.properties files found.")


def test_an_ssl_listener_without_a_key_store_is_refused(tmp_path):
    path = write(tmp_path / "server.properties", {
        "listeners": "SSL://127.0.0.1:0", "listener.security.protocol.map": "SSL:SSL",
        "log.dirs": str(tmp_path / "data")})
    result = run_pykafkad("--config", str(path))
    assert result.returncode == 2, result.stderr
    assert "JKS key stores are not read by pykafkad" in result.stderr


def test_voters_parse_as_kafkas_quorum_config():
    from pykafkad.config.kraft import parse_voters

    # the config accepts a non-routable voter (Kafka's validator does); connecting refuses it
    config = BrokerConfig({**BASE, "controller.quorum.voters": "1@0.0.0.0:9093,1@h:9094"})
    assert config.quorum_voters == [(1, "h", 9094)]  # a repeated id: the last address
    with pytest.raises(ConfigError, match=r"^Host string \(0.0.0.0\) is not routeable$"):
        parse_voters(["1@0.0.0.0:9093"])
