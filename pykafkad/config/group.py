"""Group configs (config resource type 32, KIP-848/932/1071) with Kafka 4.4's names, types,
defaults, validation and DescribeConfigs entries.

pykafkad serves only classic groups, which none of these settings affect; they are accepted,
validated, stored and described as Kafka does, so admin tools (``kafka-configs --entity-type
groups``) and clients work unchanged.  A group's value falls back to its broker-level synonym
(``consumer.session.timeout.ms`` -> ``group.consumer.session.timeout.ms``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pykafkad.config.broker import BrokerConfig
from pykafkad.config.broker_defs import BROKER_CONFIGS
from pykafkad.config.describe import (
    ConfigEntry,
    ConfigSource,
    ConfigSynonym,
    broker_config_synonyms,
)
from pykafkad.config.types import (
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    ValidString,
    at_least,
    define,
    names_of,
)

BOOLEAN, STRING, INT, LONG, LIST = (
    ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.LONG, ConfigType.LIST)
MEDIUM, LOW = Importance.MEDIUM, Importance.LOW

_DURATION = re.compile(
    r"P(?:[0-9]+D)?(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:[.,][0-9]{0,9})?S)?)?", re.I)


def _auto_offset_reset(name: str, value: Any) -> None:
    """ShareGroupAutoOffsetResetStrategy's validator: earliest, latest or by_duration:<ISO>."""
    ok = value in ("earliest", "latest")
    if not ok and isinstance(value, str) and value.lower().startswith("by_duration:"):
        duration = value[len("by_duration:"):]
        ok = duration not in ("P", "PT") and not duration.upper().endswith("T") and \
            bool(_DURATION.fullmatch(duration))
    if not ok:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: Invalid value `{value}` for "
            f"configuration {name}. The value must be either 'earliest', 'latest' or of the "
            "format 'by_duration:<PnDTnHnMn.nS>'.", name)


_DEFS = [
    define("consumer.session.timeout.ms", INT, 45000, at_least(1), MEDIUM,
           "The timeout to detect client failures when using the consumer group protocol."),
    define("consumer.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM,
           "The heartbeat interval given to the members of a consumer group."),
    define("consumer.assignment.interval.ms", INT, 1000, at_least(0), MEDIUM,
           "The interval between assignment updates for a consumer group."),
    define("consumer.assignor.offload.enable", BOOLEAN, True, None, MEDIUM,
           "Whether to offload consumer group assignment to a group coordinator background "
           "thread.", internal=True),
    define("share.session.timeout.ms", INT, 45000, at_least(1), MEDIUM,
           "The timeout to detect client failures when using the share group protocol."),
    define("share.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM,
           "The heartbeat interval given to the members of a share group."),
    define("share.record.lock.duration.ms", INT, 30000, at_least(1000), MEDIUM,
           "The record acquisition lock duration in milliseconds for share groups."),
    define("share.delivery.count.limit", INT, 5, at_least(2), MEDIUM,
           "The maximum number of delivery attempts for a record delivered to a share group."),
    define("share.partition.max.record.locks", INT, 2000, at_least(100), MEDIUM,
           "Share-group record lock limit per share-partition."),
    define("share.auto.offset.reset", STRING, "latest", _auto_offset_reset, MEDIUM,
           "The strategy to initialize the share-partition start offset: earliest, latest or "
           "by_duration:<ISO-8601 duration>."),
    define("share.isolation.level", STRING, "read_uncommitted",
           ValidString(("read_committed", "read_uncommitted")), MEDIUM,
           "Controls how to read records written transactionally: read_committed delivers "
           "only committed transactional records."),
    define("share.renew.acknowledge.enable", BOOLEAN, True, None, MEDIUM,
           "Whether the renew acknowledge type is enabled for the share group."),
    define("share.assignment.interval.ms", INT, 1000, at_least(0), MEDIUM,
           "The interval between assignment updates for a share group."),
    define("share.assignor.offload.enable", BOOLEAN, True, None, MEDIUM,
           "Whether to offload share group assignment to a group coordinator background "
           "thread.", internal=True),
    define("streams.session.timeout.ms", INT, 45000, at_least(1), MEDIUM,
           "The timeout to detect client failures when using the streams group protocol."),
    define("streams.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM,
           "The heartbeat interval given to the members."),
    define("streams.num.standby.replicas", INT, 0, at_least(0), MEDIUM,
           "The number of standby replicas for each task."),
    define("streams.initial.rebalance.delay.ms", INT, 3000, at_least(0), MEDIUM,
           "How long the coordinator waits for more streams clients to join a new group "
           "before the first rebalance."),
    define("streams.assignment.interval.ms", INT, 1000, at_least(0), MEDIUM,
           "The interval between assignment updates for a streams group."),
    define("streams.rack.aware.assignment.tags", LIST, "", None, LOW,
           "Client tag keys used to distribute standby replicas across Kafka Streams "
           "instances."),
    define("streams.assignor.name", STRING, None, None, MEDIUM,
           "The task assignor of this streams group, by short name, among the broker's "
           "group.streams.assignors; unset means the first of them."),
    define("streams.assignor.offload.enable", BOOLEAN, True, None, MEDIUM,
           "Whether to offload streams group assignment to a group coordinator background "
           "thread.", internal=True),
    define("streams.task.offset.interval.ms", INT, 60000, at_least(1), MEDIUM,
           "The interval in which the warmup task changelog offsets on a client are updated "
           "on the broker.", internal=True),
    define("streams.num.warmup.replicas", INT, 2, at_least(0), MEDIUM,
           "The maximum number of warmup task replicas.", internal=True),
    define("streams.acceptable.recovery.lag", LONG, 10000, at_least(0), MEDIUM,
           "The maximum lag for a client to be considered caught-up enough to receive an "
           "active task assignment.", internal=True),
    define("errors.deadletterqueue.topic.name", STRING, "", None, MEDIUM,
           "The dead-letter queue (DLQ) topic of this share group; blank means none."),
    define("errors.deadletterqueue.copy.record.enable", BOOLEAN, False, None, MEDIUM,
           "Whether to copy the original record onto the DLQ topic, or only its context "
           "headers."),
]  # fmt: skip

GROUP_CONFIGS: dict[str, ConfigDef] = names_of(_DEFS)

#: group config -> its broker-level synonym (Kafka's GroupConfig.ALL_GROUP_CONFIG_SYNONYMS)
BROKER_SYNONYMS: dict[str, str] = {
    **{f"{kind}.{suffix}": f"group.{kind}.{suffix}"
       for kind in ("consumer", "share", "streams")
       for suffix in ("session.timeout.ms", "heartbeat.interval.ms", "assignment.interval.ms",
                      "assignor.offload.enable")},
    "share.record.lock.duration.ms": "group.share.record.lock.duration.ms",
    "share.delivery.count.limit": "group.share.delivery.count.limit",
    "share.partition.max.record.locks": "group.share.partition.max.record.locks",
    "streams.num.standby.replicas": "group.streams.num.standby.replicas",
    "streams.initial.rebalance.delay.ms": "group.streams.initial.rebalance.delay.ms",
    "streams.rack.aware.assignment.tags": "group.streams.rack.aware.assignment.tags",
    "streams.assignor.name": "group.streams.assignors",
    "streams.task.offset.interval.ms": "group.streams.task.offset.interval.ms",
    "streams.num.warmup.replicas": "group.streams.num.warmup.replicas",
    "streams.acceptable.recovery.lag": "group.streams.acceptable.recovery.lag",
}  # fmt: skip

#: Kafka 4.4's defaults of the group coordinator's broker configs pykafkad does not define
_KAFKA_BROKER_DEFAULTS: dict[str, str] = {
    "group.consumer.assignment.interval.ms": "1000",
    "group.consumer.min.assignment.interval.ms": "0",
    "group.consumer.max.assignment.interval.ms": "15000",
    "group.consumer.assignor.offload.enable": "true",
    "group.share.session.timeout.ms": "45000",
    "group.share.min.session.timeout.ms": "45000",
    "group.share.max.session.timeout.ms": "60000",
    "group.share.heartbeat.interval.ms": "5000",
    "group.share.min.heartbeat.interval.ms": "5000",
    "group.share.max.heartbeat.interval.ms": "15000",
    "group.share.assignment.interval.ms": "1000",
    "group.share.min.assignment.interval.ms": "0",
    "group.share.max.assignment.interval.ms": "15000",
    "group.share.assignor.offload.enable": "true",
    "group.share.record.lock.duration.ms": "30000",
    "group.share.min.record.lock.duration.ms": "15000",
    "group.share.max.record.lock.duration.ms": "60000",
    "group.share.delivery.count.limit": "5",
    "group.share.min.delivery.count.limit": "2",
    "group.share.max.delivery.count.limit": "10",
    "group.share.partition.max.record.locks": "2000",
    "group.share.min.partition.max.record.locks": "100",
    "group.share.max.partition.max.record.locks": "4000",
    "group.streams.session.timeout.ms": "45000",
    "group.streams.min.session.timeout.ms": "45000",
    "group.streams.max.session.timeout.ms": "60000",
    "group.streams.heartbeat.interval.ms": "5000",
    "group.streams.min.heartbeat.interval.ms": "5000",
    "group.streams.max.heartbeat.interval.ms": "15000",
    "group.streams.assignment.interval.ms": "1000",
    "group.streams.min.assignment.interval.ms": "0",
    "group.streams.max.assignment.interval.ms": "15000",
    "group.streams.assignor.offload.enable": "true",
    "group.streams.num.standby.replicas": "0",
    "group.streams.max.standby.replicas": "2",
    "group.streams.initial.rebalance.delay.ms": "3000",
    "group.streams.rack.aware.assignment.tags": "",
    "group.streams.assignors": "sticky",
    "group.streams.task.offset.interval.ms": "60000",
    "group.streams.min.task.offset.interval.ms": "15000",
    "group.streams.num.warmup.replicas": "2",
    "group.streams.max.warmup.replicas": "20",
    "group.streams.acceptable.recovery.lag": "10000",
}  # fmt: skip

#: (group config, broker config of its lowest, of its highest allowed value), in Kafka's order
_BOUNDS: list[tuple[str, str | None, str | None]] = [
    ("consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms",
     "group.consumer.max.heartbeat.interval.ms"),
    ("consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
     "group.consumer.max.session.timeout.ms"),
    ("consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms",
     "group.consumer.max.assignment.interval.ms"),
    ("share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms",
     "group.share.max.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "group.share.min.session.timeout.ms",
     "group.share.max.session.timeout.ms"),
    ("share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
     "group.share.max.record.lock.duration.ms"),
    ("share.delivery.count.limit", "group.share.min.delivery.count.limit",
     "group.share.max.delivery.count.limit"),
    ("share.partition.max.record.locks", "group.share.min.partition.max.record.locks",
     "group.share.max.partition.max.record.locks"),
    ("share.assignment.interval.ms", "group.share.min.assignment.interval.ms",
     "group.share.max.assignment.interval.ms"),
    ("streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms",
     "group.streams.max.heartbeat.interval.ms"),
    ("streams.session.timeout.ms", "group.streams.min.session.timeout.ms",
     "group.streams.max.session.timeout.ms"),
    ("streams.num.standby.replicas", None, "group.streams.max.standby.replicas"),
    ("streams.assignment.interval.ms", "group.streams.min.assignment.interval.ms",
     "group.streams.max.assignment.interval.ms"),
    ("streams.task.offset.interval.ms", "group.streams.min.task.offset.interval.ms", None),
    ("streams.num.warmup.replicas", None, "group.streams.max.warmup.replicas"),
]  # fmt: skip


def broker_value(broker: BrokerConfig, name: str) -> str:
    """A group coordinator broker config as a string: pykafkad's if it defines it, else the
    value server.properties gave (pykafkad accepts such names without typing them), else
    Kafka's default."""
    if name in BROKER_CONFIGS:
        return BROKER_CONFIGS[name].to_string(broker[name]) or ""
    supplied = broker.ignored.get(name)
    if supplied is not None:
        return str(supplied).strip()
    return _KAFKA_BROKER_DEFAULTS[name]


def validate_group_configs(configs: Mapping[str, str | None], broker: BrokerConfig) -> None:
    """GroupConfig.validate over a group's whole set of overrides; raises ConfigError
    (Kafka answers INVALID_CONFIG)."""
    for name in configs:
        if name not in GROUP_CONFIGS:
            raise ConfigError(f"Unknown group config name: {name}", name)
    tags = configs.get("streams.rack.aware.assignment.tags")
    if tags:
        keys = [t for t in re.split(r"\s*,\s*", tags.strip()) if t]
        if len(set(keys)) != len(keys):
            raise ConfigError("streams.rack.aware.assignment.tags must not contain duplicate "
                              "tag keys.", "streams.rack.aware.assignment.tags")
    values = {name: GROUP_CONFIGS[name].parse(value) for name, value in configs.items()}
    for name, lo_name, hi_name in _BOUNDS:
        if name not in values:
            continue
        value = values[name]
        lo = int(broker_value(broker, lo_name)) if lo_name else None
        hi = int(broker_value(broker, hi_name)) if hi_name else None
        if lo is not None and hi is not None and not lo <= value <= hi:
            raise ConfigError(f"{name} must be in the range {lo} to {hi} inclusive.", name)
        if lo is None and hi is not None and value > hi:
            raise ConfigError(f"{name} must be less than or equal to {hi}", name)
        if hi is None and lo is not None and value < lo:
            raise ConfigError(f"{name} must be greater than or equal to {lo}", name)
    assignor = values.get("streams.assignor.name")
    if assignor is not None:
        registered = [a for a in broker_value(broker, "group.streams.assignors").split(",") if a]
        if assignor not in registered:
            raise ConfigError(
                f"streams.assignor.name '{assignor}' is not a registered task assignor. "
                f"Registered assignors are: [{', '.join(registered)}].", "streams.assignor.name")
    dlq = values.get("errors.deadletterqueue.topic.name")
    if dlq and dlq.startswith("__"):
        raise ConfigError("errors.deadletterqueue.topic.name: DLQ topic name must not start "
                          "with '__'", "errors.deadletterqueue.topic.name")


def describe_group_configs(
    broker: BrokerConfig,
    overrides: Mapping[str, str],
    names: Sequence[str] | None = None,
    include_synonyms: bool = False,
    include_documentation: bool = False,
) -> list[ConfigEntry]:
    """Every group config Kafka shows (internal ones are not): the override, else the broker
    synonym's value."""
    wanted = set(names) if names else None
    entries = []
    for name, d in sorted(GROUP_CONFIGS.items()):
        if d.internal or (wanted is not None and name not in wanted):
            continue
        synonyms: list[ConfigSynonym] = []
        if name in overrides:
            # Kafka shows the typed value: " +50000 " is described as "50000"
            synonyms.append(ConfigSynonym(name, d.to_string(d.parse(overrides[name])),
                                          ConfigSource.DYNAMIC_GROUP_CONFIG))
        broker_name = BROKER_SYNONYMS.get(name)
        if broker_name is None:
            synonyms.append(ConfigSynonym(name, d.default_string, ConfigSource.DEFAULT_CONFIG))
        elif broker_name in BROKER_CONFIGS:
            synonyms += broker_config_synonyms(broker, broker_name)
        else:
            synonyms.append(ConfigSynonym(broker_name, _KAFKA_BROKER_DEFAULTS[broker_name],
                                          ConfigSource.DEFAULT_CONFIG))
        source = synonyms[0].source if synonyms[0].source is ConfigSource.DYNAMIC_GROUP_CONFIG \
            else ConfigSource.DEFAULT_CONFIG
        entries.append(ConfigEntry(
            name=name, value=synonyms[0].value, read_only=False, source=source,
            is_sensitive=False, synonyms=tuple(synonyms) if include_synonyms else (),
            config_type=d.type,
            documentation=d.documentation if include_documentation else None))
    return entries
