"""A minimal blocking Kafka client built on the project's sans-IO ``wire`` codec.

It sends one request at a time on one connection, which is all the compatibility suite needs
to ask any broker (pykafkad or Apache Kafka) which APIs it advertises, and to drive an API
byte-exactly where no stock client exposes the fields (DescribeTopicPartitions cursors).
"""

from __future__ import annotations

import socket
import struct
from itertools import count

from wire.framing import (
    RequestHeader,
    encode_request,
    read_response_header,
    request_header_version,
    response_header_version,
)
from wire.messages import API_KEYS
from wire.primitives import Reader

API_VERSIONS = 18


class WireClient:
    def __init__(self, bootstrap: str, *, timeout: float = 30.0, client_id: str = "pykafkad-compat"):
        host, _, port = bootstrap.split(",")[0].rpartition(":")
        self.sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
        self.client_id = client_id
        self._ids = count(1)

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
                raise ConnectionError("connection closed by the broker")
            buf += chunk
        return bytes(buf)

    def request(self, api_key: int, version: int, body):
        """Sends ``body`` (a generated request object) and returns the decoded response."""
        correlation_id = next(self._ids)
        header = RequestHeader(api_key, version, correlation_id, self.client_id,
                               request_header_version(api_key, version))
        self.sock.sendall(encode_request(header, body))
        (size,) = struct.unpack(">i", self._recv_exact(4))
        r = Reader(memoryview(self._recv_exact(size)))
        got = read_response_header(r, response_header_version(api_key, version))
        if got != correlation_id:
            raise ConnectionError(f"correlation id {got} != {correlation_id}")
        return API_KEYS[api_key].response_type().read(r, version)

    def send(self, body, version: int):
        """``request`` with the API key taken from the request object."""
        return self.request(body.API_KEY, version, body)

    def api_versions(self) -> dict[int, tuple[int, int]]:
        req_type = API_KEYS[API_VERSIONS].request_type()
        resp = self.request(API_VERSIONS, 3, req_type(client_software_name="pykafkad-compat",
                                                      client_software_version="0"))
        return {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}


def advertised_apis(bootstrap: str) -> dict[int, tuple[int, int]]:
    """ApiVersions of the broker at ``bootstrap``: {api key: (min, max)}."""
    with WireClient(bootstrap) as c:
        return c.api_versions()


def topic_metadata(address: str, topics: list[str]) -> list:
    """The Metadata answer's topics from the broker at ``address`` itself (no auto-creation)."""
    from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic

    with WireClient(address) as c:
        md = c.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=t) for t in topics], allow_auto_topic_creation=False))
    return list(md.topics)


def cluster_brokers(bootstrap: str) -> dict[int, str]:
    """The brokers the broker at ``bootstrap`` lists in Metadata: {node id: "host:port"}."""
    from wire.messages.metadata_request import MetadataRequest

    with WireClient(bootstrap) as c:
        md = c.request(3, 12, MetadataRequest(topics=None, allow_auto_topic_creation=False))
    return {b.node_id: f"{b.host}:{b.port}" for b in md.brokers}
