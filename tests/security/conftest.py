"""A throw-away CA for the security tests, and one secured Apache Kafka for the session."""

from __future__ import annotations

import pytest

from pykafkad.security.testkit import CertificateAuthority, plain_jaas

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


@pytest.fixture(scope="session")
def ca(tmp_path_factory) -> CertificateAuthority:
    return CertificateAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="session")
def server_cert(ca):
    return ca.issue("localhost", server=True)


def sasl_config(listener: str) -> dict[str, str]:
    """Every mechanism on ``listener``, PLAIN's users from its listener-scoped JAAS config."""
    prefix = f"listener.name.{listener.lower()}."
    module = "org.apache.kafka.common.security."
    return {
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        prefix + "plain.sasl.jaas.config": plain_jaas(USERS, "alice", USERS["alice"]),
        # Kafka needs a login module for every enabled mechanism
        prefix + "scram-sha-256.sasl.jaas.config": module + "scram.ScramLoginModule required;",
        prefix + "scram-sha-512.sasl.jaas.config": module + "scram.ScramLoginModule required;",
        prefix + "oauthbearer.sasl.jaas.config":
            module + "oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"admin\";",
    }


@pytest.fixture(scope="session")
def secured_kafka():
    """Apache Kafka 4.4 with a SASL_PLAINTEXT listener next to its PLAINTEXT one, configured
    as the pykafkad brokers of these tests are: (broker, the SASL listener's address)."""
    from compat.kafka_broker import free_port, run_kafka

    sasl_port = free_port()
    with run_kafka(config=sasl_config("SASL_PLAINTEXT"),
                   extra_listeners={"SASL_PLAINTEXT": sasl_port}) as kafka:
        yield kafka, f"127.0.0.1:{sasl_port}"
