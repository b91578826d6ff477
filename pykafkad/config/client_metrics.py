"""Client-metrics subscriptions (config resource type 16, KIP-714) with Kafka 4.4's names,
types, defaults, validation and DescribeConfigs entries.

pykafkad does not take pushed telemetry (it offers no GetTelemetrySubscriptions), so these
settings change nothing; they are accepted, validated, stored and described as Kafka does, so
``kafka-client-metrics`` and admin clients work unchanged.  A subscription is any non-empty
name; one without overrides describes Kafka's defaults.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from pykafkad.config.describe import ConfigEntry, ConfigSource, ConfigSynonym
from pykafkad.config.override_store import ConfigOverrideStore
from pykafkad.config.types import (
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    define,
    names_of,
)

CLIENT_METRICS_FILE = "pykafkad-client-metrics.json"
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3600000
#: the client attributes a ``match`` pattern may select on
MATCH_PARAMS = frozenset({
    "client_instance_id", "client_id", "client_software_name", "client_software_version",
    "client_source_address", "client_source_port",
})  # fmt: skip


def _no_empty_elements(name: str, value) -> None:
    """Kafka 4.x refuses an empty element of these lists ("a,,b"), whatever the elements."""
    if any(element == "" for element in value):
        raise ConfigError(f"Configuration '{name}' values must not be empty.", name)


CLIENT_METRICS_CONFIGS: dict[str, ConfigDef] = names_of([
    define("metrics", ConfigType.LIST, "", _no_empty_elements, Importance.MEDIUM,
           "Prefixes of the metric names the matched clients push; '*' means all."),
    define("interval.ms", ConfigType.INT, 300000, None, Importance.MEDIUM,
           "How often the matched clients push their metrics, in milliseconds."),
    define("match", ConfigType.LIST, "", _no_empty_elements, Importance.MEDIUM,
           "Which clients the subscription applies to: attribute=regex pairs, all of which "
           "must match; empty means every client."),
])  # fmt: skip


class ClientMetricsRequestError(Exception):
    """What Kafka refuses as INVALID_REQUEST rather than INVALID_CONFIG."""


class ClientMetricsStore(ConfigOverrideStore):
    def __init__(self, data_dir: Path):
        super().__init__(data_dir, CLIENT_METRICS_FILE, "subscriptions")


def validate_client_metrics(name: str, configs: Mapping[str, str]) -> None:
    """ClientMetricsConfigs.validate over a subscription's whole set of overrides, in Kafka's
    order: the name, unknown configs, types, the push interval, the match patterns."""
    if not name:
        raise ClientMetricsRequestError("Subscription name can't be empty")
    for key in configs:
        if key not in CLIENT_METRICS_CONFIGS:
            raise ClientMetricsRequestError(f"Unknown client metrics configuration: {key}")
    values = {key: CLIENT_METRICS_CONFIGS[key].parse(v) for key, v in configs.items()}
    interval = values.get("interval.ms")
    if interval is not None and not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
        raise ClientMetricsRequestError(
            f"Invalid value {interval} for interval.ms, interval must be between "
            f"{MIN_INTERVAL_MS} and {MAX_INTERVAL_MS} (1 hour)")
    for pattern in values.get("match", ()):
        # Java's split("="): trailing empty parts dropped
        parts = pattern.split("=")
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2 or parts[0].strip() not in MATCH_PARAMS \
                or not java_regex_compiles(parts[1].strip()):
            raise ConfigError(f"Illegal client matching pattern: {pattern}", "match")


_QUANTIFIER = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")
_JAVA_NAMED_GROUP = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>")


def java_regex_compiles(pattern: str) -> bool:
    """Whether java.util.regex.Pattern compiles ``pattern``, closely enough: Python's re after
    Java's own syntax (named groups, \\p{..} classes, \\Q..\\E) is translated, and a brace
    that starts no quantifier is refused as Java refuses it."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1:i + 2]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                end = len(pattern) if end < 0 else end
                out.append(re.escape(pattern[i + 2:end]))
                i = end + 2
                continue
            if nxt in ("p", "P"):
                m = re.match(r"\{[A-Za-z_=]+\}|[A-Za-z]", pattern[i + 2:])
                if not m:
                    return False
                out.append("a" if in_class else "\\w")
                i += 2 + m.end()
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "{" and not in_class:
            m = _QUANTIFIER.match(pattern, i)
            if not m:
                return False
            if out and out[-1] not in ("(", "|"):  # Java ignores a quantifier of nothing
                out.append(m.group())
            i = m.end()
            continue
        out.append(c)
        i += 1
    try:
        re.compile(_JAVA_NAMED_GROUP.sub(r"(?P<\1>", "".join(out)))
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def describe_client_metrics(
    overrides: Mapping[str, str],
    names: Sequence[str] | None = None,
    include_synonyms: bool = False,
    include_documentation: bool = False,
) -> list[ConfigEntry]:
    """Every config: the override (source DYNAMIC_CLIENT_METRICS_CONFIG, itself its only
    synonym) or Kafka's default (source DEFAULT_CONFIG, no synonyms)."""
    wanted = set(names) if names else None
    entries = []
    for name, d in sorted(CLIENT_METRICS_CONFIGS.items()):
        if wanted is not None and name not in wanted:
            continue
        if name in overrides:
            # Kafka shows the typed value: " +200 " is described as "200"
            value = d.to_string(d.parse(overrides[name]))
            source = ConfigSource.DYNAMIC_CLIENT_METRICS_CONFIG
            synonyms: tuple[ConfigSynonym, ...] = (ConfigSynonym(name, value, source),)
        else:
            value, source, synonyms = d.default_string, ConfigSource.DEFAULT_CONFIG, ()
        entries.append(ConfigEntry(
            name=name, value=value, read_only=False, source=source, is_sensitive=False,
            synonyms=synonyms if include_synonyms else (), config_type=d.type,
            documentation=d.documentation if include_documentation else None))
    return entries
