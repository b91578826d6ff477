"""Topic configs: validating overrides (CreateTopics, AlterConfigs) and resolving a topic's
effective values (override, else the broker's synonym, else Kafka's default)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pykafkad.config.broker import BrokerConfig
from pykafkad.config.topic_defs import TOPIC_CONFIGS
from pykafkad.config.types import ConfigError


class TopicConfig(Mapping[str, Any]):
    """A topic's effective configs, typed: ``topic_config["segment.bytes"]`` -> 1073741824.

    A snapshot: after a dynamic broker change (``BrokerConfig.version`` moves), resolve again.
    Iterates every topic config name, including the test-only ``internal.segment.bytes``
    (None unless overridden; Kafka then uses it instead of ``segment.bytes``).
    """

    __slots__ = ("_values", "overrides")

    def __init__(self, values: dict[str, Any], overrides: Mapping[str, str]):
        self._values = values
        #: The topic's own settings, as stored.
        self.overrides = dict(overrides)

    def __getitem__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise KeyError(f"Unknown topic config name: {name}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def is_overridden(self, name: str) -> bool:
        return name in self.overrides

    @property
    def effective_segment_bytes(self) -> int:
        """LogConfig.segmentSize(): internal.segment.bytes when set, else segment.bytes."""
        internal = self._values["internal.segment.bytes"]
        return self._values["segment.bytes"] if internal is None else internal

    def __repr__(self) -> str:
        return f"TopicConfig(overrides={self.overrides!r})"


def resolve_topic_config(broker: BrokerConfig, overrides: Mapping[str, str | None]) -> TopicConfig:
    """Every topic config with a value. A None override counts as unset."""
    given: dict[str, str] = {name: v for name, v in overrides.items() if v is not None}
    for name in given:
        if name not in TOPIC_CONFIGS:
            raise ConfigError(f"Unknown topic config name: {name}", name)
    values = {
        name: d.parse(given[name]) if name in given else broker.topic_default(name)
        for name, d in TOPIC_CONFIGS.items()
    }
    return TopicConfig(values, given)


def validate_topic_configs(
    configs: Mapping[str, str | None],
    *,
    broker: BrokerConfig | None = None,
) -> None:
    """Checks topic overrides as Kafka's controller does; raises ConfigError (-> INVALID_CONFIG).

    ``broker`` supplies the defaults the overrides are combined with (Kafka's defaults if None).
    """
    nulls = [name for name, value in configs.items() if value is None]
    if nulls:
        raise ConfigError(
            "Null value not supported for topic configs: " + ",".join(nulls), nulls[0]
        )
    for name in configs:
        if name not in TOPIC_CONFIGS:
            raise ConfigError(f"Unknown topic config name: {name}", name)
    combined = {
        name: broker.topic_default(name) if broker is not None else d.default
        for name, d in TOPIC_CONFIGS.items()
    }
    for name, d in TOPIC_CONFIGS.items():
        if name in configs:
            combined[name] = d.parse(configs[name])
    lo, hi = combined["min.compaction.lag.ms"], combined["max.compaction.lag.ms"]
    if lo > hi:
        raise ConfigError(
            f"conflict topic config setting min.compaction.lag.ms ({lo}) > "
            f"max.compaction.lag.ms ({hi})",
            "min.compaction.lag.ms",
        )
    if combined["remote.storage.enable"]:
        # remote.log.storage.system.enable is always false here
        raise ConfigError(
            "Tiered Storage functionality is disabled in the broker. "
            "Topic cannot be configured with remote log storage.",
            "remote.storage.enable",
        )
