"""Kafka 4.4's topic name rules and messages (org.apache.kafka.common.internals.Topic)."""

from __future__ import annotations

import re

from pykafkad.controller.result import ApiError
from wire.errors import ErrorCode

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic_name(name: str) -> None:
    """Raises INVALID_TOPIC_EXCEPTION with Kafka 4.4's "Topic name is invalid: ..." text."""
    reason = None
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_NAME_LENGTH:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    elif not _LEGAL.fullmatch(name):
        reason = (f"'{name}' contains one or more characters other than ASCII alphanumerics, "
                  "'.', '_' and '-'")
    if reason is not None:
        raise ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {reason}")


def collision_key(name: str) -> str:
    """'.' and '_' collide in metric names, so Kafka refuses topics differing only there."""
    return name.replace(".", "_")
