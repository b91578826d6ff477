"""The controller APIs of a one-voter KRaft node, answered as Apache Kafka 4.4's controller
answers the same frames: CreateTopics (with the topic's described configs, v5+) and a
forwarded request inside an Envelope, as a broker's ForwardingManager sends it. Raw frames:
no stock client sends these to a controller (the Java Admin refuses createTopics through
bootstrap.controllers)."""

from __future__ import annotations

import struct
import uuid

import pytest

from compat.wire_client import WireClient
from pykafkad.testing import run_cluster
from tests.integration.clients import needs_java
from wire.framing import (
    RequestHeader,
    read_response_header,
    request_header_version,
    write_request_header,
)
from wire.messages.create_topics_request import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from wire.messages.create_topics_response import CreateTopicsResponse
from wire.messages.default_principal_data import DefaultPrincipalData
from wire.messages.envelope_request import EnvelopeRequest
from wire.primitives import Reader, Writer

pytestmark = needs_java


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    with run_cluster(1, data_dir=tmp_path_factory.mktemp("kraft-apis")) as c:
        node = c.nodes[1]
        yield f"{node.host}:{node.controller_port}"


def kafka_controller(reference_kafka) -> str:
    return f"127.0.0.1:{reference_kafka.controller_port}"


def create_request(name: str) -> CreateTopicsRequest:
    return CreateTopicsRequest(topics=[CreatableTopic(
        name=name, num_partitions=2, replication_factor=1, assignments=[],
        configs=[CreatableTopicConfig(name="retention.ms", value="86400000")])],
        timeout_ms=30000, validate_only=False)


def shape(response: CreateTopicsResponse) -> list:
    """What both controllers must agree on (topic ids are random)."""
    return [(t.error_code, t.error_message, t.num_partitions, t.replication_factor,
             sorted((c.name, c.value, c.read_only, c.config_source, c.is_sensitive)
                    for c in t.configs or []))
            for t in response.topics]


def test_create_topics_is_answered_as_kafkas_controller(controller, reference_kafka):
    name = f"h-kraft-ct-{uuid.uuid4().hex[:8]}"
    answers = {}
    for side, where in (("pykafkad", controller), ("kafka", kafka_controller(reference_kafka))):
        with WireClient(where) as c:
            answers[side] = [c.request(19, 7, create_request(name)),
                             c.request(19, 7, create_request(name))]  # the second: exists
    ours, theirs = answers["pykafkad"], answers["kafka"]
    assert [t.error_code for t in ours[0].topics] == [0]
    assert {c.name for c in ours[0].topics[0].configs} == {
        c.name for c in theirs[0].topics[0].configs}
    assert shape(ours[0]) == shape(theirs[0])
    assert shape(ours[1]) == shape(theirs[1])  # TOPIC_ALREADY_EXISTS, Kafka's message


def envelope(inner: CreateTopicsRequest, correlation_id: int = 7) -> EnvelopeRequest:
    """The forwarded request as Kafka's ForwardingManager wraps it: the client's header and
    body, the client's principal (Kafka's DefaultPrincipalData, version-prefixed) and host."""
    w = Writer()
    header = RequestHeader(19, 7, correlation_id, "forwarded-client",
                           request_header_version(19, 7))
    write_request_header(w, header)
    inner.write(w, 7)
    principal = struct.pack(">h", 0) + DefaultPrincipalData(
        type="User", name="ANONYMOUS", token_authenticated=False).encode(0)
    return EnvelopeRequest(request_data=w.getvalue(), request_principal=principal,
                           client_host_address=bytes([127, 0, 0, 1]))


def test_an_envelope_is_unwrapped_handled_and_its_response_wrapped(controller,
                                                                    reference_kafka):
    name = f"h-kraft-env-{uuid.uuid4().hex[:8]}"
    answers = {}
    for side, where in (("pykafkad", controller), ("kafka", kafka_controller(reference_kafka))):
        with WireClient(where) as c:
            response = c.request(58, 0, envelope(create_request(name)))
        assert response.error_code == 0, side
        r = Reader(memoryview(response.response_data))
        assert read_response_header(r, 1) == 7  # the forwarded request's correlation id
        answers[side] = CreateTopicsResponse.read(r, 7)
    assert answers["pykafkad"].topics[0].error_code == 0
    assert shape(answers["pykafkad"]) == shape(answers["kafka"])
