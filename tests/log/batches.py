"""Small v2 record-batch builder/parser for the log tests (independent of wire/records/batch.py)."""

from __future__ import annotations

import struct

import crc32c

HEADER = struct.Struct(">qiibIhiqqqhii")


def _varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _record(offset_delta: int, ts_delta: int, key: bytes | None, value: bytes | None) -> bytes:
    body = bytearray(b"\x00")
    body += _varint(ts_delta)
    body += _varint(offset_delta)
    for part in (key, value):
        if part is None:
            body += _varint(-1)
        else:
            body += _varint(len(part)) + part
    body += _varint(0)  # headers
    return _varint(len(body)) + bytes(body)


def make_batch(
    values: list[bytes] | int = 1,
    *,
    timestamps: list[int] | None = None,
    timestamp: int = 1_000,
    base_offset: int = 0,
    leader_epoch: int = -1,
    attributes: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    payload: bytes | None = None,
    pad: int = 0,
) -> bytes:
    """A v2 batch as a producer sends it. ``values`` may be a count; ``pad`` grows each value.

    ``payload`` replaces the records section verbatim (e.g. bytes pretending to be compressed).
    """
    if isinstance(values, int):
        values = [b"v%d" % i + b"x" * pad for i in range(values)]
    if timestamps is None:
        timestamps = [timestamp] * len(values)
    base_ts = timestamps[0]
    if payload is None:
        records = b"".join(
            _record(i, ts - base_ts, b"k%d" % i, v)
            for i, (v, ts) in enumerate(zip(values, timestamps, strict=True))
        )
    else:
        records = payload
    count = len(values)
    length = HEADER.size - 12 + len(records)
    header = bytearray(
        HEADER.pack(
            base_offset,
            length,
            leader_epoch,
            2,
            0,
            attributes,
            count - 1,
            base_ts,
            max(timestamps),
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        )
    )
    data = header + records
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


class Batch:
    def __init__(self, data: bytes, position: int):
        (
            self.base_offset,
            self.batch_length,
            self.leader_epoch,
            self.magic,
            self.crc,
            self.attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.record_count,
        ) = HEADER.unpack_from(data, position)
        self.position = position
        self.size = self.batch_length + 12
        self.data = data[position : position + self.size]

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def crc_ok(self) -> bool:
        return crc32c.crc32c(self.data[21:]) == self.crc

    def body(self) -> bytes:
        """Everything the producer chose (from the CRC on)."""
        return self.data[17:]


def parse_batches(data: bytes) -> list[Batch]:
    out = []
    pos = 0
    while pos < len(data):
        b = Batch(data, pos)
        assert b.size >= 61 and pos + b.size <= len(data), "partial batch in read result"
        out.append(b)
        pos += b.size
    return out


class FakeClock:
    def __init__(self, now: int = 1_000_000):
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms
