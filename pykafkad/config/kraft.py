"""KRaft node configs (process.roles, the controller quorum, inter-broker and replication
settings) with Kafka 4.4's names, defaults, validators and the checks of KafkaConfig's
validateValues, so a cluster's server.properties is refused here with the sentence Kafka uses.

Without ``process.roles`` pykafkad is the single node: the command line adds the settings of a
one-voter combined node (pykafkad/kraft/single_node.py), so the KRaft-only checks never refuse
what the user did not write.  The messages were captured from Kafka 4.4.0's ``kafka.Kafka`` main class
on the same bad properties (the "requirement failed: " prefix of Scala's require is left out).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from pykafkad.config.types import (
    ConfigError,
    ConfigType,
    Importance,
    ValidString,
    at_least,
    define,
)

log = logging.getLogger("pykafkad.config")

BOOLEAN, STRING, INT, LONG, LIST = (
    ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG, ConfigType.LIST)
HIGH, MEDIUM, LOW = Importance.HIGH, Importance.MEDIUM, Importance.LOW

BROKER_ROLE, CONTROLLER_ROLE = "broker", "controller"
ROLES = (BROKER_ROLE, CONTROLLER_ROLE)
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: Utils.HOST_PORT_PATTERN / VALID_HOST_CHARACTERS of kafka-clients
_HOST_PORT = re.compile(r"(?:[0-9a-zA-Z\-%._]*://)?\[?([0-9a-zA-Z\-%._:]*)]?:([0-9]+)")
_VOTERS_FORM = "Each entry should be in the form `{id}@{host}:{port}`."
NON_ROUTABLE_HOST = "0.0.0.0"


def _roles(name: str, value: Any) -> None:
    """ValidList.in("broker", "controller") without empty lists (KRaftConfigs)."""
    if value is not None and not value:
        raise ConfigError(f"Configuration '{name}' must not be empty. Valid values include: "
                          f"[{', '.join(ROLES)}]", name)
    for role in value or ():
        ValidString(ROLES)(name, role)


def parse_voters(entries: tuple[str, ...] | list[str], *, routable: bool = True
                 ) -> dict[int, tuple[str, int]]:
    """QuorumConfig.parseVoterConnections: ``id@host:port`` entries -> {id: (host, port)};
    a repeated id keeps its last address, as Kafka's map does."""
    voters: dict[int, tuple[str, int]] = {}
    name = "controller.quorum.voters"
    for entry in entries:
        parts = [p for p in entry.split("@")]
        while parts and parts[-1] == "":  # Java's split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise ConfigError(f"Invalid configuration value for {name}. {_VOTERS_FORM}", name)
        try:
            voter_id = _java_int(parts[0])
        except ValueError:
            raise ConfigError(
                f"Failed to parse voter ID as an integer from {parts[0]}", name) from None
        m = _HOST_PORT.fullmatch(parts[1])
        if m is None:
            raise ConfigError(f"Failed to parse host name from entry {entry} for the "
                              f"configuration {name}. {_VOTERS_FORM}", name)
        host, port = m.group(1), int(m.group(2))
        if routable and host == NON_ROUTABLE_HOST:
            raise ConfigError(f"Host string ({host}) is not routeable", name)
        voters[voter_id] = (host, port)
    return voters


def parse_bootstrap_servers(entries: tuple[str, ...] | list[str]) -> list[tuple[str, int]]:
    """QuorumConfig.parseBootstrapServers: ``host:port`` entries."""
    name = "controller.quorum.bootstrap.servers"
    servers = []
    for entry in entries:
        m = _HOST_PORT.fullmatch(entry)
        if m is None:
            raise ConfigError(f"Failed to parse host name from {entry} for the configuration "
                              f'{name}. Each entry should be in the form "{{host}}:{{port}}"', name)
        servers.append((m.group(1), int(m.group(2))))
    return servers


def _java_int(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text) or not -(2**31) <= int(text) < 2**31:
        raise ValueError(text)
    return int(text)


def _voters_validator(name: str, value: Any) -> None:
    """ControllerQuorumVotersValidator: parseable; 0.0.0.0 is refused only where a voter is
    connected to."""
    parse_voters(value or (), routable=False)


def _bootstrap_validator(name: str, value: Any) -> None:
    parse_bootstrap_servers(value or ())


KRAFT_DEFS = [
    define("process.roles", LIST, None, _roles, HIGH,
           "The roles this node plays: broker, controller or both; unset: pykafkad's "
           "single-node mode."),
    define("controller.quorum.voters", LIST, "", _voters_validator, HIGH,
           "The static controller quorum: id@host:port,..."),
    define("controller.quorum.bootstrap.servers", LIST, "", _bootstrap_validator, HIGH,
           "Controllers to bootstrap the metadata quorum from: host:port,..."),
    define("controller.quorum.election.timeout.ms", INT, 1000, None, HIGH,
           "Time without a leader before a voter starts an election."),
    define("controller.quorum.fetch.timeout.ms", INT, 2000, at_least(0), HIGH,
           "Time without a successful fetch from the leader before a voter becomes candidate."),
    define("controller.quorum.election.backoff.max.ms", INT, 1000, at_least(0), HIGH,
           "Maximum backoff before a new election."),
    define("controller.quorum.request.timeout.ms", INT, 2000, None, MEDIUM,
           "Time a quorum request waits for its response."),
    define("broker.session.timeout.ms", INT, 9000, None, MEDIUM,
           "Time without a heartbeat after which the controller fences a broker."),
    define("broker.heartbeat.interval.ms", INT, 2000, None, MEDIUM,
           "Time between a broker's heartbeats to the controller."),
    define("inter.broker.listener.name", STRING, None, None, MEDIUM,
           "The listener brokers use to reach each other."),
    define("security.inter.broker.protocol", STRING, "PLAINTEXT", ValidString(SECURITY_PROTOCOLS),
           MEDIUM, "Protocol between brokers when inter.broker.listener.name is unset."),
    define("replica.fetch.wait.max.ms", INT, 500, None, HIGH,
           "Longest wait of a follower's fetch."),
    define("replica.fetch.min.bytes", INT, 1, None, HIGH,
           "Bytes a follower's fetch waits for."),
    define("replica.fetch.backoff.ms", INT, 1000, at_least(0), MEDIUM,
           "Sleep after a failed follower fetch."),
    define("replica.fetch.response.max.bytes", INT, 10485760, at_least(0), MEDIUM,
           "Bytes a follower's whole fetch response may carry."),
    define("replica.socket.timeout.ms", INT, 30000, None, HIGH,
           "Socket timeout of follower fetches."),
    define("replica.high.watermark.checkpoint.interval.ms", LONG, 5000, None, HIGH,
           "How often high watermarks are saved to replication-offset-checkpoint."),
    define("auto.leader.rebalance.enable", BOOLEAN, True, None, HIGH,
           "Move leadership back to the preferred replicas."),
    define("leader.imbalance.check.interval.seconds", LONG, 300, at_least(1), HIGH,
           "How often leader imbalance is checked."),
    define("unclean.leader.election.interval.ms", LONG, 300000, at_least(1), MEDIUM,
           "How often the controller tries unclean elections for leaderless partitions.",
           internal=True),
    define("metadata.max.idle.interval.ms", INT, 500, at_least(0), LOW,
           "How often an idle active controller appends a NoOpRecord to the metadata log."),
    define("metadata.log.dir", STRING, None, None, HIGH,
           "Where the metadata log lives; unset: the first of log.dirs."),
    define("metadata.log.segment.bytes", INT, 1073741824, at_least(12), HIGH,
           "Size of a metadata log segment (at least 8 MiB)."),
    define("metadata.log.segment.ms", LONG, 604800000, None, HIGH,
           "Age after which a metadata log segment is rolled."),
    define("metadata.max.retention.bytes", LONG, 104857600, None, HIGH,
           "Metadata log bytes kept behind the latest snapshot; -1: no limit."),
    define("metadata.max.retention.ms", LONG, 604800000, None, HIGH,
           "Age of metadata log segments and snapshots kept behind the latest one; -1: no limit."),
    define("metadata.log.max.record.bytes.between.snapshots", LONG, 20971520, at_least(1), HIGH,
           "Metadata log bytes after which a new snapshot is written."),
    define("metadata.log.max.snapshot.interval.ms", LONG, 3600000, at_least(0), HIGH,
           "Longest time between metadata snapshots while the log grows; 0: no limit."),
]  # fmt: skip

#: Required once process.roles is set (Kafka: no default value).
_REQUIRED_IN_KRAFT = ("node.id", "controller.listener.names")


def check_required(given: Mapping[str, Any]) -> None:
    """ConfigDef's missing-value check, which Kafka runs before validateValues."""
    roles = given.get("process.roles")
    if roles is None:
        return
    for name in _REQUIRED_IN_KRAFT:
        if name not in given:
            raise ConfigError(
                f'Missing required configuration "{name}" which has no default value.', name)


def scala_set(ids) -> str:
    return "Set(" + ", ".join(str(i) for i in sorted(ids)) + ")"


def check_node(v: Mapping[str, Any], given: set[str], listeners, protocols: Mapping[str, str],
               controller_names: list[str]) -> None:
    """KafkaConfig.validateValues' KRaft part, for ``v`` with process.roles set."""
    roles = set(v["process.roles"])
    node_id = v["node.id"]
    voter_ids = set(parse_voters(v["controller.quorum.voters"], routable=False))
    listener_names = [e.listener_name for e in listeners]
    controller_listeners = [n for n in listener_names if n in controller_names]
    if not voter_ids and not v["controller.quorum.bootstrap.servers"]:
        raise ConfigError(
            "If using process.roles, either controller.quorum.bootstrap.servers must contain the "
            "set of bootstrap controllers or controller.quorum.voters must contain a parseable "
            "set of controllers.", "controller.quorum.voters")
    if roles == {BROKER_ROLE}:
        if node_id in voter_ids:
            raise ConfigError(
                "If process.roles contains just the 'broker' role, the node id "
                f"{node_id} must not be included in the set of voters controller.quorum.voters="
                f"{scala_set(voter_ids)}", "controller.quorum.voters")
        if controller_listeners:
            raise ConfigError(
                "controller.listener.names must not contain a value appearing in the 'listeners' "
                "configuration when running KRaft with just the broker role",
                "controller.listener.names")
        for name in controller_names:
            if name not in protocols:
                raise ConfigError(
                    f"Controller listener with name {name} defined in controller.listener.names "
                    "not found in listener.security.protocol.map  (an explicit security mapping "
                    "for each controller listener is required if listener.security.protocol.map "
                    "is non-empty, or if there are security protocols other than PLAINTEXT in use)",
                    "controller.listener.names")
        return
    if roles == {CONTROLLER_ROLE} and len(controller_listeners) != len(listener_names):
        raise ConfigError(
            "The listeners config must only contain KRaft controller listeners from "
            "controller.listener.names when process.roles=controller", "listeners")
    if voter_ids and node_id not in voter_ids:
        raise ConfigError(
            "If process.roles contains the 'controller' role, the node id "
            f"{node_id} must be included in the set of voters controller.quorum.voters="
            f"{scala_set(voter_ids)}", "controller.quorum.voters")
    if not controller_listeners:
        raise ConfigError(
            "controller.listener.names must contain at least one value appearing in the "
            "'listeners' configuration when running the KRaft controller role",
            "controller.listener.names")
    if not all(n in listener_names for n in controller_names):
        raise ConfigError(
            "controller.listener.names must only contain values appearing in the 'listeners' "
            "configuration when running the KRaft controller role", "controller.listener.names")


def inter_broker_listener_name(v: Mapping[str, Any], given: set[str],
                               protocols: Mapping[str, str]) -> str:
    """KafkaConfig.getInterBrokerListenerNameAndSecurityProtocol."""
    name = v["inter.broker.listener.name"]
    if name is not None:
        if "security.inter.broker.protocol" in given:
            raise ConfigError("Only one of inter.broker.listener.name and "
                              "security.inter.broker.protocol should be set.",
                              "inter.broker.listener.name")
        name = name.upper()
        if name not in protocols:
            raise ConfigError(f"Listener with name {name} defined in inter.broker.listener.name "
                              "not found in listener.security.protocol.map.",
                              "inter.broker.listener.name")
        return name
    return v["security.inter.broker.protocol"]


def check_inter_broker(name: str, advertised_names: list[str]) -> None:
    if name not in advertised_names:
        raise ConfigError(
            "inter.broker.listener.name must be a listener name defined in advertised.listeners. "
            "The valid options based on currently configured listeners are "
            f"{','.join(advertised_names)}", "inter.broker.listener.name")


def check_replica_fetch(v: Mapping[str, Any]) -> None:
    wait = v["replica.fetch.wait.max.ms"]
    if wait > v["replica.socket.timeout.ms"]:
        raise ConfigError("replica.socket.timeout.ms should always be at least "
                          "replica.fetch.wait.max.ms to prevent unnecessary socket timeouts",
                          "replica.fetch.wait.max.ms")
    if wait > v["replica.lag.time.max.ms"]:
        raise ConfigError("replica.fetch.wait.max.ms should always be less than or equal to "
                          "replica.lag.time.max.ms to prevent frequent changes in ISR",
                          "replica.fetch.wait.max.ms")


def warn_heartbeat(v: Mapping[str, Any]) -> None:
    """Kafka only logs this one (at ERROR) and starts anyway."""
    hb, session = v["broker.heartbeat.interval.ms"], v["broker.session.timeout.ms"]
    if hb > session / 2:
        log.error(
            "broker.heartbeat.interval.ms (%d ms) must be less than or equal to half of the "
            "broker.session.timeout.ms (%d ms). The broker.session.timeout.ms is configured on "
            "controller. The broker.heartbeat.interval.ms is configured on broker. If a broker "
            "doesn't send heartbeat request within broker.session.timeout.ms, it loses broker "
            "lease. Please increase broker.session.timeout.ms or decrease "
            "broker.heartbeat.interval.ms.", hb, session)
