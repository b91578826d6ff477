"""Records inside a v2 batch: the ``Record`` value and the records-section codec.

Layout of one record (varints are zigzag, as in protobuf):
    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
    keyLength varint (-1 = null) | key | valueLength varint (-1 = null) | value
    headersCount varint | [headerKeyLength varint | headerKey | headerValueLength varint | value]

Decoding follows Kafka's ``DefaultRecord.readFrom``: any structural problem is INVALID_RECORD.
Header keys are text to clients but bytes on the wire; they are decoded as UTF-8 with
``surrogateescape`` and encoded back the same way, so a batch that the broker rewrites (compaction,
conversions) keeps the producer's exact bytes even when they are not valid UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wire.records.errors import invalid

Header = tuple[str, "bytes | None"]


class Record:
    """One record. ``offset``/``timestamp`` are absolute once read from a batch.

    To build a batch, only ``key``, ``value``, ``headers`` and optionally ``timestamp`` and
    ``offset_delta`` matter; the others are filled in by the decoder.
    """

    __slots__ = (
        "offset_delta",
        "timestamp_delta",
        "attributes",
        "key",
        "value",
        "headers",
        "offset",
        "timestamp",
    )

    def __init__(
        self,
        key: bytes | None = None,
        value: bytes | None = None,
        headers: list[Header] | None = None,
        timestamp: int | None = None,
        offset_delta: int | None = None,
        timestamp_delta: int = 0,
        attributes: int = 0,
        offset: int | None = None,
    ):
        self.key = key
        self.value = value
        self.headers = [] if headers is None else headers
        self.timestamp = timestamp
        self.offset_delta = offset_delta
        self.timestamp_delta = timestamp_delta
        self.attributes = attributes
        self.offset = offset

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return all(getattr(self, s) == getattr(other, s) for s in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )


# -- varints ----------------------------------------------------------------------------------


def _uvarint(data: bytes, pos: int, end: int, max_bytes: int) -> tuple[int, int]:
    result = shift = 0
    limit = pos + max_bytes
    while True:
        if pos >= end:
            raise invalid("record ends inside a varint")
        if pos >= limit:
            raise invalid("varint too long")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    v, pos = _uvarint(data, pos, end, 5)
    if v > 0xFFFFFFFF:
        raise invalid("varint out of int32 range")
    return (v >> 1) ^ -(v & 1), pos


def _varlong(data: bytes, pos: int, end: int) -> tuple[int, int]:
    v, pos = _uvarint(data, pos, end, 10)
    if v > 0xFFFFFFFFFFFFFFFF:
        raise invalid("varlong out of int64 range")
    return (v >> 1) ^ -(v & 1), pos


def put_varint(buf: bytearray, v: int) -> None:
    _put_uvarint(buf, ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)


def put_varlong(buf: bytearray, v: int) -> None:
    _put_uvarint(buf, ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _put_uvarint(buf: bytearray, v: int) -> None:
    while v >= 0x80:
        buf.append((v & 0x7F) | 0x80)
        v >>= 7
    buf.append(v)


# -- decoding ---------------------------------------------------------------------------------


def decode_records_section(
    data: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
) -> list[Record]:
    """Reads exactly ``count`` records filling ``data`` (already decompressed).

    Single-byte varints (offset deltas, short lengths, header counts) take an inline path: this
    loop is what reading a coordinator's topic at startup costs.
    """
    records: list[Record] = []
    append = records.append
    pos = 0
    end = len(data)
    for _ in range(count):
        length, pos = _varint(data, pos, end)
        if length <= 0 or length > end - pos:
            raise invalid(f"record of {length} bytes with {end - pos} left in the batch")
        body_start = pos
        body_end = pos + length
        attributes = data[pos]
        if attributes >= 0x80:
            attributes -= 0x100
        ts_delta, pos = _varlong(data, pos + 1, body_end)
        # offsetDelta
        b = data[pos] if pos < body_end else 0x80
        if b < 0x80:
            offset_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            offset_delta, pos = _varint(data, pos, body_end)
        # key
        b = data[pos] if pos < body_end else 0x80
        if b < 0x80:
            n = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            n, pos = _varint(data, pos, body_end)
        if n < 0:
            key = None
        elif n > body_end - pos:
            raise invalid(f"key of {n} bytes with {body_end - pos} left in the record")
        else:
            key = data[pos : pos + n]
            pos += n
        # value
        b = data[pos] if pos < body_end else 0x80
        if b < 0x80:
            n = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            n, pos = _varint(data, pos, body_end)
        if n < 0:
            value = None
        elif n > body_end - pos:
            raise invalid(f"value of {n} bytes with {body_end - pos} left in the record")
        else:
            value = data[pos : pos + n]
            pos += n
        # headers
        b = data[pos] if pos < body_end else 0x80
        if b == 0:
            headers: list[Header] = []
            pos += 1
        else:
            n_headers, pos = _varint(data, pos, body_end)
            if n_headers < 0 or n_headers > body_end - pos:
                raise invalid(f"invalid number of record headers {n_headers}")
            headers = []
            for _ in range(n_headers):
                klen, pos = _varint(data, pos, body_end)
                if klen < 0 or klen > body_end - pos:
                    raise invalid(f"invalid header key size {klen}")
                hkey = data[pos : pos + klen].decode("utf-8", "surrogateescape")
                hval, pos = _nullable_bytes(data, pos + klen, body_end)
                headers.append((hkey, hval))
        if pos != body_end:
            raise invalid(f"record declares {length} bytes but reads {pos - body_start}")
        append(
            Record(
                key,
                value,
                headers,
                base_timestamp + ts_delta if log_append_time is None else log_append_time,
                offset_delta,
                ts_delta,
                attributes,
                base_offset + offset_delta,
            )
        )
    if pos != end:
        raise invalid("bytes left in the batch after its declared record count")
    return records


def _nullable_bytes(data: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    n, pos = _varint(data, pos, end)
    if n < 0:
        return None, pos
    if n > end - pos:
        raise invalid(f"field of {n} bytes with {end - pos} left in the record")
    return data[pos : pos + n], pos + n


# -- encoding ---------------------------------------------------------------------------------


def encode_record(
    out: bytearray,
    offset_delta: int,
    timestamp_delta: int,
    key: Any,
    value: Any,
    headers: Iterable[tuple[str | bytes, Any]],
    attributes: int = 0,
) -> None:
    """Appends one record (length-prefixed) to ``out``."""
    body = bytearray((attributes & 0xFF,))
    put_varlong(body, timestamp_delta)
    put_varint(body, offset_delta)
    _put_nullable_bytes(body, key)
    _put_nullable_bytes(body, value)
    headers = list(headers)
    put_varint(body, len(headers))
    for hkey, hval in headers:
        if isinstance(hkey, str):
            hkey = hkey.encode("utf-8", "surrogateescape")
        elif hkey is None:
            raise ValueError("a record header key cannot be null")
        put_varint(body, len(hkey))
        body += hkey
        _put_nullable_bytes(body, hval)
    put_varint(out, len(body))
    out += body


def _put_nullable_bytes(buf: bytearray, v: Any) -> None:
    if v is None:
        buf.append(1)  # zigzag(-1)
        return
    put_varint(buf, len(v))
    buf += v
