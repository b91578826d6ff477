"""IncrementalAlterConfigs operations on one resource's overrides, as Kafka's controller
(ConfigurationControlManager) applies them.

APPEND and SUBTRACT start from the override, else from the config's static default (never from
a broker-level synonym), and split values the way Java's ``String.split(",")`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pykafkad.config.types import ConfigDef, ConfigError, ConfigType

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


def java_split(value: str) -> list[str]:
    """``value.split(",")`` in Java: trailing empty parts are dropped ("" gives [""])."""
    if value == "":
        return [""]
    parts = value.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def apply_operations(
    overrides: Mapping[str, str],
    operations: Iterable[tuple[str, int, str | None]],
    defs: Mapping[str, ConfigDef],
    *,
    broker: bool = False,
) -> dict[str, str]:
    """The overrides after ``(name, op, value)`` operations; raises ConfigError (Kafka answers
    INVALID_CONFIG) for APPEND/SUBTRACT on a config that is not a LIST.  ``broker`` resources
    are checked by the broker first, whose message differs from the controller's."""
    new = dict(overrides)
    for name, op, value in operations:
        if op == SET:
            new[name] = value
        elif op == DELETE:
            new.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            d = defs.get(name)
            if d is None or d.type is not ConfigType.LIST:
                if broker:
                    verb = "append" if op == APPEND else "subtract"
                    raise ConfigError(
                        f"Config value {verb} is not allowed for config key: {name}", name)
                raise ConfigError(
                    f"Can't {OP_NAMES[op]} to key {name} because its type is not LIST.", name)
            current = new.get(name)
            if current is None:
                current = d.default_string
            items = [x for x in java_split(current) if x] if current else []
            for part in java_split(value or ""):
                if op == APPEND:
                    if part not in items:
                        items.append(part)
                elif part in items:
                    items.remove(part)
            new[name] = ",".join(items)
        else:
            raise ConfigError(f"Unknown config operation {op}", name)
    return new
