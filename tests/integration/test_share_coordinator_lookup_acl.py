"""FindCoordinator with key type SHARE (2): share-partition leaders find the share coordinator
of a "group:topicId:partition" key with it, so Kafka 4.4 asks for CLUSTER_ACTION on the cluster
and fails the whole request without it (CLUSTER_AUTHORIZATION_FAILED on every key).  Group keys
from the same refused host are not concerned.  The refused client connects from 127.0.0.2
(test_cluster_denials.py's DENY); answers are compared with a live Kafka 4.4."""

from __future__ import annotations

import base64
import socket
import struct
import time
import uuid

import pytest

from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, needs_java
from tests.integration.test_cluster_denials import EVERY_ACL, OPEN, REFUSED_HOST, refusing
from wire.framing import (
    RequestHeader,
    encode_request,
    read_response_header,
    request_header_version,
    response_header_version,
)
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.find_coordinator_response import FindCoordinatorResponse
from wire.primitives import Reader


def kafka_uuid(n: int) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.UUID(int=n).bytes).decode().rstrip("=")


SHARE_KEYS = [f"g1:{kafka_uuid(7)}:0", f"g2:{kafka_uuid(9)}:3"]
#: keys SharePartitionKey.validate refuses (INVALID_REQUEST, each on its own)
MALFORMED = [f"g1:{uuid.UUID(int=7)}:0", f" :{kafka_uuid(7)}:0", f"g1:{kafka_uuid(7)}:x",
             f"g1:{kafka_uuid(7)}", f"g1:{kafka_uuid(7)}:0:1"]


def find(bootstrap: str, key_type: int, keys: list[str], source: str, version: int = 6):
    """FindCoordinator from ``source``: (error code, message, node id known) per key."""
    host, _, port = bootstrap.rpartition(":")
    header = RequestHeader(10, version, 11, "share-lookup", request_header_version(10, version))
    frame = encode_request(header, FindCoordinatorRequest(key_type=key_type,
                                                          coordinator_keys=keys))
    with socket.create_connection((host, int(port)), timeout=WAIT_S,
                                  source_address=(source, 0)) as s:
        s.sendall(frame)
        size = s.recv(4, socket.MSG_WAITALL)
        r = Reader(memoryview(s.recv(struct.unpack(">i", size)[0], socket.MSG_WAITALL)))
    read_response_header(r, response_header_version(10, version))
    answer = FindCoordinatorResponse.read(r, version)
    return [(c.key, c.error_code, c.error_message if c.error_code else None, c.node_id >= 0,
             c.host != "", c.port > 0) for c in answer.coordinators]


def found(bootstrap: str, source: str, key_type: int = 2, keys=SHARE_KEYS):
    """The answers once the internal topic (created on the first lookup) has leaders:
    COORDINATOR_NOT_AVAILABLE until then."""
    deadline = time.monotonic() + WAIT_S
    while True:
        got = find(bootstrap, key_type, keys, source)
        if all(row[1] != 15 for row in got) or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def lookups(bootstrap: str) -> dict:
    admin = refusing(bootstrap)
    try:
        return {
            "share, refused": find(bootstrap, 2, SHARE_KEYS, REFUSED_HOST),
            "share, allowed": found(bootstrap, "127.0.0.1"),
            "group, refused host": found(bootstrap, REFUSED_HOST, 0, ["g1"]),
            "share, malformed": found(bootstrap, "127.0.0.1", 2, MALFORMED + SHARE_KEYS),
            "share, v5": find(bootstrap, 2, SHARE_KEYS, "127.0.0.1", version=5),
            "share, v5 refused": find(bootstrap, 2, SHARE_KEYS, REFUSED_HOST, version=5),
        }
    finally:
        for f in admin.delete_acls([EVERY_ACL]).values():
            f.result(WAIT_S)


@pytest.fixture(scope="module")
def kafka_with_authorizer():
    from compat.kafka_broker import run_kafka

    with run_kafka("4.4.0", config=OPEN) as kafka:
        yield kafka


def test_share_key_lookup_needs_cluster_action():
    with run_broker(config=OPEN) as b:
        got = lookups(b.bootstrap_servers)
    assert got["share, refused"] == [
        (key, 31, "Cluster authorization failed.", False, False, False) for key in SHARE_KEYS]
    assert [row[1] for row in got["share, allowed"]] == [0, 0]
    assert [row[1] for row in got["group, refused host"]] == [0]
    assert [row[1] for row in got["share, malformed"]] == [42] * len(MALFORMED) + [0, 0]
    # before v6 a share key is an invalid request, and the cluster is not checked
    assert [row[1] for row in got["share, v5"]] == [42, 42]
    assert got["share, v5 refused"] == got["share, v5"]


def test_share_key_lookup_without_authorizer_is_answered():
    with run_broker() as b:
        assert [row[1] for row in found(b.bootstrap_servers, "127.0.0.1")] == [0, 0]


@needs_java
def test_share_key_lookup_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = lookups(b.bootstrap_servers)
    assert ours == lookups(f"127.0.0.1:{kafka_with_authorizer.port}")
