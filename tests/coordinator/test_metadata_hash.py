"""The KIP-1101 group metadata hash: XXH3-64 as the reference xxHash computes it, and the
hashes Apache Kafka 4.4 wrote in ShareGroupMetadata records (captured from the reference
broker: one share consumer subscribed to a 2-partition topic, no racks)."""

from __future__ import annotations

import ctypes
import ctypes.util
import random

import pytest

from pykafkad.coordinator.metadata_hash import group_hash, topic_hash, xxh3_64

#: (topic id, name, partitions, the group hash Kafka 4.4 wrote, as an unsigned long)
KAFKA_GROUPS = [
    ("f4071b54431d4d70b43d0e19482efd2c", "t-c092c6", 2, 0xE77DD98672BB580E),
    ("b2478829ae014e66bc216f1885343758", "t-2ae935", 2, 0x9D86ACA050860763),
]


@pytest.mark.parametrize(("topic_id", "name", "partitions", "expected"), KAFKA_GROUPS)
def test_the_hash_kafka_wrote(topic_id, name, partitions, expected):
    t = topic_hash(bytes.fromhex(topic_id), name, [[] for _ in range(partitions)])
    assert group_hash({name: t}) & (2**64 - 1) == expected


def test_no_topics_hash_to_zero():
    assert group_hash({}) == 0


def test_racks_and_partitions_change_the_topic_hash():
    tid = bytes(range(16))
    base = topic_hash(tid, "t", [[], []])
    assert topic_hash(tid, "t", [[], [], []]) != base
    assert topic_hash(tid, "t", [["r1"], []]) != base
    # the racks of a partition are sorted first
    assert topic_hash(tid, "t", [["b", "a"], []]) == topic_hash(tid, "t", [["a", "b"], []])


def _reference():
    path = ctypes.util.find_library("xxhash")
    if path is None:
        pytest.skip("libxxhash is not installed")
    lib = ctypes.CDLL(path)
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib


def test_xxh3_matches_the_reference_library_for_every_length_class():
    lib = _reference()
    rnd = random.Random(7)
    for n in [*range(0, 260), 1023, 1024, 1025, 2047, 2048, 4100]:
        data = rnd.randbytes(n)
        assert xxh3_64(data) == lib.XXH3_64bits(data, n), n


def test_xxh3_known_vector():
    # xxHash's sanity input shape: bytes i % 251
    assert xxh3_64(bytes(i % 251 for i in range(17))) == 0x9EF341A99DE37328
    assert xxh3_64(b"") == 0x2D06800538D394C2
