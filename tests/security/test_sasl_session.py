"""A SASL listener's session rules: before authentication only ApiVersions and SaslHandshake
are served (anything else closes the connection, as Apache Kafka 4.4 does); KIP-368 session
lifetime and re-authentication by librdkafka."""

from __future__ import annotations

import time

from confluent_kafka import Producer

from compat.wire_client import WireClient
from pykafkad.security.testkit import add_scram_users, client_settings
from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, needs_java
from tests.security.conftest import USERS, sasl_config
from wire.messages.api_versions_request import ApiVersionsRequest
from wire.messages.metadata_request import MetadataRequest
from wire.messages.sasl_handshake_request import SaslHandshakeRequest


def before_authentication(bootstrap: str) -> dict:
    """What a raw client gets on a SASL listener before it authenticates."""
    out = {}
    with WireClient(bootstrap) as c:
        versions = c.request(18, 3, ApiVersionsRequest(client_software_name="t",
                                                       client_software_version="1"))
        keys = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
        out["sasl apis"] = (keys.get(17), keys.get(36))
        hs = c.request(17, 1, SaslHandshakeRequest(mechanism="NOPE"))
        out["unknown mechanism"] = (hs.error_code, sorted(hs.mechanisms))
        try:
            c.request(17, 1, SaslHandshakeRequest(mechanism="PLAIN"))
            out["after refusal"] = "answered"
        except (OSError, EOFError, ConnectionError):
            out["after refusal"] = "closed"
    with WireClient(bootstrap) as c:
        try:
            c.request(3, 12, MetadataRequest(topics=None, allow_auto_topic_creation=False))
            out["metadata first"] = "answered"
        except (OSError, EOFError, ConnectionError):
            out["metadata first"] = "closed"
    return out


def test_only_api_versions_and_handshake_before_authentication():
    with run_broker(config=sasl_config("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT") as b:
        got = before_authentication(b.bootstrap_servers)
    assert got == {"sasl apis": ((0, 1), (0, 2)),
                   "unknown mechanism": (33, ["OAUTHBEARER", "PLAIN", "SCRAM-SHA-256",
                                              "SCRAM-SHA-512"]),
                   "after refusal": "closed", "metadata first": "closed"}


@needs_java
def test_before_authentication_as_apache_kafka(secured_kafka):
    _, kafka_sasl = secured_kafka
    with run_broker(config=sasl_config("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT") as b:
        ours = before_authentication(b.bootstrap_servers)
    assert ours == before_authentication(kafka_sasl)


def test_librdkafka_reauthenticates_within_connections_max_reauth_ms():
    config = {**sasl_config("SASL_PLAINTEXT"),
              "listener.name.sasl_plaintext.connections.max.reauth.ms": "1500"}
    with run_broker(config=config, security_protocol="SASL_PLAINTEXT") as b:
        add_scram_users(b, USERS)
        conf = client_settings("SASL_PLAINTEXT", mechanism="SCRAM-SHA-256", username="alice",
                               password=USERS["alice"])["confluent"]
        p = Producer({"bootstrap.servers": b.bootstrap_servers, **conf})
        try:
            p.produce("reauth", b"before")
            assert p.flush(WAIT_S) == 0

            def reauthenticated() -> bool:
                return any(c.sasl is not None and c.sasl.reauthentications
                           for c in b.server.connections)

            deadline = time.monotonic() + WAIT_S
            while not reauthenticated() and time.monotonic() < deadline:
                p.poll(0.1)
            assert reauthenticated()
            p.produce("reauth", b"after")
            assert p.flush(WAIT_S) == 0
        finally:
            p.flush(1)
