"""Reader and Writer for Kafka's wire primitives.

The Reader works over a memoryview of one frame, so byte fields (record sets above all) come
back as zero-copy slices.  Any read past the end raises RemoteProtocolError.  The Writer
collects bytes, and lets a records field be a *region* (an object with ``__len__`` that the
transport sends by other means, e.g. ``os.sendfile``) so that a Fetch response never copies
segment data through Python.
"""

from __future__ import annotations

import struct
from typing import Any

from wire.errors import RemoteProtocolError

_i8 = struct.Struct(">b")
_i16 = struct.Struct(">h")
_u16 = struct.Struct(">H")
_i32 = struct.Struct(">i")
_u32 = struct.Struct(">I")
_i64 = struct.Struct(">q")
_f64 = struct.Struct(">d")

ZERO_UUID = bytes(16)


class Reader:
    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None):
        self.buf = buf if isinstance(buf, memoryview) else memoryview(buf)
        self.pos = pos
        self.end = len(self.buf) if end is None else end

    # -- helpers -----------------------------------------------------------------------------
    def _need(self, n: int) -> int:
        p = self.pos
        if n < 0 or p + n > self.end:
            raise RemoteProtocolError(f"need {n} bytes at {p}, frame ends at {self.end}")
        self.pos = p + n
        return p

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    # -- fixed width -------------------------------------------------------------------------
    def int8(self) -> int:
        return _i8.unpack_from(self.buf, self._need(1))[0]

    def boolean(self) -> bool:
        return self.buf[self._need(1)] != 0

    def int16(self) -> int:
        return _i16.unpack_from(self.buf, self._need(2))[0]

    def uint16(self) -> int:
        return _u16.unpack_from(self.buf, self._need(2))[0]

    def int32(self) -> int:
        return _i32.unpack_from(self.buf, self._need(4))[0]

    def uint32(self) -> int:
        return _u32.unpack_from(self.buf, self._need(4))[0]

    def int64(self) -> int:
        return _i64.unpack_from(self.buf, self._need(8))[0]

    def float64(self) -> float:
        return _f64.unpack_from(self.buf, self._need(8))[0]

    def uuid(self) -> bytes:
        p = self._need(16)
        return bytes(self.buf[p : p + 16])

    # -- varints -----------------------------------------------------------------------------
    def uvarint(self) -> int:
        buf, pos, end = self.buf, self.pos, self.end
        result = shift = 0
        while True:
            if pos >= end:
                raise RemoteProtocolError("truncated varint")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise RemoteProtocolError("varint too long")
        self.pos = pos
        return result

    def varint(self) -> int:
        v = self.uvarint()
        if v > 0xFFFFFFFF:
            raise RemoteProtocolError("varint out of int32 range")
        return (v >> 1) ^ -(v & 1)

    def varlong(self) -> int:
        v = self.uvarint()
        return (v >> 1) ^ -(v & 1)

    # -- strings and bytes -------------------------------------------------------------------
    def _text(self, n: int) -> str:
        p = self._need(n)
        try:
            return str(self.buf[p : p + n], "utf-8")
        except UnicodeDecodeError as e:
            raise RemoteProtocolError(f"invalid UTF-8 string: {e}") from None

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise RemoteProtocolError("null string in a non-nullable field")
        return self._text(n)

    def nullable_string(self) -> str | None:
        n = self.int16()
        return None if n < 0 else self._text(n)

    def compact_string(self) -> str:
        n = self.uvarint() - 1
        if n < 0:
            raise RemoteProtocolError("null string in a non-nullable field")
        return self._text(n)

    def compact_nullable_string(self) -> str | None:
        n = self.uvarint() - 1
        return None if n < 0 else self._text(n)

    def _slice(self, n: int) -> memoryview:
        p = self._need(n)
        return self.buf[p : p + n]

    def bytes_(self) -> bytes:
        n = self.int32()
        if n < 0:
            raise RemoteProtocolError("null bytes in a non-nullable field")
        return bytes(self._slice(n))

    def nullable_bytes(self) -> bytes | None:
        n = self.int32()
        return None if n < 0 else bytes(self._slice(n))

    def compact_bytes(self) -> bytes:
        n = self.uvarint() - 1
        if n < 0:
            raise RemoteProtocolError("null bytes in a non-nullable field")
        return bytes(self._slice(n))

    def compact_nullable_bytes(self) -> bytes | None:
        n = self.uvarint() - 1
        return None if n < 0 else bytes(self._slice(n))

    def records(self, compact: bool) -> memoryview | None:
        """A record set as a zero-copy slice of the frame (None when null)."""
        n = (self.uvarint() - 1) if compact else self.int32()
        return None if n < 0 else self._slice(n)

    # -- collections and tags ----------------------------------------------------------------
    def array_length(self, compact: bool) -> int:
        """Element count, or -1 for null; refuses counts the frame cannot hold."""
        n = (self.uvarint() - 1) if compact else self.int32()
        if n > self.end - self.pos:
            raise RemoteProtocolError(f"array of {n} elements with {self.end - self.pos} bytes left")
        return n if n >= 0 else -1

    def tag_header(self) -> tuple[int, int]:
        tag = self.uvarint()
        size = self.uvarint()
        if size > self.end - self.pos:
            raise RemoteProtocolError("tagged field runs past the frame")
        return tag, size

    def sub(self, size: int) -> Reader:
        """A reader over the next ``size`` bytes, advancing this one past them."""
        p = self._need(size)
        return Reader(self.buf, p, p + size)

    def raw(self, size: int) -> bytes:
        return bytes(self._slice(size))


class Writer:
    """Accumulates an encoding; ``chunks()`` yields bytes and region objects in order."""

    __slots__ = ("buf", "_chunks", "_size")

    def __init__(self) -> None:
        self.buf = bytearray()
        self._chunks: list[Any] = []
        self._size = 0

    def __len__(self) -> int:
        return self._size + len(self.buf)

    def chunks(self) -> list[Any]:
        if self.buf:
            self._chunks.append(bytes(self.buf))
            self._size += len(self.buf)
            self.buf = bytearray()
        return self._chunks

    def getvalue(self) -> bytes:
        """All bytes; regions must implement ``__bytes__`` to be flattened."""
        return b"".join(c if isinstance(c, bytes) else bytes(c) for c in self.chunks())

    # -- fixed width -------------------------------------------------------------------------
    def int8(self, v: int) -> None:
        self.buf += _i8.pack(v)

    def boolean(self, v: bool) -> None:
        self.buf.append(1 if v else 0)

    def int16(self, v: int) -> None:
        self.buf += _i16.pack(v)

    def uint16(self, v: int) -> None:
        self.buf += _u16.pack(v)

    def int32(self, v: int) -> None:
        self.buf += _i32.pack(v)

    def uint32(self, v: int) -> None:
        self.buf += _u32.pack(v)

    def int64(self, v: int) -> None:
        self.buf += _i64.pack(v)

    def float64(self, v: float) -> None:
        self.buf += _f64.pack(v)

    def uuid(self, v: bytes | None) -> None:
        self.buf += v if v else ZERO_UUID

    # -- varints -----------------------------------------------------------------------------
    def uvarint(self, v: int) -> None:
        buf = self.buf
        while v >= 0x80:
            buf.append((v & 0x7F) | 0x80)
            v >>= 7
        buf.append(v)

    def varint(self, v: int) -> None:
        self.uvarint(((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)

    def varlong(self, v: int) -> None:
        self.uvarint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)

    # -- strings and bytes -------------------------------------------------------------------
    def string(self, v: str | None) -> None:
        if v is None:
            self.buf += b"\xff\xff"
            return
        b = v.encode()
        self.buf += _i16.pack(len(b))
        self.buf += b

    nullable_string = string

    def compact_string(self, v: str | None) -> None:
        if v is None:
            self.buf.append(0)
            return
        b = v.encode()
        self.uvarint(len(b) + 1)
        self.buf += b

    compact_nullable_string = compact_string

    def bytes_(self, v: bytes | None) -> None:
        if v is None:
            self.buf += b"\xff\xff\xff\xff"
            return
        self.buf += _i32.pack(len(v))
        self.buf += v

    nullable_bytes = bytes_

    def compact_bytes(self, v: bytes | None) -> None:
        if v is None:
            self.buf.append(0)
            return
        self.uvarint(len(v) + 1)
        self.buf += v

    compact_nullable_bytes = compact_bytes

    def records(self, v: Any, compact: bool) -> None:
        """A record set: bytes-like, or a region (sent by the transport) or list of them."""
        if v is None:
            if compact:
                self.buf.append(0)
            else:
                self.buf += b"\xff\xff\xff\xff"
            return
        if isinstance(v, (bytes, bytearray, memoryview)):
            if compact:
                self.compact_bytes(v)
            else:
                self.bytes_(v)
            return
        parts = v if isinstance(v, list) else [v]
        n = sum(len(p) for p in parts)
        if compact:
            self.uvarint(n + 1)
        else:
            self.int32(n)
        for p in parts:
            if isinstance(p, (bytes, bytearray, memoryview)):
                self.buf += p
            else:
                self.chunks()
                self._chunks.append(p)
                self._size += len(p)

    # -- collections and tags ----------------------------------------------------------------
    def array_length(self, n: int | None, compact: bool) -> None:
        """``n`` is None for a null array."""
        if compact:
            self.uvarint(0 if n is None else n + 1)
        else:
            self.int32(-1 if n is None else n)

    def raw(self, b: bytes) -> None:
        self.buf += b

    def tagged(self, fields: list[tuple[int, bytes]]) -> None:
        """Writes a tagged-field section from (tag, encoded value) pairs in tag order."""
        self.uvarint(len(fields))
        for tag, data in fields:
            self.uvarint(tag)
            self.uvarint(len(data))
            self.buf += data
