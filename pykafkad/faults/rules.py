"""Per-request fault rules: the next N requests of an API (optionally only those naming one
topic, partition, group or transactional id) answer an error, wait, or lose their connection.

What franz-go's kfake (ControlKey) and librdkafka's mock cluster
(rd_kafka_mock_push_request_errors, RTT, broker down) give their users; rules fire in the
order they were added, and a rule with ``count`` None keeps firing until cleared."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from pykafkad.faults.matching import group_ids, topic_partitions, transactional_ids
from wire.errors import ErrorCode
from wire.messages import API_KEYS


class FaultRuleError(ValueError):
    """A rule that cannot be: unknown API or error name, nothing to do, a negative count."""


#: ``api="*"``: every API (a round-trip time for the whole node, as librdkafka's mock RTT)
ALL_APIS = -1


def api_key_of(api: int | str) -> int:
    """An API key from its number or Kafka's name (``Produce``, ``produce``, ``0``), or
    ALL_APIS for ``"*"``."""
    if api == "*":
        return ALL_APIS
    if isinstance(api, int) or (isinstance(api, str) and api.isdigit()):
        key = int(api)
        if key in API_KEYS:
            return key
        raise FaultRuleError(f"unknown API key {key}")
    wanted = api.replace("_", "").replace("-", "").lower()
    for key, spec in API_KEYS.items():
        if spec.name.lower() == wanted:
            return key
    raise FaultRuleError(f"unknown API {api!r}: give Kafka's name (e.g. Produce) or its key")


def error_code_of(error: int | str) -> int:
    """An error code from its number or Kafka's name (``NOT_LEADER_OR_FOLLOWER`` or 6)."""
    try:
        if isinstance(error, int) or error.lstrip("-").isdigit():
            return int(ErrorCode(int(error)))
        return int(ErrorCode[error.upper()])
    except (KeyError, ValueError):
        raise FaultRuleError(f"unknown error {error!r}: give Kafka's name "
                             "(e.g. NOT_LEADER_OR_FOLLOWER) or its code") from None


@dataclass
class FaultRule:
    """One rule.  ``error`` None with ``delay_ms`` only: the request is answered normally,
    late; ``close``: the connection closes (after the delay) without an answer."""

    rule_id: int
    api_key: int
    error: int | None = None
    delay_ms: int = 0
    close: bool = False
    #: requests left to fire on; None: every matching one until cleared
    count: int | None = 1
    topic: str | None = None
    partition: int | None = None
    group: str | None = None
    transactional_id: str | None = None
    #: how many requests it fired on so far
    fired: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["api"] = "*" if self.api_key == ALL_APIS else API_KEYS[self.api_key].name
        d["error_name"] = ErrorCode(self.error).name if self.error is not None else None
        return d

    def matches(self, request: Any, name_for_id: Callable[[bytes], str | None]) -> bool:
        if self.topic is not None or self.partition is not None:
            named = topic_partitions(request, name_for_id)
            if not any((self.topic is None or t == self.topic)
                       and (self.partition is None or p == self.partition) for t, p in named):
                return False
        if self.group is not None and self.group not in group_ids(request):
            return False
        return self.transactional_id is None or self.transactional_id in transactional_ids(request)


class FaultRules:
    """A node's rules, by API key: the request path looks its key up in ``by_key`` (one dict
    lookup, the whole cost while no rule exists)."""

    def __init__(self) -> None:
        self.by_key: dict[int, list[FaultRule]] = {}
        #: rules whose count is spent, still listed (with count 0) until cleared
        self.spent: list[FaultRule] = []
        self._ids = itertools.count(1)

    def add(self, api: int | str, *, error: int | str | None = None, count: int | None = 1,
            delay_ms: int = 0, close: bool = False, topic: str | None = None,
            partition: int | None = None, group: str | None = None,
            transactional_id: str | None = None) -> FaultRule:
        key = api_key_of(api)
        code = error_code_of(error) if error is not None else None
        if code is None and not delay_ms and not close:
            raise FaultRuleError("a rule needs an error, a delay or close")
        if code is not None and close:
            raise FaultRuleError("a rule answers an error or closes the connection, not both")
        if count is not None and count < 1:
            raise FaultRuleError(f"count must be at least 1 (or None: until cleared), got {count}")
        if delay_ms < 0:
            raise FaultRuleError(f"delay_ms must not be negative, got {delay_ms}")
        if key == ALL_APIS and code is not None:
            raise FaultRuleError("an error answer needs one API (its response shape); "
                                 "api='*' takes delay_ms or close")
        rule = FaultRule(next(self._ids), key, code, int(delay_ms), bool(close), count, topic,
                         partition, group, transactional_id)
        for k in (API_KEYS if key == ALL_APIS else (key,)):  # the same rule under every key
            self.by_key.setdefault(k, []).append(rule)
        return rule

    def list(self) -> list[FaultRule]:
        armed = {r.rule_id: r for rules in self.by_key.values() for r in rules}
        return sorted([*armed.values(), *self.spent], key=lambda r: r.rule_id)

    def clear(self, rule_id: int | None = None) -> int:
        """Removes one rule (or all, spent ones too): how many were removed."""
        gone = {r.rule_id for r in self.list() if rule_id is None or r.rule_id == rule_id}
        self.spent = [r for r in self.spent if r.rule_id not in gone]
        for key in list(self.by_key):
            self._drop(key, gone)
        return len(gone)

    def _drop(self, key: int, rule_ids: set[int]) -> None:
        kept = [r for r in self.by_key[key] if r.rule_id not in rule_ids]
        if kept:
            self.by_key[key][:] = kept  # in place: a connection may hold this list
        else:
            del self.by_key[key]

    def take(self, rules: list[FaultRule], request: Any,
             name_for_id: Callable[[bytes], str | None]) -> FaultRule | None:
        """The first of ``rules`` (an API's) that matches ``request``, counted as fired; a
        rule whose count is spent is removed."""
        for rule in rules:
            if rule.matches(request, name_for_id):
                rule.fired += 1
                if rule.count is not None:
                    rule.count -= 1
                    if rule.count == 0:
                        self.spent.append(rule)
                        for key in (list(self.by_key) if rule.api_key == ALL_APIS
                                    else [rule.api_key]):
                            if key in self.by_key:
                                self._drop(key, {rule.rule_id})
                return rule
        return None
