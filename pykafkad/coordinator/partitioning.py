"""Which __consumer_offsets partition (and so which coordinator) owns a group.

Kafka maps a group id to ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``.
Java's ``String.hashCode`` runs over UTF-16 code units with 32-bit overflow, and Kafka's
``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0, so the same group lands on the same partition
here as on a Kafka broker reading the same topic.
"""

from __future__ import annotations

GROUP_METADATA_TOPIC = "__consumer_offsets"

_INT_MIN = -(1 << 31)


def java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode()``: s[0]*31^(n-1) + ... + s[n-1], as a signed int32."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """``org.apache.kafka.common.utils.Utils.abs``."""
    return 0 if n == _INT_MIN else abs(n)


def partition_for(group_id: str, num_partitions: int) -> int:
    return kafka_abs(java_string_hash(group_id)) % num_partitions
