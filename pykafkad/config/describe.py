"""DescribeConfigs entries for topics and the broker, built the way Kafka's ConfigHelper builds
them: the same values, sources, read-only flags and synonym lists in the same order.

Synonyms of a broker config are looked up level by level (per-broker dynamic, cluster default
dynamic, static, default) and, within a level, in synonym priority order; leading synonyms other
than the described name are then dropped. Hence, as in Kafka, a topic's ``retention.ms`` without
an override lists no synonyms when only ``log.retention.hours`` has a value.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pykafkad.config.broker import BrokerConfig
from pykafkad.config.broker_defs import BROKER_CONFIGS
from pykafkad.config.broker_dynamic import UNUSED_DYNAMIC_CONFIGS
from pykafkad.config.broker_unused import UNUSED_BROKER_CONFIGS
from pykafkad.config.topic import resolve_topic_config
from pykafkad.config.topic_defs import BROKER_SYNONYM_GROUPS, TOPIC_BROKER_SYNONYMS, TOPIC_CONFIGS
from pykafkad.config.types import ConfigDef, ConfigError, ConfigType, convert_to_string, parse_type

#: Kafka's LIST configs that pykafkad parses as comma-separated strings itself
DESCRIBED_AS_LIST = frozenset(
    {"listeners", "advertised.listeners", "controller.listener.names", "log.dirs", "log.dir"})


class ConfigSource(enum.IntEnum):
    """DescribeConfigsResponse ConfigSource ids (names as in the admin client's ConfigEntry)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    DYNAMIC_CLIENT_METRICS_CONFIG = 7
    DYNAMIC_GROUP_CONFIG = 8


class ConfigSynonym(NamedTuple):
    """Unpacks as ``name, value, source``."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    """One DescribeConfigs result entry; ``synonyms`` is empty unless they were asked for."""

    name: str
    value: str | None
    read_only: bool
    source: ConfigSource
    is_sensitive: bool
    synonyms: tuple[ConfigSynonym, ...]
    config_type: ConfigType
    documentation: str | None

    @property
    def is_default(self) -> bool:
        """DescribeConfigs v0's IsDefault."""
        return self.source is ConfigSource.DEFAULT_CONFIG


def describe_topic_configs(
    broker: BrokerConfig,
    overrides: Mapping[str, str],
    names: Sequence[str] | None = None,
    include_synonyms: bool = False,
    include_documentation: bool = False,
) -> list[ConfigEntry]:
    """``names`` None or empty means all; unknown names are left out, as Kafka does."""
    topic = resolve_topic_config(broker, overrides)
    shown = [n for n, d in TOPIC_CONFIGS.items() if not d.internal or n in topic.overrides]
    levels = _levels(broker)
    entries = []
    for name in _selected(sorted(shown), names):
        d = TOPIC_CONFIGS[name]
        sensitive = d.type is ConfigType.PASSWORD
        value = None if sensitive else d.to_string(topic[name])
        synonyms: list[ConfigSynonym] = []
        if name in topic.overrides:
            synonyms.append(ConfigSynonym(name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG))
        if name in TOPIC_BROKER_SYNONYMS:
            broker_name = TOPIC_BROKER_SYNONYMS[name][0][0]
            synonyms += _config_synonyms(levels, broker_name, sensitive)
        entries.append(_entry(d, value, False, synonyms, include_synonyms, include_documentation))
    return entries


def describe_broker_configs(
    broker: BrokerConfig,
    names: Sequence[str] | None = None,
    include_synonyms: bool = False,
    include_documentation: bool = False,
    *,
    per_broker: bool = True,
) -> list[ConfigEntry]:
    """``per_broker`` True describes resource "<node.id>" (every config); False describes
    resource "" (only the cluster-wide dynamic defaults)."""
    values: dict[str, Any]
    if per_broker:
        values = {n: broker[n] for n, d in BROKER_CONFIGS.items() if not d.internal}
    else:
        # names Kafka does not know are kept but, as pykafkad does not define them, not shown
        values = {n: v for n, v in broker.dynamic_default_configs.items() if n in BROKER_CONFIGS}
    levels = _levels(broker)
    entries = []
    for name in _selected(sorted(values), names):
        d = BROKER_CONFIGS[name]
        sensitive = d.type is ConfigType.PASSWORD
        raw = values[name]
        value = None if sensitive else raw if isinstance(raw, str) else d.to_string(raw)
        synonyms = [
            s
            for s in _config_synonyms(levels, name, sensitive)
            if per_broker or s.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        ]
        entry = _entry(d, value, d.read_only, synonyms, include_synonyms, include_documentation)
        if name in DESCRIBED_AS_LIST:
            entry = dataclasses.replace(entry, config_type=ConfigType.LIST)
        if name in _IDENTITY_DEFAULTS:
            entry = _as_given_at_start(entry, include_synonyms)
        entries.append(entry)
    entries += _unused_entries(broker, names, include_synonyms, include_documentation,
                               per_broker)
    return sorted(entries, key=lambda e: e.name)


#: Kafka requires node.id (no default) and copies it into broker.id (default -1); pykafkad's
#: default node.id stands for one given at start, so both are described as given
_IDENTITY_DEFAULTS: dict[str, str | None] = {"node.id": None, "broker.id": "-1"}


def _as_given_at_start(entry: ConfigEntry, include_synonyms: bool) -> ConfigEntry:
    name = entry.name
    synonyms = [ConfigSynonym(name, entry.value, ConfigSource.STATIC_BROKER_CONFIG)]
    if _IDENTITY_DEFAULTS[name] is not None:
        synonyms.append(ConfigSynonym(name, _IDENTITY_DEFAULTS[name], ConfigSource.DEFAULT_CONFIG))
    return dataclasses.replace(entry, source=ConfigSource.STATIC_BROKER_CONFIG,
                               synonyms=tuple(synonyms) if include_synonyms else ())


def _unused_entries(
    broker: BrokerConfig,
    names: Sequence[str] | None,
    include_synonyms: bool,
    include_documentation: bool,
    per_broker: bool,
) -> list[ConfigEntry]:
    """Kafka's broker configs pykafkad does not use: the value set dynamically or at start,
    else Kafka's default."""
    levels: list[tuple[Mapping[str, Any], ConfigSource]] = [
        (broker.dynamic_default_configs, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]
    if per_broker:
        levels = [(broker.dynamic_broker_configs, ConfigSource.DYNAMIC_BROKER_CONFIG), *levels,
                  (broker.ignored, ConfigSource.STATIC_BROKER_CONFIG)]
    entries = []
    for name in _selected(sorted(UNUSED_BROKER_CONFIGS), names):
        type_, default = UNUSED_BROKER_CONFIGS[name]
        sensitive = type_ is ConfigType.PASSWORD
        # as in Kafka, synonyms show a value as it was given, the entry as it is typed
        synonyms = [ConfigSynonym(name, None if sensitive else str(lv[name]), source)
                    for lv, source in levels if name in lv]
        if per_broker and default is not None:
            synonyms.append(ConfigSynonym(name, default, ConfigSource.DEFAULT_CONFIG))
        if not per_broker and not synonyms:
            continue
        value = synonyms[0].value if synonyms else None
        entries.append(ConfigEntry(
            name=name, value=value if sensitive or value is None
            else _typed_string(name, value, type_),
            read_only=name not in UNUSED_DYNAMIC_CONFIGS,
            source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
            is_sensitive=sensitive, synonyms=tuple(synonyms) if include_synonyms else (),
            config_type=type_,
            documentation=_UNUSED_DOC if include_documentation else None))
    return entries


_UNUSED_DOC = "A Kafka broker config that pykafkad accepts and shows but does not use."


def _typed_string(name: str, raw: Any, type_: ConfigType) -> str | None:
    """As Kafka shows a value: typed, so " +5 " is "5"; a value that does not parse as is."""
    try:
        return convert_to_string(parse_type(name, raw, type_), type_)
    except ConfigError:
        return raw if isinstance(raw, str) else str(raw)


def _selected(available: Iterable[str], names: Sequence[str] | None) -> list[str]:
    if not names:
        return list(available)
    wanted = set(names)
    return [n for n in available if n in wanted]


def _entry(
    d: ConfigDef,
    value: str | None,
    read_only: bool,
    synonyms: list[ConfigSynonym],
    include_synonyms: bool,
    include_documentation: bool,
) -> ConfigEntry:
    return ConfigEntry(
        name=d.name,
        value=value,
        read_only=read_only,
        source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
        is_sensitive=d.type is ConfigType.PASSWORD,
        synonyms=tuple(synonyms) if include_synonyms else (),
        config_type=d.type,
        documentation=d.documentation if include_documentation else None,
    )


def _broker_synonyms(name: str) -> tuple[str, ...]:
    for group in BROKER_SYNONYM_GROUPS:
        if name in group:
            return group
    return (name,)


_DEFAULT_STRINGS = {
    n: d.default_string for n, d in BROKER_CONFIGS.items() if d.default_string is not None
}

_Levels = tuple[tuple[Mapping[str, Any], ConfigSource], ...]


def _levels(broker: BrokerConfig) -> _Levels:
    """Where broker config values come from, highest precedence first."""
    return (
        (broker.dynamic_broker_configs, ConfigSource.DYNAMIC_BROKER_CONFIG),
        (broker.dynamic_default_configs, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        (broker.explicit, ConfigSource.STATIC_BROKER_CONFIG),
        (_DEFAULT_STRINGS, ConfigSource.DEFAULT_CONFIG),
    )


def _config_synonyms(levels: _Levels, name: str, sensitive: bool) -> list[ConfigSynonym]:
    found = [
        ConfigSynonym(n, None if sensitive else _as_string(n, level[n]), source)
        for level, source in levels
        for n in _broker_synonyms(name)
        if n in level
    ]
    while found and found[0].name != name:
        found.pop(0)
    return found


def _as_string(name: str, raw: Any) -> str | None:
    return raw if isinstance(raw, str) else convert_to_string(raw, BROKER_CONFIGS[name].type)


def broker_config_synonyms(broker: BrokerConfig, name: str) -> list[ConfigSynonym]:
    """Where a broker config's value comes from, highest precedence first (for the group
    configs that fall back to it)."""
    return _config_synonyms(_levels(broker), name, BROKER_CONFIGS[name].type is ConfigType.PASSWORD)
