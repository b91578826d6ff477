"""The node's own client (pykafkad/network/client.py) over secured listeners, configured with
Kafka's listener settings: TLS, SASL PLAIN and SCRAM against pykafkad and Apache Kafka 4.4."""

from __future__ import annotations

import pytest
import trio

from pykafkad.config import BrokerConfig
from pykafkad.network.client import NodeClient
from pykafkad.security.client import AuthenticationError, ClientSecurity
from pykafkad.security.testkit import add_scram_users, broker_ssl_config
from pykafkad.testing import run_broker
from tests.integration.clients import needs_java
from tests.security.conftest import USERS, sasl_config
from wire.messages.metadata_request import MetadataRequest


def node_security(protocol: str, mechanism: str, password: str, ssl: dict | None = None):
    listener = protocol.lower()
    module = ("plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule")
    config = BrokerConfig({
        **(ssl or {}),
        "sasl.mechanism.inter.broker.protocol": mechanism,
        f"listener.name.{listener}.{mechanism.lower()}.sasl.jaas.config":
            f"org.apache.kafka.common.security.{module} required "
            f'username="alice" password="{password}";'})
    return ClientSecurity.from_config(config, protocol, protocol)


def metadata_brokers(bootstrap: str, security) -> int:
    host, port = bootstrap.rsplit(":", 1)

    async def main():
        client = NodeClient(host, int(port), security=security)
        try:
            md = await client.request(MetadataRequest(topics=None), 12)
            return len(md.brokers)
        finally:
            await client.aclose()

    return trio.run(main)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_node_client_over_sasl_ssl(mechanism, ca, server_cert):
    ssl = broker_ssl_config(ca, server_cert)
    with run_broker(config={**ssl, **sasl_config("SASL_SSL")}, security_protocol="SASL_SSL") as b:
        add_scram_users(b, USERS)
        security = node_security("SASL_SSL", mechanism, USERS["alice"], ssl)
        assert metadata_brokers(b.bootstrap_servers, security) == 1
        wrong = node_security("SASL_SSL", mechanism, "wrong", ssl)
        with pytest.raises(AuthenticationError):
            metadata_brokers(b.bootstrap_servers, wrong)


@needs_java
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_node_client_authenticates_to_apache_kafka(mechanism, secured_kafka):
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    kafka, kafka_sasl = secured_kafka
    if mechanism != "PLAIN":  # Kafka's SCRAM users live in its metadata: add alice there
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            "alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
            USERS["alice"].encode())])["alice"].result(30)
    assert metadata_brokers(kafka_sasl, node_security("SASL_PLAINTEXT", mechanism,
                                                      USERS["alice"])) == 1
    with pytest.raises(AuthenticationError, match="Authentication failed"):
        metadata_brokers(kafka_sasl, node_security("SASL_PLAINTEXT", mechanism, "wrong"))


