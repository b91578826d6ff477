"""KIP-1101's metadata hash: what a group's subscribed topics looked like when its epoch was
last bumped, stored in ConsumerGroupMetadataValue so a reload (on either broker) can tell
whether the topics changed meanwhile.

Kafka hashes with XXH3-64 (hash4j's streaming sink, which hashes the same bytes as a one-shot
XXH3 over the little-endian serialisation of what was put): a topic's hash covers a magic byte,
its id, its name, its partition count and each partition's sorted replica racks; the group's
hash covers its topics' hashes sorted by topic name.  A missing topic hashes to 0 and a group
without topics to 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
from collections.abc import Iterable, Mapping

#: bumped by Kafka if the algorithm changes
TOPIC_HASH_MAGIC_BYTE = 0


def _load_xxh3():
    for name in ("libxxhash.so.0", ctypes.util.find_library("xxhash")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        fn = lib.XXH3_64bits
        fn.restype = ctypes.c_uint64
        fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return fn
    return None


_XXH3 = _load_xxh3()


def xxh3_64(data: bytes) -> int:
    """XXH3-64 (seed 0) of ``data`` as Java's signed long."""
    if _XXH3 is None:
        raise RuntimeError("libxxhash (XXH3) is needed for KIP-1101's metadata hash")
    value = _XXH3(data, len(data))
    return value - (1 << 64) if value >= 1 << 63 else value


def _string(s: str) -> bytes:
    """hash4j's putString: the UTF-16 code units (little endian), then the length in them."""
    units = s.encode("utf-16-le")
    return units + struct.pack("<i", len(units) // 2)


def topic_hash(topic_id: bytes, name: str, partition_racks: Iterable[Iterable[str]]) -> int:
    """Kafka's Utils.computeTopicHash of an existing topic; ``partition_racks`` has one entry
    (the racks of its replicas) per partition, in partition order."""
    racks = [sorted(r) for r in partition_racks]
    parts = [struct.pack("<b", TOPIC_HASH_MAGIC_BYTE),
             struct.pack("<q", int.from_bytes(topic_id[:8], "big", signed=True)),
             struct.pack("<q", int.from_bytes(topic_id[8:], "big", signed=True)),
             _string(name), struct.pack("<i", len(racks))]
    for i, rs in enumerate(racks):
        parts.append(struct.pack("<i", i))
        for rack in rs:
            parts.append(struct.pack("<i", len(rack.encode("utf-16-le")) // 2))
            parts.append(_string(rack))
    return xxh3_64(b"".join(parts))


def group_hash(topic_hashes: Mapping[str, int]) -> int:
    """Kafka's Utils.computeGroupHash: the topics' hashes in topic name order, hashed."""
    if not topic_hashes:
        return 0
    return xxh3_64(b"".join(struct.pack("<q", topic_hashes[name])
                            for name in sorted(topic_hashes)))
