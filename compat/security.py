"""The secured target: a broker whose clients connect over SASL_SSL with SCRAM-SHA-512 and
are authorized by the StandardAuthorizer, configured the same way on pykafkad and on Apache
Kafka (one server.properties dict for both).

Each broker has two listeners: SASL_SSL, which every scenario's clients use, and PLAINTEXT,
which only the harness uses (its raw-protocol probes, topic creation and ACLs) and whose
ANONYMOUS principal is a super user, as Kafka's own inter-broker listener is in such a setup.
The users are SCRAM credentials created through the PLAINTEXT listener with
AlterUserScramCredentials, as ``kafka-configs --alter --entity-type users`` creates them, so
the same request sets both brokers up.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from compat.runner import WAIT_S

MECHANISM = "SCRAM-SHA-512"
#: the user every scenario runs as (a super user) and the one the authorization scenario
#: runs as (no rights but the ACLs it is given)
ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
USER, USER_PASSWORD = "alice", "alice-secret"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@dataclass(frozen=True)
class ClientSecurity:
    """One user's connection settings, in each client's own vocabulary."""

    #: {"kafka-python": kwargs, "confluent": librdkafka properties, "java": Java properties}
    settings: dict
    username: str

    @property
    def kafka_python(self) -> dict:
        return self.settings["kafka-python"]

    @property
    def librdkafka(self) -> dict:
        return self.settings["confluent"]

    @property
    def java(self) -> dict:
        return self.settings["java"]

    def kcat_args(self) -> list[str]:
        """librdkafka's settings with PLAIN for SCRAM: Debian's kcat links librdkafka 2.0.2,
        and librdkafka before 2.6.1 repeats the client nonce in SCRAM's client-final message,
        which Kafka 4 refuses as "invalid credentials" (the strict RFC 5802 check); so kcat
        logs in with PLAIN over the same TLS listener."""
        conf = {**self.librdkafka, "sasl.mechanisms": "PLAIN"}
        return [a for k, v in conf.items() for a in ("-X", f"{k}={v}")]

    def spark_options(self) -> dict:
        """The Java client's properties as the Spark connector takes them (``kafka.`` prefix)."""
        return {f"kafka.{k}": v for k, v in self.java.items()}


@dataclass
class SecuredTarget:
    """A running secured broker: ``bootstrap`` (SASL_SSL, for the clients), ``harness``
    (PLAINTEXT, for the harness), and the settings of each user."""

    bootstrap: str
    harness: str
    admin: ClientSecurity
    user: ClientSecurity


def broker_config(ca, server_cert, sasl_port: int) -> dict[str, str]:
    """What both brokers get besides their PLAINTEXT listener: a SASL_SSL listener on
    ``sasl_port`` with SCRAM-SHA-512 (and PLAIN), and the StandardAuthorizer."""
    from pykafkad.security.testkit import broker_ssl_config, plain_jaas

    users = {ADMIN: ADMIN_PASSWORD, USER: USER_PASSWORD}
    return {
        **broker_ssl_config(ca, server_cert),
        "sasl.enabled.mechanisms": f"{MECHANISM},PLAIN",
        f"listener.name.sasl_ssl.{MECHANISM.lower()}.sasl.jaas.config": SCRAM_LOGIN,
        # PLAIN only for kcat (ClientSecurity.kcat_args); its users are the JAAS config's
        "listener.name.sasl_ssl.plain.sasl.jaas.config": plain_jaas(users, ADMIN, ADMIN_PASSWORD),
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "super.users": f"User:{ADMIN};User:ANONYMOUS",
    }


def _client(ca, username: str, password: str) -> ClientSecurity:
    from pykafkad.security.testkit import client_settings

    return ClientSecurity(client_settings("SASL_SSL", ca, mechanism=MECHANISM,
                                          username=username, password=password), username)


def create_users(harness: str, bootstrap: str, admin: ClientSecurity) -> None:
    """The SCRAM users, created through the PLAINTEXT listener; returns once the admin can
    log in on the SASL_SSL listener (the credentials reach the authenticator through the
    metadata log, a moment after the answer)."""
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    mechanism = ScramMechanism[MECHANISM.replace("-", "_")]
    upserts = [UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 4096),
                                            password.encode())
               for user, password in ((ADMIN, ADMIN_PASSWORD), (USER, USER_PASSWORD))]
    harness_admin = AdminClient({"bootstrap.servers": harness})  # kept until its futures end
    for f in harness_admin.alter_user_scram_credentials(upserts).values():
        f.result(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            AdminClient({"bootstrap.servers": bootstrap, **admin.librdkafka}).list_topics(
                timeout=5)
            return
        except Exception:  # librdkafka's KafkaException: not authenticated yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)  # the credentials' arrival has no notification to wait on


@contextlib.contextmanager
def _certificates():
    from pykafkad.security.testkit import CertificateAuthority

    tmp = tempfile.mkdtemp(prefix="compat-certs-")
    try:
        ca = CertificateAuthority(Path(tmp))
        yield ca, ca.issue("localhost", server=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _target(ca, bootstrap: str, harness: str) -> SecuredTarget:
    t = SecuredTarget(bootstrap, harness, _client(ca, ADMIN, ADMIN_PASSWORD),
                      _client(ca, USER, USER_PASSWORD))
    create_users(harness, bootstrap, t.admin)
    return t


@contextlib.contextmanager
def secured_pykafkad(config: dict[str, str] | None = None) -> Iterator[SecuredTarget]:
    from compat.kafka_broker import free_port
    from pykafkad.testing import run_broker

    with _certificates() as (ca, cert):
        plain, sasl = free_port(), free_port()
        settings = {
            "listeners": f"PLAINTEXT://127.0.0.1:{plain},SASL_SSL://127.0.0.1:{sasl}",
            **broker_config(ca, cert, sasl), **(config or {})}
        with run_broker(config=settings, port=plain):
            yield _target(ca, f"127.0.0.1:{sasl}", f"127.0.0.1:{plain}")


@contextlib.contextmanager
def secured_kafka(version: str | None = None,
                  config: dict[str, str] | None = None) -> Iterator[SecuredTarget]:
    from compat.kafka_broker import DEFAULT_VERSION, free_port, run_kafka

    with _certificates() as (ca, cert):
        sasl = free_port()
        with run_kafka(version or DEFAULT_VERSION,
                       config={**broker_config(ca, cert, sasl), **(config or {})},
                       extra_listeners={"SASL_SSL": sasl}) as kafka:
            yield _target(ca, f"127.0.0.1:{sasl}", kafka.bootstrap_servers)
