"""Stock clients over each security protocol of a pykafkad listener: they connect,
authenticate, produce and consume; a wrong password gives each client's authentication
error with Kafka's message, compared with Apache Kafka 4.4 configured the same way."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from kafka import KafkaConsumer, KafkaProducer

from pykafkad.security.principal import KafkaPrincipal
from pykafkad.security.testkit import add_scram_users, broker_ssl_config, client_settings
from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, needs_java
from tests.security.conftest import USERS, sasl_config

#: (protocol, mechanism, client certificate?, key store kind)
CASES = {
    "ssl": ("SSL", None, False, "PEM"),
    "mtls-pkcs12": ("SSL", None, True, "PKCS12"),
    "sasl-plaintext-plain": ("SASL_PLAINTEXT", "PLAIN", False, None),
    "sasl-plaintext-scram-512": ("SASL_PLAINTEXT", "SCRAM-SHA-512", False, None),
    "sasl-ssl-scram-256": ("SASL_SSL", "SCRAM-SHA-256", False, "PEM"),
    "sasl-ssl-oauthbearer": ("SASL_SSL", "OAUTHBEARER", False, "PEM"),
}


def start(ca, server_cert, protocol, keystore, client_auth="none", extra=None):
    config = {}
    if protocol in ("SSL", "SASL_SSL"):
        config.update(broker_ssl_config(ca, server_cert, client_auth=client_auth, kind=keystore))
    if protocol.startswith("SASL"):
        config.update(sasl_config(protocol))
    config.update(extra or {})
    return run_broker(config=config, security_protocol=protocol)


def settings(ca, protocol, mechanism, client_cert=None, password=None):
    return client_settings(protocol, ca if "SSL" in protocol else None, mechanism=mechanism,
                           username="alice", password=password or USERS["alice"],
                           client_cert=client_cert)


def confluent_round_trip(bootstrap, conf) -> bytes:
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, **conf, "error_cb": errors.append})
    p.produce(topic, b"over-" + conf["security.protocol"].encode())
    assert p.flush(WAIT_S) == 0, errors
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, **conf,
                  "auto.offset.reset": "earliest"})
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                return m.value()
        raise AssertionError(f"nothing consumed from {topic}")
    finally:
        c.close()


def kafka_python_round_trip(bootstrap, conf) -> bytes:
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    p = KafkaProducer(bootstrap_servers=bootstrap, **conf)
    p.send(topic, b"over-" + conf["security_protocol"].encode()).get(WAIT_S)
    p.close()
    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                      consumer_timeout_ms=WAIT_S * 1000, **conf)
    try:
        return next(iter(c)).value
    finally:
        c.close()


def principals(broker) -> set[str]:
    return {str(c.principal) for c in broker.server.connections}


@pytest.mark.parametrize("case", CASES)
def test_confluent_kafka_produces_and_consumes(case, ca, server_cert):
    protocol, mechanism, mtls, keystore = CASES[case]
    client_cert = ca.issue("client-alice") if mtls else None
    with start(ca, server_cert, protocol, keystore, "required" if mtls else "none") as b:
        add_scram_users(b, USERS)
        conf = settings(ca, protocol, mechanism, client_cert)["confluent"]
        assert confluent_round_trip(b.bootstrap_servers, conf) == b"over-" + protocol.lower().encode()


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][1] != "OAUTHBEARER"])
def test_kafka_python_produces_and_consumes(case, ca, server_cert):
    protocol, mechanism, mtls, keystore = CASES[case]
    client_cert = ca.issue("client-alice") if mtls else None
    with start(ca, server_cert, protocol, keystore, "required" if mtls else "none") as b:
        add_scram_users(b, USERS)
        conf = settings(ca, protocol, mechanism, client_cert)["kafka-python"]
        assert kafka_python_round_trip(b.bootstrap_servers, conf) == b"over-" + protocol.encode()


def test_mtls_principal_is_the_certificate_subject_mapped_by_the_rules(ca, server_cert):
    client_cert = ca.issue("client-bob")
    rules = "RULE:^CN=(.*?),O=(.*)$/$1@$2/L,DEFAULT"
    with start(ca, server_cert, "SSL", "PEM", "required",
               {"listener.name.ssl.ssl.principal.mapping.rules": rules}) as b:
        conf = settings(ca, "SSL", None, client_cert)["kafka-python"]
        kafka_python_round_trip(b.bootstrap_servers, conf)
        p = KafkaProducer(bootstrap_servers=b.bootstrap_servers, **conf)
        try:
            p.partitions_for("any")
            assert "User:client-bob@pykafkad-test" in principals(b)
        finally:
            p.close()


def test_sasl_principal_is_the_user(ca, server_cert):
    with start(ca, server_cert, "SASL_PLAINTEXT", None) as b:
        add_scram_users(b, USERS)
        conf = settings(ca, "SASL_PLAINTEXT", "SCRAM-SHA-256")["kafka-python"]
        p = KafkaProducer(bootstrap_servers=b.bootstrap_servers, **conf)
        try:
            p.partitions_for("any")
            assert KafkaPrincipal("User", "alice") in {c.principal for c in b.server.connections}
        finally:
            p.close()


def confluent_auth_error(bootstrap, conf) -> str:
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, **conf, "error_cb": errors.append})
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        p.poll(0.2)
        auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
        if auth:
            return auth[0].str()
    raise AssertionError(f"no authentication error, got {errors}")


def wrong_password_errors(bootstrap, ca) -> dict:
    """confluent-kafka's authentication errors (kafka-python 3.0.12 logs its
    SaslAuthenticationFailedError and retries the bootstrap with backoff instead)."""
    out = {}
    for mechanism in ("PLAIN", "SCRAM-SHA-512"):
        conf = settings(ca, "SASL_PLAINTEXT", mechanism, password="wrong")
        out[mechanism, "confluent"] = confluent_auth_error(bootstrap, conf["confluent"])
    return out


def test_wrong_password_gives_the_clients_auth_error(ca, server_cert):
    with start(ca, server_cert, "SASL_PLAINTEXT", None) as b:
        add_scram_users(b, USERS)
        got = wrong_password_errors(b.bootstrap_servers, ca)
    assert "Authentication failed: Invalid username or password" in got["PLAIN", "confluent"]
    assert ("Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-512") in got["SCRAM-SHA-512", "confluent"]


@needs_java
def test_wrong_password_errors_match_apache_kafka(ca, server_cert, secured_kafka):
    _, kafka_sasl = secured_kafka
    with start(ca, server_cert, "SASL_PLAINTEXT", None) as b:
        add_scram_users(b, USERS)
        ours = wrong_password_errors(b.bootstrap_servers, ca)
    theirs = wrong_password_errors(kafka_sasl, ca)
    strip = lambda s: s.split(": ", 1)[-1].split(" (after")[0]  # noqa: E731 - address, timing
    assert {k: strip(v) for k, v in ours.items()} == {k: strip(v) for k, v in theirs.items()}


@needs_java
@pytest.mark.parametrize("case", CASES)
def test_java_client_produces_and_consumes(case, ca, server_cert, tmp_path):
    from tests.security.java_client import java_round_trip

    protocol, mechanism, mtls, keystore = CASES[case]
    client_cert = ca.issue("client-alice") if mtls else None
    with start(ca, server_cert, protocol, keystore, "required" if mtls else "none") as b:
        add_scram_users(b, USERS)
        conf = settings(ca, protocol, mechanism, client_cert)["java"]
        assert java_round_trip(b.bootstrap_servers, conf, tmp_path) == "ok over-java"


@needs_java
def test_java_client_wrong_password(ca, server_cert, tmp_path):
    from tests.security.java_client import java_round_trip

    with start(ca, server_cert, "SASL_SSL", "PEM") as b:
        add_scram_users(b, USERS)
        conf = settings(ca, "SASL_SSL", "SCRAM-SHA-256", password="wrong")["java"]
        assert java_round_trip(b.bootstrap_servers, conf, tmp_path) == (
            "error SaslAuthenticationException: Authentication failed during authentication due "
            "to invalid credentials with SASL mechanism SCRAM-SHA-256")


def test_run_secured_broker_hands_out_working_client_settings():
    from pykafkad.testing import run_secured_broker

    with run_secured_broker({"dave": "dave-pw"}) as kafka:
        assert confluent_round_trip(kafka.bootstrap_servers,
                                    kafka.clients["confluent"]) == b"over-sasl_ssl"
        assert kafka_python_round_trip(kafka.bootstrap_servers,
                                       kafka.clients["kafka-python"]) == b"over-SASL_SSL"


def advertised_per_listener(plain: str, sasl: str, ca) -> dict[str, str]:
    """{listener: the broker address its Metadata advertises}, asked on each listener."""
    from confluent_kafka.admin import AdminClient

    conf = settings(ca, "SASL_PLAINTEXT", "PLAIN")["confluent"]
    out = {}
    for name, bootstrap, extra in (("PLAINTEXT", plain, {}), ("SASL_PLAINTEXT", sasl, conf)):
        md = AdminClient({"bootstrap.servers": bootstrap, **extra}).list_topics(timeout=WAIT_S)
        (broker,) = md.brokers.values()
        out[name] = f"{broker.host}:{broker.port}"
    return out


def test_a_single_node_serves_every_listener(ca, server_cert):
    """Kafka serves each entry of ``listeners``, and Metadata on each advertises that one:
    a PLAINTEXT and a SASL_PLAINTEXT listener on one node both carry clients."""
    from compat.kafka_broker import free_port

    plain, sasl = free_port(), free_port()
    config = {"listeners": f"PLAINTEXT://127.0.0.1:{plain},SASL_PLAINTEXT://127.0.0.1:{sasl}",
              **sasl_config("SASL_PLAINTEXT")}
    with run_broker(config=config, port=plain):
        addresses = (f"127.0.0.1:{plain}", f"127.0.0.1:{sasl}")
        assert advertised_per_listener(*addresses, ca) == {
            "PLAINTEXT": addresses[0], "SASL_PLAINTEXT": addresses[1]}
        conf = settings(ca, "SASL_PLAINTEXT", "PLAIN")["confluent"]
        assert confluent_round_trip(addresses[1], conf) == b"over-sasl_plaintext"
        assert confluent_round_trip(addresses[0], {"security.protocol": "plaintext"}) == (
            b"over-plaintext")


@needs_java
def test_every_listener_advertises_itself_as_on_apache_kafka(ca, secured_kafka):
    kafka, sasl = secured_kafka
    got = advertised_per_listener(kafka.bootstrap_servers, sasl, ca)
    assert got == {"PLAINTEXT": kafka.bootstrap_servers, "SASL_PLAINTEXT": sasl}
