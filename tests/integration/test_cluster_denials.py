"""The CLUSTER_AUTHORIZATION_FAILED answers of the APIs whose one check is an operation on the
cluster (security/api_acls.py CLUSTER_GATED), messages included: Kafka 4.4's ControllerApis
names the request (``Request Request(processor=.., connectionId=.., ..) needs ALTER
permission.``, the Envelope inside when a broker forwarded it), the others carry the error's
default text or none.  The connection-specific parts (processor, connection id, session,
buffer sizes) are compared by their shape.

The refused client connects from 127.0.0.2, which a DENY names; everything else (the test's
admin client, Kafka's own inter-node connections) comes from 127.0.0.1, which is allowed."""

from __future__ import annotations

import re
import socket
import struct
import time
import uuid

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from pykafkad.security.authorizer import STANDARD_AUTHORIZER
from pykafkad.testing import run_broker, run_cluster
from tests.integration.clients import WAIT_S, needs_java
from wire.framing import (
    RequestHeader,
    encode_request,
    read_response_header,
    request_header_version,
    response_header_version,
)
from wire.messages import API_KEYS
from wire.messages import alter_client_quotas_request as quotas
from wire.messages import elect_leaders_request as elect
from wire.messages import read_share_group_state_request as share_state
from wire.primitives import Reader

OPEN = {"authorizer.class.name": STANDARD_AUTHORIZER, "allow.everyone.if.no.acl.found": "true"}
#: the refused client's address (all of 127/8 is this machine's loopback)
REFUSED_HOST = "127.0.0.2"
#: the gated APIs a broker listener serves, and those a controller listener serves
BROKER_GATED = (27, 34, 35, 43, 45, 46, 48, 49, 55, 57, 64, 74, 80, 81, 83, 84, 85, 86, 87)
CONTROLLER_GATED = (43, 45, 46, 49, 52, 53, 54, 55, 56, 57, 58, 59, 62, 63, 64, 67, 70, 73, 80,
                    81, 82)


def request_for(api_key: int):
    """A small request of ``api_key``, with items where the answer has per-item errors."""
    request = API_KEYS[api_key].request_type()()
    if api_key == 43:
        request.election_type, request.timeout_ms = 0, 1000
        request.topic_partitions = [elect.TopicPartitions(topic="t", partitions=[0, 1])]
    elif api_key == 49:
        request.entries = [quotas.EntryData(
            entity=[quotas.EntityData(entity_type="user", entity_name="u")],
            ops=[quotas.OpData(key="producer_byte_rate", value=1.0, remove=False)])]
    elif api_key == 84:
        request.group_id = "g"
        request.topics = [share_state.ReadStateData(topic_id=uuid.UUID(int=7).bytes, partitions=[
            share_state.PartitionData(partition=0, leader_epoch=0)])]
    return request


def ask(bootstrap: str, api_key: int, version: int):
    """One request from REFUSED_HOST: (the request's frame size, the decoded answer), or
    (size, "closed")."""
    host, _, port = bootstrap.rpartition(":")
    header = RequestHeader(api_key, version, 7, "denials",
                           request_header_version(api_key, version))
    frame = encode_request(header, request_for(api_key))
    with socket.create_connection((host, int(port)), timeout=WAIT_S,
                                  source_address=(REFUSED_HOST, 0)) as s:
        s.sendall(frame)
        size = s.recv(4, socket.MSG_WAITALL)
        if len(size) < 4:
            return len(frame) - 4, "closed"
        r = Reader(memoryview(s.recv(struct.unpack(">i", size)[0], socket.MSG_WAITALL)))
    read_response_header(r, response_header_version(api_key, version))
    return len(frame) - 4, API_KEYS[api_key].response_type().read(r, version)


#: Kafka's RequestChannel.Request string, its connection-specific values left out; pos and
#: lim must agree (a buffer read to its end)
REQUEST = re.compile(
    r"Request\(processor=(\d+), connectionId=[\d.]+:\d+-[\d.]+:\d+-\1-\d+, "
    r"session=org\.apache\.kafka\.network\.Session@[0-9a-f]+, ")
BUFFER = re.compile(r"buffer=java\.nio\.HeapByteBuffer\[pos=(\d+) lim=\1 cap=\d+\]")


def shape(text: str) -> str:
    return BUFFER.sub("buffer=HeapByteBuffer[N]", REQUEST.sub("Request(P, ID, SESSION, ", text))


def answers(address: str, keys) -> dict:
    """Each of ``keys``, at its oldest and newest version, refused by the listener at
    ``address``."""
    out = {}
    for key in keys:
        spec = API_KEYS[key]
        for version in sorted({spec.lowest_version, spec.highest_version}):
            _, answer = ask(address, key, version)
            out[spec.name, version] = shape(repr(answer))
    return out


def cluster_acl(host: str, permission) -> AclBinding:
    return AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                      "User:ANONYMOUS", host, AclOperation.ALL, permission)


EVERY_ACL = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)


def refusing(bootstrap: str):
    """Allows the cluster to 127.0.0.1 and denies it to REFUSED_HOST until the broker refuses
    that host; the ACLs are deleted afterwards."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_acls([cluster_acl("127.0.0.1", AclPermissionType.ALLOW),
                                cluster_acl(REFUSED_HOST, AclPermissionType.DENY)]).values():
        f.result(WAIT_S)
    deadline = time.monotonic() + WAIT_S  # ACLs reach the authorizer through the metadata log
    while ask(bootstrap, 35, 4)[1].error_code != 31:
        assert time.monotonic() < deadline, "the DENY never applied"
        time.sleep(0.1)
    return admin


def denials(bootstrap: str, controller: str | None = None) -> dict:
    """The broker listener's refusals, or the controller listener's at ``controller``."""
    admin = refusing(bootstrap)
    try:
        if controller is not None:
            return answers(controller, CONTROLLER_GATED)
        return answers(bootstrap, BROKER_GATED)
    finally:
        for f in admin.delete_acls([EVERY_ACL]).values():
            f.result(WAIT_S)


@pytest.fixture(scope="module")
def kafka_with_authorizer():
    from compat.kafka_broker import run_kafka

    with run_kafka("4.4.0", config=OPEN) as kafka:
        yield kafka


def test_a_forwarded_election_is_refused_with_the_request_named():
    with run_broker(config=OPEN) as b:
        refusing(b.bootstrap_servers)
        size, answer = ask(b.bootstrap_servers, 43, 2)
        quota_size, quota_answer = ask(b.bootstrap_servers, 48, 1)
    assert answer.error_code == 31
    [result] = answer.replica_election_results
    messages = {p.error_message for p in result.partition_result}
    assert len(messages) == 1
    message = messages.pop()
    # the controller's view: the request, read out of the Envelope the broker forwarded
    assert re.fullmatch(
        r"Request " + REQUEST.pattern + r"listenerName=ListenerName\(CONTROLLER\), securityProtocol=PLAINTEXT, "
        rf"buffer=java\.nio\.HeapByteBuffer\[pos={size} lim={size} cap=\d+\], "
        r"envelope=Optional\[" + REQUEST.pattern + r"listenerName=ListenerName\(CONTROLLER\), "
        r"securityProtocol=PLAINTEXT, buffer=java\.nio\.HeapByteBuffer\[pos=(\d+) lim=\3 "
        r"cap=\3\], envelope=Optional\.empty\)\]\) needs ALTER permission\.",
        message), message
    assert (quota_answer.error_code, quota_answer.error_message, quota_answer.entries) == (
        31, None, None)


def test_refusals_without_kafka():
    with run_broker(config=OPEN) as b:
        got = denials(b.bootstrap_servers)
    assert "error_message='Cluster authorization failed.'" in got["AlterClientQuotas", 1]
    assert "error_message='Request Request(P, ID, SESSION, " in got["UpdateFeatures", 2]
    assert "needs DESCRIBE permission." in got["ListPartitionReassignments", 0]


@needs_java
def test_refusals_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = denials(b.bootstrap_servers)
    assert ours == denials(f"127.0.0.1:{kafka_with_authorizer.port}")


@needs_java
def test_controller_listener_refusals_as_kafka(kafka_with_authorizer):
    """Straight to a controller listener (a node of a cluster: the single node's own controller
    listener is internal, and not gated): no Envelope in the request's string."""
    with run_cluster(1, config=OPEN) as c:
        ours = denials(c.bootstrap_servers, f"127.0.0.1:{c.nodes[1].controller_port}")
    kafka = kafka_with_authorizer
    assert ours["ElectLeaders", 2].count("envelope=Optional.empty) needs ALTER permission.") == 2
    assert ours == denials(f"127.0.0.1:{kafka.port}", f"127.0.0.1:{kafka.controller_port}")
