"""Walking the records of a (decompressed) batch to check their structure, as Kafka's broker
reads them before it appends a produced batch.

Kafka reads records two ways, and accepts different bytes in each, so both are kept:

* ``full`` (``DefaultRecord.readFrom``): uncompressed batches, and compressed ones the broker
  rewrites. Each record must consume exactly its declared length.
* partial (``DefaultRecord.readPartiallyFrom``): compressed batches kept as sent. Keys, values
  and headers are skipped and the declared length is ignored (only a negative one fails).

Either way the records must end exactly where the batch does after ``recordCount`` records, a
varint may not run past 5 bytes (10 for a varlong) and header counts and header key lengths
may not be negative. Every structural fault is INVALID_RECORD, which Kafka answers without a
message, so the walk only needs to say "bad"; reading past the end raises IndexError, which
is turned into that same answer instead of bounds checks on every field.

The walk runs in C (``wire/records/_scan.c``, built when pykafkad is installed) when that
extension is there: the same checks and answers without an interpreter step per byte. The
Python walk below is the fallback for an install without a compiler, and the reference the C
one is tested against; ``PYKAFKAD_PURE_PYTHON=1`` (read at import) forces it.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from wire.records.errors import InvalidRecordError, invalid

try:
    from wire.records import _scan as _accelerator
except ImportError:  # built without a compiler: the Python walk
    _accelerator = None
if os.environ.get("PYKAFKAD_PURE_PYTHON", "") not in ("", "0"):
    _accelerator = None


def implementation() -> str:
    """Which walk ``scan_records`` uses: "c" or "python"."""
    return "python" if _accelerator is None else "c"


_MAX_LONG = (1 << 63) - 1
_MIN_LONG = -(1 << 63)


def _zigzag2(b: int, c: int) -> int:
    u = (b & 0x7F) | (c << 7)
    return (u >> 1) ^ -(u & 1)


#: a one-byte varint's value by its byte, None where the byte only starts a longer one; and a
#: two-byte one's by [second byte][first byte]: a table lookup costs fewer interpreter steps
#: than decoding, which is what a walk over thousands of records per batch comes down to
_ZZ1 = tuple((b >> 1) ^ -(b & 1) if b < 0x80 else None for b in range(256))
_ZZ2 = tuple(tuple(_zigzag2(b, c) for b in range(256)) for c in range(0x80))


class RecordScan(NamedTuple):
    """What the broker needs from the records beyond their structure."""

    #: smallest and largest timestampDelta
    min_timestamp_delta: int
    max_timestamp_delta: int
    #: offset deltas are exactly 0, 1, 2 ... (else Kafka rewrites a compressed batch); only
    #: the partial read checks them (always True from a full read, where they do not matter)
    in_order: bool
    #: indexes of the records without a key (only a compacted topic cares)
    keyless: list[int]


def _bad() -> InvalidRecordError:
    # Kafka's InvalidRecordException reaches the producer as INVALID_RECORD with no message
    return invalid(None)  # type: ignore[arg-type]


def _varint(data, pos: int) -> tuple[int, int]:
    """A zigzag varint of at most 5 bytes, truncated to 32 bits as Java's ByteUtils does."""
    u = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        u |= (b & 0x7F) << shift
        if b < 0x80:
            u &= 0xFFFFFFFF
            return (u >> 1) ^ -(u & 1), pos
        shift += 7
        if shift > 28:
            raise _bad()


def _varlong(data, pos: int) -> tuple[int, int]:
    """A zigzag varlong of at most 10 bytes, truncated to 64 bits."""
    u = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        u |= (b & 0x7F) << shift
        if b < 0x80:
            u &= 0xFFFFFFFFFFFFFFFF
            return (u >> 1) ^ -(u & 1), pos
        shift += 7
        if shift > 63:
            raise _bad()


def scan_records(data: bytes, count: int, *, full: bool = True) -> RecordScan:
    """Checks that ``data`` (a batch's records section, decompressed; any bytes-like) holds
    exactly ``count`` well-formed records; raises INVALID_RECORD otherwise."""
    if _accelerator is not None:
        got = _accelerator.scan(data, count, full)
        if got is None:
            raise _bad()
        return RecordScan(*got)
    return scan_records_python(data, count, full=full)


def scan_records_python(data: bytes, count: int, *, full: bool = True) -> RecordScan:
    """The pure-Python walk (``scan_records`` without the C extension)."""
    try:
        if full:
            return _scan_full(data, count)
        return _scan_partial(data, count)
    except IndexError:
        raise _bad() from None


def _scan_full(data: bytes, count: int) -> RecordScan:
    zz1 = _ZZ1
    zz2 = _ZZ2
    end = len(data)
    pos = 0
    ts_min = _MAX_LONG
    ts_max = _MIN_LONG
    keyless: list[int] = []
    for i in range(count):
        # length: 1 or 2 bytes from the tables (records up to 8 KiB), else the general reader
        b = data[pos]
        size = zz1[b]
        if size is not None:
            pos += 1
        else:
            c = data[pos + 1]
            if c < 0x80:
                size = zz2[c][b]
                pos += 2
            else:
                size, pos = _varint(data, pos)
        body_end = pos + size
        if size < 0 or body_end > end:
            raise _bad()
        # attributes (ignored by the broker), then timestampDelta
        ts = zz1[data[pos + 1]]
        if ts is not None:
            pos += 2
        else:
            ts, pos = _varlong(data, pos + 1)
        if ts < ts_min:
            ts_min = ts
        if ts > ts_max:
            ts_max = ts
        # offsetDelta: a fully read batch keeps (uncompressed) or renumbers (rewritten) them
        if data[pos] < 0x80:
            pos += 1
        elif data[pos + 1] < 0x80:
            pos += 2
        else:
            pos = _varint(data, pos)[1]
        # key
        n = zz1[data[pos]]
        if n is not None:
            pos += 1
        else:
            n, pos = _varint(data, pos)
        if n < 0:
            keyless.append(i)
        else:
            pos += n
        # value
        b = data[pos]
        n = zz1[b]
        if n is not None:
            pos += 1
        else:
            c = data[pos + 1]
            if c < 0x80:
                n = zz2[c][b]
                pos += 2
            else:
                n, pos = _varint(data, pos)
        if n > 0:
            pos += n
        # headers: a record without any ends with a zero count exactly at its end
        if pos + 1 == body_end and data[pos] == 0:
            pos = body_end
        else:
            pos = _skip_headers(data, pos, body_end, full=True)
            if pos != body_end:
                raise _bad()
    if pos != end:
        raise _bad()
    return RecordScan(ts_min, ts_max, True, keyless)


def _scan_partial(data: bytes, count: int) -> RecordScan:
    zz1 = _ZZ1
    zz2 = _ZZ2
    end = len(data)
    pos = 0
    ts_min = _MAX_LONG
    ts_max = _MIN_LONG
    in_order = True
    keyless: list[int] = []
    for i in range(count):
        # length: only its sign matters here
        b = data[pos]
        if b < 0x80:
            if b & 1:
                raise _bad()
            pos += 1
        elif data[pos + 1] < 0x80:
            if b & 1:
                raise _bad()
            pos += 2
        else:
            size, pos = _varint(data, pos)
            if size < 0:
                raise _bad()
        ts = zz1[data[pos + 1]]
        if ts is not None:
            pos += 2
        else:
            ts, pos = _varlong(data, pos + 1)
        if ts < ts_min:
            ts_min = ts
        if ts > ts_max:
            ts_max = ts
        # offsetDelta: whether it is i
        b = data[pos]
        if b < 0x80:
            if b != i << 1:
                in_order = False
            pos += 1
        else:
            c = data[pos + 1]
            if c < 0x80:
                if zz2[c][b] != i:
                    in_order = False
                pos += 2
            else:
                od, pos = _varint(data, pos)
                if od != i:
                    in_order = False
        n = zz1[data[pos]]
        if n is not None:
            pos += 1
        else:
            n, pos = _varint(data, pos)
        if n < 0:
            keyless.append(i)
        else:
            pos += n
        # a skipped key or value may not run past the end (reading past it raises IndexError)
        b = data[pos]
        n = zz1[b]
        if n is not None:
            pos += 1
        else:
            c = data[pos + 1]
            if c < 0x80:
                n = zz2[c][b]
                pos += 2
            else:
                n, pos = _varint(data, pos)
        if n > 0:
            pos += n
        if data[pos] == 0:
            pos += 1
        else:
            pos = _skip_headers(data, pos, end, full=False)
    if pos != end:
        raise _bad()
    return RecordScan(ts_min, ts_max, in_order, keyless)


def _skip_headers(data: bytes, pos: int, end: int, *, full: bool) -> int:
    n, pos = _varint(data, pos)
    if n < 0 or (full and n > len(data) - pos):
        raise _bad()
    for _ in range(n):
        klen, pos = _varint(data, pos)
        if klen < 0:
            raise _bad()
        pos += klen
        if pos > end:
            raise _bad()
        vlen, pos = _varint(data, pos)
        if vlen > 0:
            pos += vlen
            if pos > end:
                raise _bad()
    return pos


def record_summaries(data: bytes, count: int) -> list[tuple[int, int, int, int]]:
    """``(offsetDelta, timestampDelta, keyLength, valueLength)`` of each record of a section
    ``scan_records`` accepted (either way; lengths are -1 for null): the slow path that names
    the records a timestamp check refuses."""
    out = []
    pos = 0
    for _ in range(count):
        size, pos = _varint(data, pos)
        ts, p = _varlong(data, pos + 1)
        od, p = _varint(data, p)
        klen, p = _varint(data, p)
        p += max(klen, 0)
        vlen, p = _varint(data, p)
        p += max(vlen, 0)
        out.append((od, ts, klen, vlen))
        h, p = _varint(data, p)
        for _ in range(h):
            n, p = _varint(data, p)
            p += n
            n, p = _varint(data, p)
            p += max(n, 0)
        pos = p
    return out
