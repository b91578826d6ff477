"""Broker loggers (config resource type 8): pykafkad's Python loggers shown and changed the
way Kafka shows and changes its log4j loggers, so ``kafka-configs --entity-type
broker-loggers`` and admin clients work unchanged.

Kafka's ``root`` is Python's root logger; the others are the ``pykafkad`` loggers that exist.
Levels are Kafka's names (Python's WARNING is WARN, CRITICAL is FATAL, anything below DEBUG
is TRACE) and, as in Kafka, a logger shows its effective level. Deleting a logger's level
makes it inherit its parent's again (Python's NOTSET), as unsetting a log4j level does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pykafkad.config.describe import ConfigEntry, ConfigSource
from pykafkad.config.incremental import APPEND, DELETE, SET, SUBTRACT
from pykafkad.config.types import ConfigError, ConfigType

ROOT_LOGGER = "root"
#: the loggers listed besides the root: pykafkad's own
LOGGER_PREFIX = "pykafkad"
#: Python has no TRACE; this level is below DEBUG, as log4j's TRACE is
TRACE = 5
#: Kafka's LogLevelConfig.VALID_LOG_LEVELS, with their Python levels
LEVELS: dict[str, int] = {
    "DEBUG": logging.DEBUG, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL,
    "INFO": logging.INFO, "TRACE": TRACE, "WARN": logging.WARNING,
}  # fmt: skip
_OP_NAMES = {APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


class LoggerRequestError(Exception):
    """An operation Kafka refuses on loggers as INVALID_REQUEST (not INVALID_CONFIG)."""


def _python_logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == ROOT_LOGGER else logging.getLogger(name)


def logger_names() -> list[str]:
    """``root`` first, then the pykafkad loggers that exist, by name."""
    existing = logging.Logger.manager.loggerDict
    ours = sorted(
        name for name, lg in list(existing.items())
        if isinstance(lg, logging.Logger)
        and (name == LOGGER_PREFIX or name.startswith(LOGGER_PREFIX + "."))
    )  # fmt: skip
    return [ROOT_LOGGER, *ours]


def level_name(level: int) -> str:
    """A Python level in Kafka's words: the highest of Kafka's levels not above it."""
    fitting = [(lv, name) for name, lv in LEVELS.items() if lv <= level]
    return max(fitting)[1] if fitting else "TRACE"


def describe_broker_loggers(names: Sequence[str] | None = None) -> list[ConfigEntry]:
    """Each logger with its effective level, as Kafka lists them: source
    DYNAMIC_BROKER_LOGGER_CONFIG, type UNKNOWN, no synonyms, an empty documentation.
    ``names`` None or empty means all; unknown names are left out."""
    wanted = set(names) if names else None
    return [
        ConfigEntry(
            name=name,
            value=level_name(_python_logger(name).getEffectiveLevel()),
            read_only=False,
            source=ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
            is_sensitive=False,
            synonyms=(),
            config_type=ConfigType.UNKNOWN,
            documentation="",
        )
        for name in logger_names()
        if wanted is None or name in wanted
    ]


def validate_logger_operations(ops: Sequence[tuple[str, int, str | None]]) -> None:
    """Kafka's checks, operation by operation in request order. Raises ConfigError
    (INVALID_CONFIG) or LoggerRequestError (INVALID_REQUEST)."""
    existing = set(logger_names())
    for name, op, value in ops:
        if op in (SET, DELETE) and name not in existing:
            raise ConfigError(f"Logger {name} does not exist!", name)
        if op == SET:
            if value not in LEVELS:
                raise ConfigError(
                    f"Cannot set the log level of {name} to {value} as it is not a supported "
                    f"log level. Valid log levels are {', '.join(sorted(LEVELS))}", name)
        elif op == DELETE:
            if name == ROOT_LOGGER:
                raise LoggerRequestError("Removing the log level of the root logger is not "
                                         "allowed")
        elif op in _OP_NAMES:
            raise LoggerRequestError(
                f"{_OP_NAMES[op]} operation is not allowed for the BROKER_LOGGER resource")
        else:
            raise LoggerRequestError(
                f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource")


def alter_broker_loggers(ops: Sequence[tuple[str, int, str | None]]) -> None:
    """Applies operations validate_logger_operations accepted."""
    for name, op, value in ops:
        if op == SET and value is not None:
            _python_logger(name).setLevel(LEVELS[value])
        elif op == DELETE:
            _python_logger(name).setLevel(logging.NOTSET)
