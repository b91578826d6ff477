"""Frames (int32 size prefix) and the request/response headers.

Header versions follow the request's flexibility: request header v2 (tagged fields) for
flexible request versions, else v1; response header v1 for flexible versions, else v0 —
except ApiVersions, whose response header is always v0 so that a client can read the
answer whatever version it tried.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from wire.errors import RemoteProtocolError
from wire.messages import API_KEYS
from wire.primitives import Reader, Writer

API_VERSIONS_KEY = 18
_SIZE = struct.Struct(">i")
_HDR = struct.Struct(">hhi")


@dataclass(slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    #: header version used (0, 1 or 2)
    version: int


def frame_size(prefix: bytes | bytearray | memoryview, max_bytes: int) -> int:
    """Reads the 4-byte size prefix; refuses sizes beyond ``max_bytes`` before any allocation."""
    (n,) = _SIZE.unpack_from(prefix, 0)
    if n < 0 or n > max_bytes:
        raise RemoteProtocolError(f"frame of {n} bytes exceeds socket.request.max.bytes={max_bytes}")
    return n


def request_header_version(api_key: int, api_version: int) -> int:
    spec = API_KEYS.get(api_key)
    if spec is None:
        return 1
    if spec.flexible_version is not None and api_version >= spec.flexible_version:
        return 2
    return 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    spec = API_KEYS.get(api_key)
    if spec is not None and spec.flexible_version is not None:
        if api_version >= spec.flexible_version:
            return 1
    return 0


def read_request_header(r: Reader) -> RequestHeader:
    """Parses the header at the start of a request frame; ``r`` is left at the body.

    An unknown API key or unsupported version still yields a header (the caller answers it);
    only bytes that cannot be a header raise RemoteProtocolError.
    """
    api_key, api_version, correlation_id = r.int16(), r.int16(), r.int32()
    version = request_header_version(api_key, api_version)
    client_id = r.nullable_string() if version >= 1 else None
    if version >= 2:
        for _ in range(r.uvarint()):
            _tag, size = r.tag_header()
            r.raw(size)
    return RequestHeader(api_key, api_version, correlation_id, client_id, version)


def write_request_header(w: Writer, header: RequestHeader) -> None:
    w.raw(_HDR.pack(header.api_key, header.api_version, header.correlation_id))
    if header.version >= 1:
        w.string(header.client_id)
    if header.version >= 2:
        w.uvarint(0)


def write_response_header(w: Writer, correlation_id: int, header_version: int) -> None:
    w.int32(correlation_id)
    if header_version >= 1:
        w.uvarint(0)


def read_response_header(r: Reader, header_version: int) -> int:
    correlation_id = r.int32()
    if header_version >= 1:
        for _ in range(r.uvarint()):
            _tag, size = r.tag_header()
            r.raw(size)
    return correlation_id


def encode_response(correlation_id: int, api_key: int, api_version: int, body) -> list:
    """A whole response frame as chunks (bytes and file regions), size prefix included."""
    w = Writer()
    w.raw(b"\0\0\0\0")
    write_response_header(w, correlation_id, response_header_version(api_key, api_version))
    body.write(w, api_version)
    chunks = w.chunks()
    size = len(w) - 4
    first = chunks[0]
    chunks[0] = _SIZE.pack(size) + first[4:]
    return chunks


def encode_request(header: RequestHeader, body) -> bytes:
    w = Writer()
    write_request_header(w, header)
    body.write(w, header.api_version)
    data = w.getvalue()
    return _SIZE.pack(len(data)) + data
