"""SaslHandshake v0: after the handshake the SASL tokens travel bare (a 4-byte length and the
token, no Kafka request header) both ways, and a failed token is answered with nothing, the
connection just closes, as Apache Kafka 4.4's SaslServerAuthenticator does. kafka-python
speaks v0 when told the broker is older than 1.0 (``api_version=(0, 11, 0)``: 0.11 is the
oldest whose Produce and Fetch versions Kafka 4 still serves)."""

from __future__ import annotations

import base64
import json
import socket
import struct
import time
import uuid

import pytest
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kafka import KafkaConsumer, KafkaProducer
from kafka.net.sasl.oauth import AbstractTokenProvider

from pykafkad.security.principal import KafkaPrincipal
from pykafkad.security.scram import ScramClient
from pykafkad.security.testkit import add_scram_users, client_settings
from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, needs_java
from tests.security.conftest import USERS, sasl_config
from wire.framing import (
    RequestHeader,
    encode_request,
    read_response_header,
    request_header_version,
    response_header_version,
)
from wire.messages.metadata_request import MetadataRequest
from wire.messages.sasl_authenticate_request import SaslAuthenticateRequest
from wire.messages.sasl_authenticate_response import SaslAuthenticateResponse
from wire.messages.sasl_handshake_request import SaslHandshakeRequest
from wire.primitives import Reader

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
#: the newest broker version whose SaslHandshake is v0 and whose APIs Kafka 4 still serves
OLD_BROKER = (0, 11, 0)


def unsecured_jwt(sub: str, exp_s: float = 3600) -> str:
    """A token Kafka's default (unsecured) OAUTHBEARER validator accepts when ``exp_s`` > 0."""
    def part(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
    now = int(time.time())
    return f"{part({'alg': 'none'})}.{part({'sub': sub, 'iat': now, 'exp': now + exp_s})}."


class UnsecuredTokens(AbstractTokenProvider):
    def token(self):
        return unsecured_jwt("alice")


def v0_settings(mechanism: str) -> dict:
    conf = client_settings("SASL_PLAINTEXT", mechanism=mechanism, username="alice",
                           password=USERS["alice"])["kafka-python"]
    if mechanism == "OAUTHBEARER":
        conf["sasl_oauth_token_provider"] = UnsecuredTokens()
    return {**conf, "api_version": OLD_BROKER}


def round_trip(bootstrap: str, mechanism: str, while_consuming=None) -> bytes:
    """kafka-python, authenticating with SaslHandshake v0, produces one record and reads it."""
    conf = v0_settings(mechanism)
    topic = f"v0-{uuid.uuid4().hex[:8]}"
    p = KafkaProducer(bootstrap_servers=bootstrap, **conf)
    try:
        p.send(topic, mechanism.encode()).get(WAIT_S)
    finally:
        p.close()
    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                      consumer_timeout_ms=WAIT_S * 1000, **conf)
    try:
        value = next(iter(c)).value
        if while_consuming is not None:
            while_consuming()
        return value
    finally:
        c.close()


# -- raw frames: what each broker sends back, byte for byte -------------------------------------

class Raw:
    """One connection to a SASL listener: Kafka requests, then bare SASL frames."""

    def __init__(self, bootstrap: str):
        host, _, port = bootstrap.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=WAIT_S)
        self.correlation = 0

    def close(self) -> None:
        self.sock.close()

    def request(self, api_key: int, version: int, body) -> bytes:
        """Sends a request; its whole answer frame, as bytes (b"" when the broker closed)."""
        self.correlation += 1
        header = RequestHeader(api_key, version, self.correlation, "v0-test",
                               request_header_version(api_key, version))
        return self._send(encode_request(header, body))

    def token(self, token: bytes) -> bytes:
        """Sends a bare SASL token; the bare answer frame (b"" when the broker closed)."""
        return self._send(struct.pack(">i", len(token)) + token)

    def _send(self, data: bytes) -> bytes:
        try:
            self.sock.sendall(data)
            size = self._exactly(4)
            if len(size) < 4:
                return b""
            return size + self._exactly(struct.unpack(">i", size)[0])
        except ConnectionError:  # reset: the broker had closed
            return b""

    def _exactly(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:  # closed: whatever came before the close
                return bytes(buf)
            buf += chunk
        return bytes(buf)

    def closed(self) -> bool:
        """Whether the broker has closed the connection (EOF; WAIT_S bounds the wait)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionError:
            return True


def authenticate_answer(frame: bytes) -> tuple:
    """A SaslAuthenticate v1 answer: (error code, message, auth bytes, whether a session
    lifetime is set; an OAUTHBEARER token's own expiry makes the value itself vary)."""
    r = Reader(memoryview(frame[4:]))
    read_response_header(r, response_header_version(36, 1))
    a = SaslAuthenticateResponse.read(r, 1)
    return a.error_code, a.error_message, bytes(a.auth_bytes), a.session_lifetime_ms > 0


def exchange(bootstrap: str, version: int, mechanism: str, tokens) -> list:
    """A SaslHandshake of ``version`` for ``mechanism``, then each of ``tokens`` (bare after
    v0, in SaslAuthenticate v1 after v1; a callable gets the previous answer); every answer as
    bytes, then "metadata answered" / "closed" for what a Metadata v0 request gets."""
    c = Raw(bootstrap)
    try:
        out = [c.request(17, version, SaslHandshakeRequest(mechanism=mechanism))]
        challenge = b""
        for token in tokens:
            if callable(token):
                token = token(challenge)
            if version == 0:
                out.append(c.token(token))
                challenge = out[-1][4:]
            else:
                answer = c.request(36, 1, SaslAuthenticateRequest(auth_bytes=token))
                out.append(authenticate_answer(answer) if answer else b"")
                challenge = out[-1][2] if answer else b""
            if out[-1] == b"":
                break
        if out[-1] == b"":
            out.append("closed" if c.closed() else "open")
        else:
            answer = c.request(3, 0, MetadataRequest(topics=[]))
            out.append("metadata answered" if answer else "closed")
        return out
    finally:
        c.close()


def scram_tokens(mechanism: str, password: str) -> list:
    client = ScramClient(mechanism, "alice", password)
    return [client.first(), client.final]


def scram_shape(answers: list) -> list:
    """A SCRAM exchange with its random nonce, salt and signature reduced to their places."""
    def shape(answer):
        if isinstance(answer, tuple):
            return (*answer[:2], shape(answer[2]), *answer[3:])
        if isinstance(answer, bytes) and answer[4:6] in (b"r=", b"v="):
            return b"LEN:" + answer[4:6] + b"..."  # the nonces' lengths differ too
        if isinstance(answer, bytes) and answer[:2] in (b"r=", b"v="):
            return answer[:2] + b"..."
        return answer
    return [shape(a) for a in answers]


def raw_answers(bootstrap: str) -> dict:
    plain = lambda password: [f"\0alice\0{password}".encode()]  # noqa: E731 - RFC 4616
    oauth = lambda jwt: [f"n,,\x01auth=Bearer {jwt}\x01\x01".encode()]  # noqa: E731 - RFC 7628
    out = {}
    for version in (0, 1):
        out[version, "PLAIN"] = exchange(bootstrap, version, "PLAIN", plain(USERS["alice"]))
        out[version, "PLAIN wrong"] = exchange(bootstrap, version, "PLAIN", plain("wrong"))
        out[version, "PLAIN one field"] = exchange(bootstrap, version, "PLAIN", [b"alice"])
        out[version, "PLAIN five fields"] = exchange(bootstrap, version, "PLAIN",
                                                     [b"a\0alice\0pw\0d\0e"])
        out[version, "unknown mechanism"] = exchange(bootstrap, version, "NOPE", [b"x"])
        for m in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            out[version, m] = scram_shape(exchange(bootstrap, version, m,
                                                   scram_tokens(m, USERS["alice"])))
            out[version, m + " wrong"] = scram_shape(exchange(bootstrap, version, m,
                                                              scram_tokens(m, "wrong")))
        out[version, "OAUTHBEARER"] = exchange(bootstrap, version, "OAUTHBEARER",
                                               oauth(unsecured_jwt("alice")))
        out[version, "OAUTHBEARER expired"] = exchange(
            bootstrap, version, "OAUTHBEARER", [*oauth(unsecured_jwt("alice", -60)), b"\x01"])
    return out


def wait_for_login(bootstrap: str, mechanism: str) -> None:
    """Kafka applies a SCRAM credential a moment after AlterUserScramCredentials answers."""
    deadline = time.monotonic() + WAIT_S
    while exchange(bootstrap, 0, mechanism, scram_tokens(mechanism, USERS["alice"]))[-1] \
            != "metadata answered":
        assert time.monotonic() < deadline, f"Kafka never accepted alice with {mechanism}"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def kafka_v0(secured_kafka):
    """The secured Apache Kafka with alice's SCRAM credentials (added on its PLAINTEXT listener)."""
    kafka, sasl = secured_kafka
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    for m in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):  # one per request
        upsertion = UserScramCredentialUpsertion("alice", ScramCredentialInfo(m, 4096),
                                                 USERS["alice"].encode())
        admin.alter_user_scram_credentials([upsertion])["alice"].result(WAIT_S)
    for m in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        wait_for_login(sasl, m)
    return sasl


@pytest.fixture(scope="module")
def broker():
    with run_broker(config=sasl_config("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT") as b:
        add_scram_users(b, USERS)
        yield b


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_with_handshake_v0(broker, mechanism):
    seen = []

    def principals():
        seen.extend((c.sasl.unwrapped, c.principal) for c in broker.server.connections
                    if c.sasl is not None and c.sasl.authenticated)

    assert round_trip(broker.bootstrap_servers, mechanism, principals) == mechanism.encode()
    assert (True, KafkaPrincipal("User", "alice")) in seen


@needs_java
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_with_handshake_v0_against_apache_kafka(kafka_v0, mechanism):
    assert round_trip(kafka_v0, mechanism) == mechanism.encode()


def test_raw_answers(broker):
    got = raw_answers(broker.bootstrap_servers)
    handshake = got[0, "PLAIN"][0]
    assert got[0, "PLAIN"] == [handshake, b"\0\0\0\0", "metadata answered"]
    assert got[0, "PLAIN wrong"] == [handshake, b"", "closed"]
    assert got[0, "SCRAM-SHA-256 wrong"] == [handshake, b"LEN:r=...", b"", "closed"]
    assert got[0, "OAUTHBEARER expired"] == [
        handshake, b'\0\0\0\x1a{"status":"invalid_token"}', b"", "closed"]


@needs_java
def test_raw_answers_match_apache_kafka(broker, kafka_v0):
    ours = raw_answers(broker.bootstrap_servers)
    theirs = raw_answers(kafka_v0)
    assert ours == theirs
