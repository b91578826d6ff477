"""A three-node cluster whose every listener is secured, configured as an Apache Kafka cluster
would be: clients and brokers on SASL_SSL (brokers log in to each other with
``sasl.mechanism.inter.broker.protocol``), controllers on SASL_PLAINTEXT
(``sasl.mechanism.controller.protocol``), the StandardAuthorizer with the brokers' own user as
the super user. Registration, the raft quorum, replica fetchers, forwarding and transaction
markers all run over those listeners; a stock client produces to a replicated topic with
acks=all and in a transaction, and reads it all back."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.security.testkit import (
    CertificateAuthority,
    broker_ssl_config,
    client_settings,
    plain_jaas,
)
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S
from tests.kraft.quorum_helpers import wait_for

USERS = {"broker": "broker-secret", "alice": "alice-secret"}


def secured_config(ca: CertificateAuthority) -> dict[str, str]:
    jaas = plain_jaas(USERS, "broker", USERS["broker"])
    return {
        **broker_ssl_config(ca, ca.issue("localhost", server=True)),
        "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT,PLAINTEXT:SASL_SSL",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "sasl.mechanism.controller.protocol": "PLAIN",
        "listener.name.plaintext.plain.sasl.jaas.config": jaas,
        "listener.name.controller.plain.sasl.jaas.config": jaas,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:broker",
        "allow.everyone.if.no.acl.found": "true",
    }


def test_a_cluster_secured_end_to_end(tmp_path):
    ca = CertificateAuthority(tmp_path / "ca")
    alice = client_settings("SASL_SSL", ca, mechanism="PLAIN", username="alice",
                            password=USERS["alice"])["confluent"]
    topic = f"secured-{uuid.uuid4().hex[:6]}"
    with run_cluster(3, config=secured_config(ca), data_dir=tmp_path / "cluster") as c:
        conf = {"bootstrap.servers": c.bootstrap_servers, **alice}
        admin = AdminClient(conf)
        admin.create_topics([NewTopic(topic, 3, 3)])[topic].result(WAIT_S)
        wait_for(lambda: all(
            len(p.isrs) == 3 for p in admin.list_topics(topic, timeout=WAIT_S)
            .topics[topic].partitions.values()), "every replica in sync over SASL_SSL")
        producer = Producer({**conf, "acks": "all", "enable.idempotence": True})
        for i in range(30):
            producer.produce(topic, str(i).encode(), partition=i % 3)
        assert producer.flush(WAIT_S) == 0
        txn = Producer({**conf, "transactional.id": topic})
        txn.init_transactions(WAIT_S)
        txn.begin_transaction()
        for p in range(3):  # markers go to the three partitions' leaders
            txn.produce(topic, b"in-txn", partition=p)
        txn.commit_transaction(WAIT_S)
        consumer = Consumer({**conf, "group.id": topic, "auto.offset.reset": "earliest",
                             "isolation.level": "read_committed"})
        consumer.subscribe([topic])
        seen: list[bytes] = []
        try:
            def all_read() -> bool:
                m = consumer.poll(0.5)
                if m is not None and not m.error():
                    seen.append(m.value())
                return len(seen) >= 33
            wait_for(all_read, "33 records over SASL_SSL")
        finally:
            consumer.close()
        assert sorted(seen) == sorted([str(i).encode() for i in range(30)] + [b"in-txn"] * 3)
