"""Kafka's ConfigDef in miniature: typed definitions, string parsing and validators.

Parsing and messages follow ``org.apache.kafka.common.config.ConfigDef`` (Kafka 4.1) so a value that
Kafka rejects is rejected here with the same sentence, e.g.
``Invalid value abc for configuration num.partitions: Not a number of type INT``.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any


class ConfigError(ValueError):
    """An unknown or invalid setting; the message names the key and the problem, as Kafka's do.

    ``name`` is the offending config name when there is a single one.
    """

    def __init__(self, message: str, name: str | None = None):
        super().__init__(message)
        self.name = name


class ConfigType(enum.IntEnum):
    """ConfigDef.Type, numbered as DescribeConfigs v3+ ``ConfigType`` reports it."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class Importance(enum.Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Password:
    """A secret: printed as ``[hidden]``, the real text in ``.value`` (Kafka's Password)."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        self.value = value

    def __repr__(self) -> str:
        return "[hidden]"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


INT_MIN, INT_MAX = -(2**31), 2**31 - 1
SHORT_MIN, SHORT_MAX = -(2**15), 2**15 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
DOUBLE_MAX = 1.7976931348623157e308

_RANGES = {
    ConfigType.INT: (INT_MIN, INT_MAX),
    ConfigType.SHORT: (SHORT_MIN, SHORT_MAX),
    ConfigType.LONG: (LONG_MIN, LONG_MAX),
}
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE = re.compile(
    r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)"
)
_JAVA_HEX_DOUBLE = re.compile(r"[+-]?0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][+-]?[0-9]+[fFdD]?")
_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")
_JAVA_CLASS_NAME = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")
_JAVA_WHITESPACE = "".join(chr(c) for c in range(0x21))


def java_trim(s: str) -> str:
    """String.trim(): strips code points up to U+0020, nothing else."""
    return s.strip(_JAVA_WHITESPACE)


def java_double_str(d: float) -> str:
    """Double.toString: ``0.5``, ``2.0``, ``1.0E7``, ``1.7976931348623157E308``."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    sign = "-" if d < 0 else ""
    a = abs(d)
    if 1e-3 <= a < 1e7:
        s = repr(a)
        return sign + (s if "." in s else s + ".0")
    digits_t, exp = Decimal(repr(a)).as_tuple()[1:]
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exp, int)
    sci_exp = len(digits_t) - 1 + exp
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{sci_exp}"


def java_str(value: Any) -> str:
    """How Java's string concatenation prints a parsed config value (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


def _invalid(name: str, value: Any, message: str | None = None) -> ConfigError:
    """Kafka's ConfigException(name, value, message)."""
    text = f"Invalid value {java_str(value)} for configuration {name}"
    return ConfigError(text + (f": {message}" if message else ""), name)


# Validators: called with (name, parsed value); raise ConfigError. str() gives Kafka's docs form.


@dataclass(frozen=True)
class Range:
    min: int | float | None = None
    max: int | float | None = None

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise _invalid(name, None, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise _invalid(name, value, f"Value must be at least {java_str(self.min)}")
        if self.max is not None and value > self.max:
            raise _invalid(name, value, f"Value must be no more than {java_str(self.max)}")

    def __str__(self) -> str:
        lo = None if self.min is None else java_str(self.min)
        hi = None if self.max is None else java_str(self.max)
        if lo is None:
            return "[...]" if hi is None else f"[...,{hi}]"
        return f"[{lo},...]" if hi is None else f"[{lo},...,{hi}]"


def at_least(n: int | float) -> Range:
    return Range(min=n)


def between(lo: int | float, hi: int | float) -> Range:
    return Range(min=lo, max=hi)


@dataclass(frozen=True)
class ValidString:
    options: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        if value not in self.options:
            raise _invalid(name, value, "String must be one of: " + ", ".join(self.options))

    def __str__(self) -> str:
        return "[" + ", ".join(self.options) + "]"


@dataclass(frozen=True)
class CaseInsensitiveValidString:
    """Kafka's CaseInsensitiveValidString: its options upper-cased in a HashSet, so its
    message lists them in that set's iteration order (``options`` is given in that order)."""

    options: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        if value is None or value.upper() not in self.options:
            raise _invalid(name, value, "String must be one of (case insensitive): "
                           + ", ".join(self.options))

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.options) + "]"


@dataclass(frozen=True)
class ValidList:
    """Every element of a LIST value must be one of ``options`` (an empty list passes, an
    empty element does not: "a,,b" in Kafka 4.x)."""

    options: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        if any(element == "" for element in value):
            raise ConfigError(f"Configuration '{name}' values must not be empty.", name)
        for element in value:
            ValidString(self.options)(name, element)

    def __str__(self) -> str:
        return str(ValidString(self.options))


@dataclass(frozen=True)
class GzipLevel:
    """CompressionType.GZIP.levelValidator(): 1..9, or -1 for zlib's default."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise _invalid(name, None, "Value must be non-null")
        if value > 9 or (value < 1 and value != -1):
            raise _invalid(name, value, "Value must be between 1 and 9 or equal to -1")

    def __str__(self) -> str:
        return "[1,...,9] or -1"


_THROTTLED_ENTRY = re.compile(r"([0-9]+:[0-9]+)?")


@dataclass(frozen=True)
class ThrottledReplicaList:
    """``*`` or ``partitionId:brokerId,...`` (ThrottledReplicaListValidator)."""

    def __call__(self, name: str, value: Any) -> None:
        proposed = [element.strip() for element in value]
        if all(_THROTTLED_ENTRY.fullmatch(p) for p in proposed) or "".join(proposed) == "*":
            return
        raise _invalid(
            name,
            value,
            f"{name} must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
        )

    def __str__(self) -> str:
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


Validator = Callable[[str, Any], None]

@dataclass(frozen=True)
class ConfigDef:
    """One config key as Kafka defines it.

    ``topic_name`` is the topic-level synonym of a broker config (``log.retention.ms`` ->
    ``retention.ms``). ``read_only`` is what DescribeConfigs reports: for a broker config, True
    unless Kafka lets AlterConfigs change it on a running broker; topic configs are never read-only.
    ``internal`` configs are accepted but not described (Kafka's ``defineInternal``).
    """

    name: str
    type: ConfigType
    default: Any
    validator: Validator | None
    importance: Importance
    documentation: str
    topic_name: str | None = None
    read_only: bool = True
    internal: bool = False

    def parse(self, raw: Any) -> Any:
        """A string (or already typed value) -> the typed value, validated."""
        value = parse_type(self.name, raw, self.type)
        if self.validator is not None:
            self.validator(self.name, value)
        return value

    def to_string(self, value: Any) -> str | None:
        return convert_to_string(value, self.type)

    @property
    def default_string(self) -> str | None:
        """The default as DescribeConfigs shows it (None when there is none)."""
        if isinstance(self.default, Password):
            return self.default.value
        return convert_to_string(self.default, self.type)


def parse_type(name: str, value: Any, type_: ConfigType) -> Any:
    """ConfigDef.parseType: strings are trimmed, numbers range-checked by their Java type."""
    if value is None:
        return None
    if not isinstance(value, str):
        return _coerce(name, value, type_)
    trimmed = java_trim(value)
    if type_ is ConfigType.BOOLEAN:
        if trimmed.lower() == "true":
            return True
        if trimmed.lower() == "false":
            return False
        raise _invalid(name, value, "Expected value to be either true or false")
    if type_ is ConfigType.PASSWORD:
        return Password(trimmed)
    if type_ is ConfigType.STRING:
        return trimmed
    if type_ in _RANGES:
        lo, hi = _RANGES[type_]
        if _JAVA_INTEGER.fullmatch(trimmed) and lo <= int(trimmed) <= hi:
            return int(trimmed)
        raise _invalid(name, value, f"Not a number of type {type_.name}")
    if type_ is ConfigType.DOUBLE:
        return _parse_double(name, value, trimmed)
    if type_ is ConfigType.LIST:
        return () if not trimmed else tuple(_COMMA_WITH_WHITESPACE.split(trimmed))
    if type_ is ConfigType.CLASS:
        if not _JAVA_CLASS_NAME.fullmatch(trimmed):
            raise _invalid(name, value, f"Class {value} could not be found.")
        return trimmed
    raise ConfigError(f"Unknown type {type_!r} for configuration {name}", name)


def _parse_double(name: str, raw: str, trimmed: str) -> float:
    if _JAVA_DOUBLE.fullmatch(trimmed):
        return float(trimmed.rstrip("fFdD").replace("Infinity", "inf"))
    if _JAVA_HEX_DOUBLE.fullmatch(trimmed):
        return float.fromhex(trimmed.rstrip("fFdD"))
    raise _invalid(name, raw, "Not a number of type DOUBLE")


def _coerce(name: str, value: Any, type_: ConfigType) -> Any:
    """Typed values given directly (tests, programmatic overrides) are checked like Kafka does."""
    ok = {
        ConfigType.BOOLEAN: lambda v: isinstance(v, bool),
        ConfigType.INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
        ConfigType.SHORT: lambda v: isinstance(v, int) and not isinstance(v, bool),
        ConfigType.LONG: lambda v: isinstance(v, int) and not isinstance(v, bool),
        ConfigType.DOUBLE: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        ConfigType.LIST: lambda v: isinstance(v, (list, tuple)),
        ConfigType.PASSWORD: lambda v: isinstance(v, Password),
    }.get(type_, lambda v: False)
    if not ok(value):
        raise _invalid(name, value, f"Expected a value of type {type_.name}")
    if type_ in _RANGES:
        lo, hi = _RANGES[type_]
        if not lo <= value <= hi:
            raise _invalid(name, value, f"Not a number of type {type_.name}")
    if type_ is ConfigType.DOUBLE:
        return float(value)
    if type_ is ConfigType.LIST:
        return tuple(str(v) for v in value)
    return value


def convert_to_string(value: Any, type_: ConfigType | None) -> str | None:
    """ConfigDef.convertToString: how DescribeConfigs prints a typed value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, Password):
        return value.value
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def define(
    name: str,
    type_: ConfigType,
    default: Any,
    validator: Validator | None,
    importance: Importance,
    documentation: str,
    *,
    topic_name: str | None = None,
    internal: bool = False,
) -> ConfigDef:
    """Builds a ConfigDef with a typed default; list defaults may be given as ``"a,b"``."""
    if type_ is ConfigType.LIST and isinstance(default, str):
        default = parse_type(name, default, type_)
    return ConfigDef(
        name, type_, default, validator, importance, documentation, topic_name, True, internal
    )


def names_of(defs: Sequence[ConfigDef]) -> dict[str, ConfigDef]:
    out: dict[str, ConfigDef] = {}
    for d in defs:
        if d.name in out:
            raise AssertionError(f"config {d.name} defined twice")
        out[d.name] = d
    return out
