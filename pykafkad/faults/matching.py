"""What a request names: its topics and partitions, groups and transactional ids, found by
walking the decoded request, so that one rule filter works for every API that names them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: fields that name a topic in a request's topic entries (Produce ``name``, Fetch ``topic``)
_TOPIC_FIELDS = ("name", "topic")
#: fields that number a partition in a partition entry
_PARTITION_FIELDS = ("partition_index", "partition", "index")
#: FindCoordinator key types
GROUP_KEY, TRANSACTION_KEY = 0, 1


def _struct_items(value: Any) -> list:
    if isinstance(value, list) and value and hasattr(value[0], "__slots__"):
        return value
    return []


def _partitions_of(entry: Any) -> list[int] | None:
    """The partition numbers a topic entry lists (a list of ints or of partition structs);
    None when the entry has no partition list (it is no topic entry)."""
    for slot in entry.__slots__:
        value = getattr(entry, slot, None)
        if not isinstance(value, list) or "partition" not in slot:
            continue
        if all(isinstance(p, int) for p in value):
            return list(value)
        found = []
        for p in value:
            for field in _PARTITION_FIELDS:
                number = getattr(p, field, None)
                if isinstance(number, int):
                    found.append(number)
                    break
        return found
    return None


def topic_partitions(request: Any,
                     name_for_id: Callable[[bytes], str | None] = lambda _id: None,
                     ) -> list[tuple[str, int | None]]:
    """(topic, partition) pairs the request names; partition None where the request names
    the topic only (Metadata, CreateTopics, DeleteTopics)."""
    pairs: list[tuple[str, int | None]] = []
    stack = [request]
    while stack:
        obj = stack.pop()
        for slot in getattr(obj, "__slots__", ()):
            value = getattr(obj, slot, None)
            if isinstance(value, list) and value and isinstance(value[0], str) and "topic" in slot:
                pairs.extend((name, None) for name in value)  # DeleteTopics v0-5 topic_names
            for entry in _struct_items(value):
                name = _topic_name(entry, name_for_id)
                parts = _partitions_of(entry)
                if name is not None and (parts is not None or "topic" in slot):
                    pairs.extend([(name, p) for p in parts] if parts else [(name, None)])
                else:
                    stack.append(entry)
    return pairs


def _topic_name(entry: Any, name_for_id: Callable[[bytes], str | None]) -> str | None:
    for field in _TOPIC_FIELDS:
        name = getattr(entry, field, None)
        if isinstance(name, str) and name:
            return name
    topic_id = getattr(entry, "topic_id", None)
    if isinstance(topic_id, bytes) and any(topic_id):
        return name_for_id(topic_id)
    return None


def group_ids(request: Any) -> list[str]:
    """Groups the request names: ``group_id``, OffsetFetch v8+'s ``groups``, DescribeGroups'
    ``groups``, FindCoordinator's group keys."""
    found = []
    group_id = getattr(request, "group_id", None)
    if isinstance(group_id, str):
        found.append(group_id)
    groups = getattr(request, "groups", None)
    if isinstance(groups, list):
        found += [g if isinstance(g, str) else g.group_id for g in groups]
    found += _coordinator_keys(request, GROUP_KEY)
    return [g for g in found if g]


def transactional_ids(request: Any) -> list[str]:
    """Transactional ids the request names (Produce, InitProducerId, the txn APIs,
    FindCoordinator's transaction keys)."""
    found = []
    for field in ("transactional_id", "v3_and_below_transactional_id"):
        txn_id = getattr(request, field, None)
        if isinstance(txn_id, str):
            found.append(txn_id)
    for t in getattr(request, "transactions", None) or []:  # AddPartitionsToTxn v4+
        found.append(t.transactional_id)
    found += _coordinator_keys(request, TRANSACTION_KEY)
    return [t for t in found if t]


def _coordinator_keys(request: Any, key_type: int) -> list[str]:
    if type(request).__name__ != "FindCoordinatorRequest" or request.key_type != key_type:
        return []
    keys = list(request.coordinator_keys or [])
    if request.key:
        keys.append(request.key)
    return keys
