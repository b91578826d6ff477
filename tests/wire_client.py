"""A minimal blocking Kafka client built on ``wire``, for protocol edge cases in tests.

Stock clients hide the exact bytes (fetch session epochs, error paths, version fallbacks);
this client sends one request object at a chosen version and returns the decoded response.
"""

from __future__ import annotations

import socket
import struct

from wire.framing import (
    RequestHeader,
    encode_request,
    read_response_header,
    request_header_version,
    response_header_version,
)
from wire.messages import API_KEYS
from wire.primitives import Reader


class WireClient:
    def __init__(self, host: str, port: int, client_id: str = "wire-client"):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.client_id = client_id
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            buf += chunk
        return bytes(buf)

    def send(self, request, version: int, *, expect_response: bool = True):
        api_key = request.API_KEY
        self.correlation_id += 1
        header = RequestHeader(api_key, version, self.correlation_id, self.client_id,
                               request_header_version(api_key, version))
        self.sock.sendall(encode_request(header, request))
        if not expect_response:
            return None
        return self.receive(api_key, version)

    def receive(self, api_key: int, version: int):
        (size,) = struct.unpack(">i", self._recv_exact(4))
        r = Reader(self._recv_exact(size))
        corr = read_response_header(r, response_header_version(api_key, version))
        assert corr == self.correlation_id
        return API_KEYS[api_key].response_type().read(r, version)
