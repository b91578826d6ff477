"""Harness-side setup shared by the client modules: topics, checks, sample data."""

from __future__ import annotations

import hashlib
import time

from compat.runner import WAIT_S
from compat.scenarios import BASE_TS  # noqa: F401  (re-exported for the client modules)
from compat.wire_client import cluster_brokers, topic_metadata

#: the headers every client sends in the "headers" scenario: repeated keys, empty and null values
HEADERS = [("a", b"1"), ("b", b""), ("a", b"2"), ("n", None), ("utf8-\u00e9", b"\x00\xff")]
LARGE_OK = 2_500_000
LARGE_TOO_BIG = 3_500_000
LARGE_TOPIC_CONFIG = {"max.message.bytes": "3000000"}
CLIENT_MAX_REQUEST = 4_000_000


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict | None = None,
                 replication_factor: int = 1) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics(
        [NewTopic(name, partitions, replication_factor, config=config or {})])[name]
    fut.result(WAIT_S)
    wait_for_topic(bootstrap, name, partitions, replication_factor)


def wait_for_topic(bootstrap: str, name: str, partitions: int, replication_factor: int = 1) -> None:
    """Kafka acknowledges a creation once the controller has it; every broker learns it from the
    metadata log a moment later, and a client that asks a broker too early gets
    UNKNOWN_TOPIC_OR_PARTITION.  So the harness waits, as Kafka's own tests do
    (TestUtils.waitForAllPartitionsMetadata), until every broker's own Metadata answer shows
    every partition with a leader and (replicated) an ISR of every replica."""
    brokers = cluster_brokers(bootstrap)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if all(_led_on(address, name, partitions, replication_factor)
               for address in brokers.values()):
            return
        time.sleep(0.1)  # metadata has no change notification to wait on
    raise AssertionError(f"topic {name} not in every broker's metadata after {WAIT_S}s")


def _led_on(address: str, name: str, partitions: int, replication_factor: int) -> bool:
    """Whether the broker at ``address`` lists every partition of ``name`` with a leader.  A
    stock client picks the broker it asks itself, so this asks ``address`` on a connection of
    its own."""
    t = next(iter(topic_metadata(address, [name])), None)
    return (t is not None and t.error_code == 0 and len(t.partitions) == partitions and all(
        p.error_code == 0 and p.leader_id >= 0
        and (replication_factor == 1 or len(p.isr_nodes) == replication_factor)
        for p in t.partitions))


def expect(actual, expected, what: str) -> None:
    if actual != expected:
        a, e = repr(actual), repr(expected)
        raise AssertionError(f"{what}: got {a[:200]}, expected {e[:200]}")


def large_value(size: int) -> bytes:
    """Incompressible-ish bytes, so that no codec hides the size."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:size])


def values(n: int, prefix: str = "v") -> list[bytes]:
    return [f"{prefix}{i}".encode() for i in range(n)]


def share_groups_from_earliest(harness: str, *groups: str) -> None:
    """share.auto.offset.reset=earliest on each share group (a group config, set with
    IncrementalAlterConfigs as ``kafka-configs --entity-type groups`` sets it), so that they
    read records written before they joined."""
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": harness})
    resources = [ConfigResource(ResourceType.GROUP, g, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
        for g in groups]
    for f in admin.incremental_alter_configs(resources).values():
        f.result(WAIT_S)
