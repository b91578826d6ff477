"""The group metadata hash of KIP-1101: Kafka 4.4 keeps one 64-bit hash of the subscribed
topics in a modern group's metadata record, and bumps the group epoch when it changes (a topic
made, deleted, grown, or moved between racks).

Kafka feeds hash4j's streaming XXH3-64 (seed 0), which hashes the same bytes as one-shot
XXH3-64 over the concatenation.  hash4j writes ints and longs little endian, and a ``String``
as its UTF-16 code units (little endian) followed by its length as an int.

A topic's hash: the magic byte 0, the topic id's two longs, the name, the partition count,
then for each partition its index and its replicas' racks (sorted; each as its length then
the string).  The group's hash: the topic hashes as longs, in topic-name order; 0 for none.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping

TOPIC_HASH_MAGIC_BYTE = 0

_M64 = (1 << 64) - 1
_P32_1, _P32_2, _P32_3 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D
_P64_1, _P64_2, _P64_3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P64_4, _P64_5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
_PMX1, _PMX2 = 0x165667919E3779F9, 0x9FB21C651E98DF25

#: XXH3's default secret (192 bytes)
_SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
    "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
    "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e")


def _u64(b: bytes, i: int) -> int:
    return int.from_bytes(b[i:i + 8], "little")


def _u32(b: bytes, i: int) -> int:
    return int.from_bytes(b[i:i + 4], "little")


def _fold(a: int, b: int) -> int:
    p = a * b
    return (p ^ (p >> 64)) & _M64


def _avalanche(h: int) -> int:
    h ^= h >> 37
    h = (h * _PMX1) & _M64
    return h ^ (h >> 32)


def _xxh64_avalanche(h: int) -> int:
    h ^= h >> 33
    h = (h * _P64_2) & _M64
    h ^= h >> 29
    h = (h * _P64_3) & _M64
    return h ^ (h >> 32)


def _mix16(data: bytes, i: int, s: int) -> int:
    return _fold(_u64(data, i) ^ _u64(_SECRET, s), _u64(data, i + 8) ^ _u64(_SECRET, s + 8))


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def xxh3_64(data: bytes) -> int:
    """XXH3-64 with seed 0 and the default secret, as an unsigned int."""
    n = len(data)
    if n == 0:
        return _xxh64_avalanche(_u64(_SECRET, 56) ^ _u64(_SECRET, 64))
    if n <= 3:
        combined = (data[0] << 16) | (data[n >> 1] << 24) | data[-1] | (n << 8)
        return _xxh64_avalanche(combined ^ (_u32(_SECRET, 0) ^ _u32(_SECRET, 4)))
    if n <= 8:
        x = ((_u32(data, n - 4) + (_u32(data, 0) << 32))
             ^ (_u64(_SECRET, 8) ^ _u64(_SECRET, 16)))
        x ^= _rotl(x, 49) ^ _rotl(x, 24)
        x = (x * _PMX2) & _M64
        x ^= (x >> 35) + n
        x = (x * _PMX2) & _M64
        return x ^ (x >> 28)
    if n <= 16:
        lo = _u64(data, 0) ^ (_u64(_SECRET, 24) ^ _u64(_SECRET, 32))
        hi = _u64(data, n - 8) ^ (_u64(_SECRET, 40) ^ _u64(_SECRET, 48))
        swapped = int.from_bytes(lo.to_bytes(8, "little"), "big")
        return _avalanche((n + swapped + hi + _fold(lo, hi)) & _M64)
    if n <= 128:
        acc = n * _P64_1
        rounds = (n - 1) // 32  # pairs of 16-byte chunks beyond the first, from both ends
        for r in range(rounds, -1, -1):
            acc += _mix16(data, 16 * r, 32 * r) + _mix16(data, n - 16 * (r + 1), 32 * r + 16)
        return _avalanche(acc & _M64)
    if n <= 240:
        acc = n * _P64_1
        for i in range(8):
            acc += _mix16(data, 16 * i, 16 * i)
        acc = _avalanche(acc & _M64)
        for i in range(8, n // 16):
            acc += _mix16(data, 16 * i, 16 * (i - 8) + 3)
        acc += _mix16(data, n - 16, 136 - 17)
        return _avalanche(acc & _M64)
    return _long(data)


def _accumulate(acc: list[int], data: bytes, i: int, s: int) -> None:
    for lane in range(8):
        v = _u64(data, i + 8 * lane)
        k = v ^ _u64(_SECRET, s + 8 * lane)
        acc[lane ^ 1] = (acc[lane ^ 1] + v) & _M64
        acc[lane] = (acc[lane] + (k & 0xFFFFFFFF) * (k >> 32)) & _M64


def _long(data: bytes) -> int:
    n = len(data)
    acc = [_P32_3, _P64_1, _P64_2, _P64_3, _P64_4, _P32_2, _P64_5, _P32_1]
    stripes_per_block = (len(_SECRET) - 64) // 8
    block = 64 * stripes_per_block
    blocks = (n - 1) // block
    for b in range(blocks):
        for s in range(stripes_per_block):
            _accumulate(acc, data, b * block + 64 * s, 8 * s)
        for lane in range(8):  # scramble
            a = acc[lane]
            a ^= a >> 47
            a ^= _u64(_SECRET, len(_SECRET) - 64 + 8 * lane)
            acc[lane] = (a * _P32_1) & _M64
    stripes = ((n - 1) - block * blocks) // 64
    for s in range(stripes):
        _accumulate(acc, data, blocks * block + 64 * s, 8 * s)
    _accumulate(acc, data, n - 64, len(_SECRET) - 64 - 7)
    result = n * _P64_1
    for i in range(4):
        result += _fold(acc[2 * i] ^ _u64(_SECRET, 11 + 16 * i),
                        acc[2 * i + 1] ^ _u64(_SECRET, 11 + 16 * i + 8))
    return _avalanche(result & _M64)


def _signed(h: int) -> int:
    return h - (1 << 64) if h >= 1 << 63 else h


def _string(s: str) -> bytes:
    """hash4j's putString: the UTF-16 code units, then the length (in code units)."""
    units = s.encode("utf-16-le")
    return units + struct.pack("<i", len(units) // 2)


def topic_hash(topic_id: bytes, name: str, partition_racks: list[Iterable[str]]) -> int:
    """Kafka's ``Utils.computeTopicHash`` (a signed long): ``partition_racks[i]`` holds the
    racks of partition i's replicas' brokers (those with a rack)."""
    out = bytearray([TOPIC_HASH_MAGIC_BYTE])
    out += topic_id[:8][::-1] + topic_id[8:][::-1]  # two big-endian longs, written LE
    out += _string(name)
    out += struct.pack("<i", len(partition_racks))
    for i, racks in enumerate(partition_racks):
        out += struct.pack("<i", i)
        for rack in sorted(racks):
            out += struct.pack("<i", len(rack.encode("utf-16-le")) // 2) + _string(rack)
    return _signed(xxh3_64(bytes(out)))


def group_hash(topic_hashes: Mapping[str, int]) -> int:
    """Kafka's ``Utils.computeGroupHash``: 0 without topics."""
    if not topic_hashes:
        return 0
    data = b"".join(struct.pack("<q", topic_hashes[name]) for name in sorted(topic_hashes))
    return _signed(xxh3_64(data))
