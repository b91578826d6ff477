"""The broker's configuration: static (server.properties + overrides) and dynamic (AlterConfigs).

Precedence, as in Kafka: per-broker dynamic > cluster-wide dynamic default > static > default,
per key; unit synonyms (``log.retention.ms`` > ``.minutes`` > ``.hours``) are resolved on the
merged result, so a dynamic ``log.retention.ms`` beats a static ``log.retention.hours``.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pykafkad.config.broker_defs import (
    BROKER_CONFIGS,
    THREAD_POOL_CONFIGS,
    is_ignored_broker_config,
)
from pykafkad.config.broker_dynamic import (
    CORDONED_LOG_DIRS,
    LISTENER_ONLY_CONFIGS,
    UNUSED_DYNAMIC_CONFIGS,
    check_cordoned_log_dirs,
    is_per_broker,
    listener_base_name,
)
from pykafkad.config.kraft import (
    BROKER_ROLE,
    check_inter_broker,
    check_node,
    check_replica_fetch,
    check_required,
    inter_broker_listener_name,
    parse_bootstrap_servers,
    parse_voters,
    warn_heartbeat,
)
from pykafkad.config.properties import read_properties
from pykafkad.config.topic_defs import TOPIC_BROKER_SYNONYMS, TOPIC_CONFIGS
from pykafkad.config.types import ConfigError, parse_type


class ClusterConfigError(ConfigError):
    """A change Kafka's controller refuses: answered INVALID_CONFIG, not INVALID_REQUEST."""


#: Kafka 4.x keeps this one as a cluster-level dynamic config (eligible leader replicas)
ELR_CONFIG = "min.insync.replicas"
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_LISTENER_URI = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
_CSV = re.compile(r"\s*,\s*")
#: Listeners whose changes pykafkad cannot apply to bound sockets.
_NOT_LIVE_UPDATABLE = frozenset({"listeners", "listener.security.protocol.map"})


@dataclass(frozen=True)
class Endpoint:
    """One listener: ``host`` None means all interfaces."""

    listener_name: str
    host: str | None
    port: int
    security_protocol: str


class BrokerConfig(Mapping[str, Any]):
    """Typed, validated broker configs: ``config["num.partitions"]`` -> 1.

    Iterating yields every config name pykafkad defines. Values are Python types: bool, int,
    float, str, tuple of str (LIST), Password; None where Kafka's value is null.
    """

    def __init__(self, static: Mapping[str, Any] | None = None):
        known: dict[str, Any] = {}
        ignored: dict[str, Any] = {}
        for name, value in (static or {}).items():
            if name in BROKER_CONFIGS:
                known[name] = value
            elif is_ignored_broker_config(name):
                ignored[name] = value
            else:
                raise ConfigError(
                    f"Unknown broker config '{name}': it was supplied but isn't a known config.",
                    name,
                )
        if "process.roles" in known:
            BROKER_CONFIGS["process.roles"].parse(known["process.roles"])
            check_required(known)
        for a, b in (("broker.id", "node.id"), ("node.id", "broker.id")):
            if a in known and b not in known:
                known[b] = known[a]
        self._static = known
        self._ignored = ignored
        self._dynamic_default: dict[str, Any] = {}
        self._dynamic_broker: dict[str, Any] = {}
        self._values = _resolve(known, {}, {})
        _check_streams_standbys(self._values, ignored)
        _check_share_record_locks(ignored)
        # what Kafka 4.x's controller writes when the cluster is formatted (ELR on)
        self._dynamic_default[ELR_CONFIG] = BROKER_CONFIGS[ELR_CONFIG].to_string(
            self._values[ELR_CONFIG])
        #: Bumped by every dynamic change, so holders of derived settings can tell.
        self.version = 0
        if self.node_roles:
            warn_heartbeat(self._values)

    @classmethod
    def from_sources(
        cls, properties_path: Path | None, overrides: Mapping[str, str] | None = None
    ) -> BrokerConfig:
        """server.properties (if any), then ``overrides`` (``--set key=value``) on top.

        Unlike Kafka, which only logs a warning, an unknown key raises ConfigError naming it, so
        the command can exit with that message. Kafka broker configs that pykafkad does not use
        (``process.roles``, ``zookeeper.*``, ``ssl.*`` ...) are accepted and kept in ``ignored``.
        """
        props: dict[str, Any] = read_properties(properties_path) if properties_path else {}
        props.update(overrides or {})
        return cls(props)

    # --- reading

    def __getitem__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise KeyError(f"{name} is not a broker config pykafkad defines") from None

    def __iter__(self) -> Iterator[str]:
        return iter(BROKER_CONFIGS)

    def __len__(self) -> int:
        return len(BROKER_CONFIGS)

    def is_set(self, name: str) -> bool:
        """Given at startup or dynamically (as opposed to Kafka's default)."""
        return name in self._static or name in self._dynamic_default or name in self._dynamic_broker

    @property
    def explicit(self) -> dict[str, Any]:
        """The known configs given at startup, as given (after the node.id/broker.id copy)."""
        return dict(self._static)

    @property
    def ignored(self) -> dict[str, Any]:
        """Kafka broker configs given at startup that pykafkad accepts but does not use."""
        return dict(self._ignored)

    @property
    def dynamic_default_configs(self) -> dict[str, str]:
        """Cluster-wide dynamic defaults (AlterConfigs on broker resource "")."""
        return dict(self._dynamic_default)

    @property
    def dynamic_broker_configs(self) -> dict[str, str]:
        """Per-broker dynamic configs (AlterConfigs on broker resource "<node.id>")."""
        return dict(self._dynamic_broker)

    @property
    def node_id(self) -> int:
        return self._values["node.id"]

    def record_data_dir(self, path: str) -> None:
        """The directory pykafkad serves (``--data-dir``, a test's directory or the default)
        is what Kafka would describe as the static ``log.dirs``, unless that names it already
        (the first of several, JBOD)."""
        listed = _log_dirs(self._values)
        if listed == [path] or (listed and os.path.realpath(listed[0]) == os.path.realpath(path)):
            return
        self._static["log.dirs"] = path
        self._values = _resolve(self._static, self._dynamic_default, self._dynamic_broker)

    @property
    def log_dirs(self) -> list[str]:
        return _log_dirs(self._values)

    @property
    def listeners(self) -> list[Endpoint]:
        return _listeners(self._values, self._merged_names())

    @property
    def broker_listeners(self) -> list[Endpoint]:
        """The listeners to serve clients on: listeners minus controller.listener.names."""
        controllers = _controller_names(self._values)
        return [e for e in self.listeners if e.listener_name not in controllers]

    @property
    def advertised_listeners(self) -> list[Endpoint]:
        """What Metadata advertises: advertised.listeners or listeners, minus controller ones;
        none on a controller-only node."""
        if self.is_kraft and BROKER_ROLE not in self.node_roles:
            return []
        return _advertised(self._values, self._merged_names())

    # --- the node's parsed view (KRaft): what the raft, controller and replica areas read

    @property
    def node_roles(self) -> frozenset[str]:
        """process.roles as a set of "broker" / "controller"; empty in single-node mode."""
        return frozenset(self._values["process.roles"] or ())

    @property
    def is_kraft(self) -> bool:
        return bool(self._values["process.roles"])

    @property
    def quorum_voters(self) -> list[tuple[int, str, int]]:
        """controller.quorum.voters as (id, host, port), in the order given (a repeated id
        keeps its last address; connecting to 0.0.0.0 is for the quorum to refuse, as
        Kafka's QuorumConfig.parseVoterConnections does)."""
        voters = parse_voters(self._values["controller.quorum.voters"], routable=False)
        return [(node_id, host, port) for node_id, (host, port) in voters.items()]

    @property
    def quorum_bootstrap_servers(self) -> list[tuple[str, int]]:
        return parse_bootstrap_servers(self._values["controller.quorum.bootstrap.servers"])

    @property
    def controller_listener_names(self) -> list[str]:
        return _controller_names(self._values)

    def listener_security_protocol(self, listener_name: str) -> str:
        """The security protocol ``listener.security.protocol.map`` gives a listener name
        (PLAINTEXT when it names none)."""
        protocols = _protocol_map(self._values, self._merged_names())
        return protocols.get(listener_name.upper(), "PLAINTEXT")

    @property
    def controller_listeners(self) -> list[Endpoint]:
        """The bound listeners that serve the controller APIs (``listeners`` order)."""
        names = _controller_names(self._values)
        return [e for e in self.listeners if e.listener_name in names]

    @property
    def advertised_controller_listeners(self) -> list[Endpoint]:
        """What this controller tells its peers and brokers (KIP-853): a controller listener's
        advertised.listeners entry when there is one, else its ``listeners`` entry."""
        names = self._merged_names()
        advertised = {}
        if self._values["advertised.listeners"] is not None:
            advertised = {e.listener_name: e for e in _parse_endpoints(
                "advertised.listeners", self._values["advertised.listeners"],
                _protocol_map(self._values, names), False)}
        return [advertised.get(e.listener_name, e) for e in self.controller_listeners]

    @property
    def inter_broker_listener(self) -> Endpoint | None:
        """The advertised listener brokers reach each other on (inter.broker.listener.name, or
        the one named after security.inter.broker.protocol); None on a controller-only node."""
        if BROKER_ROLE not in self.node_roles and self.is_kraft:
            return None
        names = self._merged_names()
        name = inter_broker_listener_name(self._values, names,
                                          _protocol_map(self._values, names))
        return next((e for e in self.advertised_listeners if e.listener_name == name), None)

    def check_served_listeners(self) -> None:
        """Checks each listener's ssl.* / sasl.* settings (key stores readable, mechanisms
        served, JAAS users given) before anything starts: ConfigError when not."""
        from pykafkad.security.listener import ListenerSecurity

        for e in self.listeners:
            ListenerSecurity.from_config(self, e.listener_name, e.security_protocol)

    @property
    def log_retention_ms(self) -> int:
        return _topic_default(self._values, "retention.ms")

    @property
    def log_roll_ms(self) -> int:
        return _topic_default(self._values, "segment.ms")

    @property
    def log_roll_jitter_ms(self) -> int:
        return _topic_default(self._values, "segment.jitter.ms")

    @property
    def log_flush_interval_ms(self) -> int:
        return _topic_default(self._values, "flush.ms")

    def topic_default(self, topic_config: str) -> Any:
        """The value a topic without an override gets: its broker synonym's, else Kafka's."""
        if topic_config not in TOPIC_CONFIGS:
            raise ConfigError(f"Unknown topic config name: {topic_config}", topic_config)
        return _topic_default(self._values, topic_config)

    # --- dynamic changes (AlterConfigs / IncrementalAlterConfigs on the broker resource)

    def set_dynamic(self, name: str, value: str, *, per_broker: bool = False) -> None:
        """Sets one dynamic config; ``per_broker`` False is the cluster-wide default level."""
        self.alter_dynamic({name: value}, per_broker=per_broker)

    def delete_dynamic(self, name: str, *, per_broker: bool = False) -> None:
        """Removes a dynamic config; like Kafka, removing one that is not set is no error."""
        self.alter_dynamic(delete=(name,), per_broker=per_broker)

    def alter_dynamic(
        self,
        set_configs: Mapping[str, str | None] | None = None,
        delete: Iterable[str] = (),
        *,
        per_broker: bool = False,
        replace: bool = False,
        validate_only: bool = False,
        served_log_dirs: Iterable[str] | None = None,
    ) -> None:
        """Applies a whole alteration or nothing. ``replace`` is legacy AlterConfigs: the level's
        dynamic configs become exactly ``set_configs``.  ``served_log_dirs`` are the names
        ``cordoned.log.dirs`` may use (the running broker's log dir).

        Kafka answers these errors with INVALID_REQUEST (not INVALID_CONFIG) for broker resources,
        except ClusterConfigError (the controller's checks).
        """
        set_configs = dict(set_configs or {})
        _check_dynamic_names(set_configs, per_broker)
        cordoned = set_configs.get(CORDONED_LOG_DIRS)
        if cordoned is not None and served_log_dirs is not None:
            check_cordoned_log_dirs(cordoned, served_log_dirs)
        current = self._dynamic_broker if per_broker else self._dynamic_default
        new = {} if replace else dict(current)
        for name in delete:
            new.pop(name, None)
        new.update(set_configs)
        touched = set(set_configs) | set(delete)
        if replace:
            touched |= set(current)
        _check_elr(touched, current, new, per_broker)
        if per_broker:
            values = _resolve(self._static, self._dynamic_default, new)
        else:
            values = _resolve(self._static, new, self._dynamic_broker)
        _check_thread_pools(self._values, values)
        if validate_only:
            return
        current.clear()
        current.update(new)
        self._values = values
        self.version += 1

    def _merged_names(self) -> set[str]:
        return set(self._static) | set(self._dynamic_default) | set(self._dynamic_broker)


def _check_dynamic_names(set_configs: Mapping[str, str | None], per_broker: bool) -> None:
    """DynamicBrokerConfig.validateConfigs: Kafka checks only the names it knows."""
    nulls = [name for name, value in set_configs.items() if value is None]
    if nulls:
        raise ConfigError("Null value not supported for : " + ", ".join(nulls), nulls[0])
    fixed = [name for name in set_configs if _is_static_only(name)]
    if fixed:
        raise ConfigError(f"Cannot update these configs dynamically: {_java_set(fixed)}", fixed[0])
    listener_only = [name for name in set_configs if name in LISTENER_ONLY_CONFIGS]
    if listener_only:
        raise ConfigError(
            "These security configs can be dynamically updated only per-listener using the "
            f"listener prefix: {_java_set(listener_only)}", listener_only[0])
    for name, value in set_configs.items():
        if name in BROKER_CONFIGS:
            BROKER_CONFIGS[name].parse(value)
        elif name in UNUSED_DYNAMIC_CONFIGS:
            parse_type(name, value, UNUSED_DYNAMIC_CONFIGS[name])
    if not per_broker:
        only_per_broker = [name for name in set_configs if is_per_broker(name)]
        if only_per_broker:
            raise ConfigError(
                "Cannot update these configs at default cluster level, broker id must be "
                f"specified: {_java_set(only_per_broker)}",
                only_per_broker[0],
            )
    live = [name for name in set_configs if name in _NOT_LIVE_UPDATABLE]
    if live:
        raise ConfigError(f"pykafkad cannot change {live[0]} on a running broker", live[0])


def _is_static_only(name: str) -> bool:
    """A broker config Kafka knows but does not let change on a running broker."""
    if name in BROKER_CONFIGS:
        return BROKER_CONFIGS[name].read_only
    if name in UNUSED_DYNAMIC_CONFIGS or listener_base_name(name) is not None:
        return False
    return is_ignored_broker_config(name)


def _check_elr(touched: set[str], old: Mapping[str, Any], new: Mapping[str, Any],
               per_broker: bool) -> None:
    """Kafka 4.x (ELR on): min.insync.replicas lives at the cluster level only."""
    if ELR_CONFIG not in touched:
        return
    if per_broker:
        raise ClusterConfigError(
            f"Broker-level {ELR_CONFIG} cannot be altered while ELR is enabled.", ELR_CONFIG)
    if ELR_CONFIG in old and ELR_CONFIG not in new:
        raise ClusterConfigError(
            f"Cluster-level {ELR_CONFIG} cannot be removed while ELR is enabled.", ELR_CONFIG)


def _java_set(names: list[str]) -> str:
    return "[" + ", ".join(sorted(names)) + "]"


def _check_thread_pools(old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """DynamicThreadPool.validateReconfiguration: at most halve or double at a time."""
    for name in THREAD_POOL_CONFIGS:
        before, after = old[name], new[name]
        if after == before:
            continue
        msg = f"Dynamic thread count update validation failed for {name}={after}"
        if after <= 0:
            raise ConfigError(f"{msg}, value should be at least 1", name)
        if after < before // 2:
            raise ConfigError(
                f"{msg}, value should be at least half the current value {before}", name
            )
        if after > before * 2:
            raise ConfigError(
                f"{msg}, value should not be greater than double the current value {before}", name
            )


def _resolve(*levels: Mapping[str, Any]) -> dict[str, Any]:
    """Parses the merged levels (lowest precedence first) and checks what Kafka checks."""
    merged: dict[str, Any] = {}
    for level in levels:
        merged.update(level)
    values = {
        name: d.parse(merged[name]) if name in merged else d.default
        for name, d in BROKER_CONFIGS.items()
    }
    _check(values, set(merged))
    return values


def _check_streams_standbys(values: Mapping[str, Any], ignored: Mapping[str, Any]) -> None:
    """Kafka's GroupCoordinatorConfig: the broker's standby count within the groups' maximum
    (``group.streams.max.standby.replicas``, a config pykafkad only stores)."""
    raw = ignored.get("group.streams.max.standby.replicas", 2)
    try:
        most = int(raw)
    except (TypeError, ValueError):
        return
    if values["group.streams.num.standby.replicas"] > most:
        raise ConfigError("group.streams.num.standby.replicas must be less than or equal to "
                          "group.streams.max.standby.replicas",
                          "group.streams.num.standby.replicas")


#: Kafka's ShareGroupConfig: the share-partition record lock configs, (default, lowest,
#: highest allowed), pykafkad storing them as given
_RECORD_LOCKS = {
    "group.share.partition.max.record.locks": (2000, 100, 10000),
    "group.share.max.partition.max.record.locks": (4000, 2000, 10000),
    "group.share.min.partition.max.record.locks": (100, 100, 2000),
}


def _check_share_record_locks(ignored: Mapping[str, Any]) -> None:
    """Kafka's ShareGroupConfig: each record lock limit within its range, and the broker's
    limit within the groups' bounds, refused at start with Kafka's messages."""
    values = {}
    for name, (default, lo, hi) in _RECORD_LOCKS.items():
        raw = ignored.get(name, default)
        try:
            value = int(str(raw).strip())
        except ValueError:
            return
        if value < lo:
            raise ConfigError(f"Invalid value {raw} for configuration {name}: Value must be at "
                              f"least {lo}", name)
        if value > hi:
            raise ConfigError(f"Invalid value {raw} for configuration {name}: Value must be no "
                              f"more than {hi}", name)
        values[name] = value
    limit = "group.share.partition.max.record.locks"
    for big, small in (("group.share.max.partition.max.record.locks", limit),
                       (limit, "group.share.min.partition.max.record.locks")):
        if values[big] < values[small]:
            raise ConfigError(f"{big} must be greater than or equal to {small}", big)


def _check(v: Mapping[str, Any], given: set[str]) -> None:
    if v["node.id"] != v["broker.id"]:
        raise ConfigError("You must set `node.id` to the same value as `broker.id`.", "node.id")
    if _topic_default(v, "segment.ms") < 1:
        raise ConfigError("log.roll.ms must be greater than or equal to 1", "log.roll.ms")
    if _topic_default(v, "segment.jitter.ms") < 0:
        raise ConfigError("log.roll.jitter.ms must be greater than or equal to 0")
    if _topic_default(v, "retention.ms") == 0:
        raise ConfigError(
            "log.retention.ms must be unlimited (-1) or, greater than or equal to 1",
            "log.retention.ms",
        )
    if not _log_dirs(v):
        raise ConfigError("At least one log directory must be defined via log.dirs or log.dir.")
    threads = v["log.cleaner.threads"]
    if threads > 0 and v["log.cleaner.dedupe.buffer.size"] // threads <= 1024 * 1024:
        raise ConfigError(
            "log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.",
            "log.cleaner.dedupe.buffer.size",
        )
    check_replica_fetch(v)
    roles = v["process.roles"]
    if roles:
        protocols = _protocol_map(v, given)
        inter_broker = inter_broker_listener_name(v, given, protocols)
        check_node(v, given, _listeners(v, given), protocols, _controller_names(v))
        if BROKER_ROLE in roles:
            advertised = _advertised(v, given)
            check_inter_broker(inter_broker, [e.listener_name for e in advertised])
    else:
        _advertised(v, given)
    if 0 < v["queued.max.request.bytes"] < v["socket.request.max.bytes"]:
        raise ConfigError(
            "queued.max.request.bytes must be larger or equal to socket.request.max.bytes",
            "queued.max.request.bytes",
        )
    if v["max.connections.per.ip"] == 0 and not v["max.connections.per.ip.overrides"]:
        raise ConfigError(
            "max.connections.per.ip can be set to zero only if "
            "max.connections.per.ip.overrides property is set.",
            "max.connections.per.ip",
        )
    lo, hi = v["log.cleaner.min.compaction.lag.ms"], v["log.cleaner.max.compaction.lag.ms"]
    if lo > hi:
        raise ConfigError(
            f"conflict topic config setting min.compaction.lag.ms ({lo}) > "
            f"max.compaction.lag.ms ({hi})",
            "log.cleaner.min.compaction.lag.ms",
        )


def _topic_default(v: Mapping[str, Any], topic_config: str) -> Any:
    synonyms = TOPIC_BROKER_SYNONYMS.get(topic_config)
    if not synonyms:
        return TOPIC_CONFIGS[topic_config].default
    for broker_name, factor in synonyms:
        value = v[broker_name]
        if value is not None:
            value = value * factor if factor != 1 else value
            # KafkaConfig.logRetentionTimeMillis: any negative retention means unlimited
            return -1 if topic_config == "retention.ms" and value < 0 else value
    return None


def _log_dirs(v: Mapping[str, Any]) -> list[str]:
    raw = v["log.dirs"] if v["log.dirs"] is not None else v["log.dir"]
    return [d for d in _CSV.split(raw.strip()) if d] if raw else []


def _protocol_map(v: Mapping[str, Any], given: set[str]) -> dict[str, str]:
    name = "listener.security.protocol.map"
    result: dict[str, str] = {}
    for entry in (e for e in _CSV.split(v[name] or "") if e):
        listener, sep, protocol = entry.rpartition(":")
        if not sep:
            raise ConfigError(
                f"Error parsing configuration property '{name}': {entry} is not NAME:PROTOCOL", name
            )
        protocol = protocol.strip().upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"Invalid value {protocol} for configuration {name}: "
                f"Unknown security protocol {protocol}",
                name,
            )
        result[listener.strip().upper()] = protocol
    if name not in given:
        controllers = _controller_names(v)
        listeners = [e.partition("://")[0].upper() for e in _CSV.split(v["listeners"] or "") if e]
        secure = set(SECURITY_PROTOCOLS) - {"PLAINTEXT"}
        if not any(n in secure for n in controllers + listeners):
            for controller in controllers:
                result.setdefault(controller, "PLAINTEXT")
    return result


def _controller_names(v: Mapping[str, Any]) -> list[str]:
    return [n.upper() for n in _CSV.split(v["controller.listener.names"] or "") if n]


def _parse_endpoints(
    config: str, raw: str, protocols: Mapping[str, str], distinct_ports: bool
) -> list[Endpoint]:
    endpoints = []
    for entry in (e for e in _CSV.split(raw.strip()) if e):
        m = _LISTENER_URI.fullmatch(entry)
        if not m:
            raise ConfigError(f"Unable to parse {entry} to a broker endpoint", config)
        listener = m.group(1).upper()
        if listener not in protocols:
            entries = ", ".join(e for e in _CSV.split(raw.strip()) if e)
            raise ConfigError(f"Error creating broker listeners from '[{entries}]': "
                              f"No security protocol defined for listener {listener}", config)
        host = m.group(2) or None
        endpoints.append(Endpoint(listener, host, int(m.group(3)), protocols[listener]))
    if len({e.listener_name for e in endpoints}) != len(endpoints):
        raise ConfigError(f"Each listener must have a different name, {config}: {raw}", config)
    if distinct_ports:
        for port in {e.port for e in endpoints if e.port != 0}:
            same = [e for e in endpoints if e.port == port]
            if len(same) > 1 and not _one_ipv4_one_ipv6(same):
                raise ConfigError(
                    f"Each listener must have a different port unless exactly one listener has an "
                    f"IPv4 address and the other IPv6 address, {config}: {raw}, port: {port}",
                    config,
                )
    return endpoints


def _one_ipv4_one_ipv6(endpoints: list[Endpoint]) -> bool:
    try:
        versions = sorted(ipaddress.ip_address(e.host or "").version for e in endpoints)
    except ValueError:
        return False
    return versions == [4, 6]


def _listeners(v: Mapping[str, Any], given: set[str]) -> list[Endpoint]:
    return _parse_endpoints("listeners", v["listeners"] or "", _protocol_map(v, given), True)


def _advertised(v: Mapping[str, Any], given: set[str]) -> list[Endpoint]:
    listeners = _listeners(v, given)
    controllers = _controller_names(v)
    if v["advertised.listeners"] is not None:
        protocols = _protocol_map(v, given)
        raw = v["advertised.listeners"]
        advertised = _parse_endpoints("advertised.listeners", raw, protocols, False)
    else:
        advertised = listeners
    advertised = [e for e in advertised if e.listener_name not in controllers]
    if not advertised:
        raise ConfigError(
            "There must be at least one broker advertised listener. "
            "Perhaps all listeners appear in controller.listener.names?",
            "advertised.listeners",
        )
    names = {e.listener_name for e in listeners}
    if not {e.listener_name for e in advertised} <= names:
        raise ConfigError(
            "advertised.listeners listener names must be equal to or a subset of the ones defined "
            f"in listeners. Found {','.join(e.listener_name for e in advertised)}. The valid "
            f"options based on the current configuration are {','.join(sorted(names))}",
            "advertised.listeners",
        )
    if any(e.host == "0.0.0.0" for e in advertised):
        raise ConfigError(
            "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
            "Use a routable IP address.",
            "advertised.listeners",
        )
    return advertised
