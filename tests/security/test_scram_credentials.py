"""Describe/AlterUserScramCredentials through confluent-kafka's admin client: a user created
this way logs in with SCRAM; refusals carry Apache Kafka 4.4's codes and messages."""

from __future__ import annotations

import uuid

from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from pykafkad.security.testkit import client_settings
from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, needs_java
from tests.security.conftest import sasl_config
from tests.security.test_listeners import confluent_round_trip

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


def outcome(futures) -> dict:
    out = {}
    for user, f in futures.items():
        try:
            value = f.result(WAIT_S)
            out[user] = sorted((i.mechanism.name, i.iterations)
                               for i in value.scram_credential_infos) if value else "ok"
        except Exception as e:  # noqa: BLE001 - the KafkaError is the answer
            err = e.args[0]
            out[user] = (err.name(), err.str())
    return out


def exchange(bootstrap: str, prefix: str) -> list:
    a = AdminClient({"bootstrap.servers": bootstrap})
    u = f"{prefix}-u"
    return [
        outcome(a.alter_user_scram_credentials([
            UserScramCredentialUpsertion(u, ScramCredentialInfo(SHA256, 4096), b"pw1"),
            UserScramCredentialUpsertion(u, ScramCredentialInfo(SHA512, 8192), b"pw2")])),
        outcome(a.alter_user_scram_credentials([
            UserScramCredentialUpsertion(u, ScramCredentialInfo(SHA256, 4096), b"pw1")])),
        outcome(a.alter_user_scram_credentials([
            UserScramCredentialUpsertion(u, ScramCredentialInfo(SHA512, 8192), b"pw2")])),
        outcome(a.describe_user_scram_credentials([u])),
        outcome(a.describe_user_scram_credentials([f"{prefix}-nobody"])),
        outcome(a.alter_user_scram_credentials([UserScramCredentialUpsertion(
            f"{prefix}-v", ScramCredentialInfo(SHA256, 1000), b"pw")])),
        outcome(a.alter_user_scram_credentials([UserScramCredentialUpsertion(
            f"{prefix}-v", ScramCredentialInfo(SHA256, 20000), b"pw")])),
        outcome(a.alter_user_scram_credentials([UserScramCredentialDeletion(
            f"{prefix}-nobody", SHA512)])),
        outcome(a.alter_user_scram_credentials([UserScramCredentialDeletion(u, SHA256)])),
        outcome(a.describe_user_scram_credentials([u])),
        outcome(a.alter_user_scram_credentials([UserScramCredentialDeletion(u, SHA512)])),
    ]


def normalized(answers: list, prefix: str) -> list:
    return [{k.replace(prefix, "P"): (v if not isinstance(v, tuple) else
                                      (v[0], v[1].replace(prefix, "P")))
             for k, v in a.items()} for a in answers]


def test_a_user_added_with_the_admin_client_logs_in_with_scram():
    config = sasl_config("SASL_PLAINTEXT")
    with run_broker(config=config, security_protocol="SASL_PLAINTEXT") as b:
        # the admin itself authenticates with PLAIN (a user of the JAAS config)
        admin_conf = client_settings("SASL_PLAINTEXT", mechanism="PLAIN", username="alice",
                                     password="alice-secret")["confluent"]
        a = AdminClient({"bootstrap.servers": b.bootstrap_servers, **admin_conf})
        assert outcome(a.alter_user_scram_credentials([UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(SHA512, 4096), b"carol-pw")])) == {"carol": "ok"}
        conf = client_settings("SASL_PLAINTEXT", mechanism="SCRAM-SHA-512", username="carol",
                               password="carol-pw")["confluent"]
        assert confluent_round_trip(b.bootstrap_servers, conf) == b"over-sasl_plaintext"


def test_answers_without_kafka():
    with run_broker() as b:
        got = exchange(b.bootstrap_servers, "p")
    assert got[0] == {"p-u": ("DUPLICATE_RESOURCE",
                              "A user credential cannot be altered twice in the same request")}
    assert got[3] == {"p-u": [("SCRAM_SHA_256", 4096), ("SCRAM_SHA_512", 8192)]}
    assert got[5] == {"p-v": ("UNACCEPTABLE_CREDENTIAL", "Too few iterations")}
    assert got[9] == {"p-u": [("SCRAM_SHA_512", 8192)]}


@needs_java
def test_answers_match_apache_kafka(secured_kafka):
    kafka, _ = secured_kafka
    prefix = f"tls-{uuid.uuid4().hex[:6]}"
    theirs = normalized(exchange(kafka.bootstrap_servers, prefix), prefix)
    with run_broker() as b:
        ours = normalized(exchange(b.bootstrap_servers, prefix), prefix)
    assert ours == theirs
