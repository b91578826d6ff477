"""Throw-away TLS material and SASL users for tests: a CA, a broker certificate for localhost
and 127.0.0.1, client certificates, SCRAM credentials, and the matching settings for
kafka-python, confluent-kafka and the Java client.  Needs the ``cryptography`` package."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import os
import time
from dataclasses import dataclass
from pathlib import Path

import trio

from pykafkad.security.credentials import scram_credentials
from pykafkad.security.scram import MECHANISM_TYPES, MECHANISMS, MIN_ITERATIONS
from wire.messages.alter_user_scram_credentials_request import (
    AlterUserScramCredentialsRequest,
    ScramCredentialUpsertion,
)


def _key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _name(cn: str, org: str = "pykafkad-test"):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key) -> bytes:
    from cryptography.hazmat.primitives import serialization as s

    return key.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption())


def _pem_cert(cert) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding

    return cert.public_bytes(Encoding.PEM)


@dataclass
class Issued:
    """A certificate and its key, as PEM files and a PKCS12 store (password ``password``)."""

    cert_pem: Path
    key_pem: Path
    keystore_pem: Path  # key + chain in one file (Kafka's PEM key store)
    pkcs12: Path
    password: str = "test-password"


class CertificateAuthority:
    """A self-signed CA in ``directory`` that issues server and client certificates."""

    def __init__(self, directory: Path, name: str = "pykafkad test CA"):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes

        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = _key()
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(hours=1))
                     .not_valid_after(now + datetime.timedelta(days=2))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
                     .sign(self.key, hashes.SHA256()))
        self.cert_pem = self.dir / "ca.pem"
        self.cert_pem.write_bytes(_pem_cert(self.cert))
        self.truststore_p12 = self.dir / "truststore.p12"
        self.truststore_p12.write_bytes(self._truststore("test-password"))

    def _truststore(self, password: str) -> bytes:
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

        return pkcs12.serialize_key_and_certificates(
            b"ca", None, None, [self.cert], BestAvailableEncryption(password.encode()))

    def issue(self, cn: str, *, server: bool = False, org: str = "pykafkad-test") -> Issued:
        """A certificate for ``cn``: a server one names localhost and 127.0.0.1."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12
        from cryptography.x509.oid import ExtendedKeyUsageOID

        key = _key()
        now = datetime.datetime.now(datetime.UTC)
        builder = (x509.CertificateBuilder().subject_name(_name(cn, org))
                   .issuer_name(self.cert.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(days=1)))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                False)
        builder = builder.add_extension(x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), False)
        cert = builder.sign(self.key, hashes.SHA256())
        base = self.dir / cn.replace(" ", "_")
        out = Issued(base.with_suffix(".crt.pem"), base.with_suffix(".key.pem"),
                     base.with_suffix(".keystore.pem"), base.with_suffix(".p12"))
        out.cert_pem.write_bytes(_pem_cert(cert) + _pem_cert(self.cert))
        out.key_pem.write_bytes(_pem_key(key))
        out.keystore_pem.write_bytes(_pem_key(key) + _pem_cert(cert) + _pem_cert(self.cert))
        out.pkcs12.write_bytes(pkcs12.serialize_key_and_certificates(
            cn.encode(), key, cert, [self.cert], BestAvailableEncryption(out.password.encode())))
        return out


def plain_jaas(users: dict[str, str], username: str, password: str) -> str:
    """A broker's PlainLoginModule config granting ``users``."""
    grants = " ".join(f'user_{u}="{p}"' for u, p in users.items())
    return ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{username}" password="{password}" {grants};')


def add_scram_users(running, users: dict[str, str],
                    mechanisms=("SCRAM-SHA-256", "SCRAM-SHA-512"), *,
                    timeout_s: float = 30.0) -> None:
    """Gives ``users`` SCRAM credentials on a ``run_broker`` node, as ``kafka-configs
    --alter --add-config 'SCRAM-SHA-256=[password=...]'`` would: an AlterUserScramCredentials
    its controller commits to the metadata log; returns once the broker logs users in with
    them."""
    async def submit(request):
        return await running.broker.controller_server.submit(request, 0)

    for m in mechanisms:  # Kafka takes one alteration per user and request
        upsertions = []
        for user, password in users.items():
            salt = os.urandom(32)
            salted = hashlib.pbkdf2_hmac(MECHANISMS[m], password.encode(), salt, MIN_ITERATIONS)
            upsertions.append(ScramCredentialUpsertion(
                name=user, mechanism=MECHANISM_TYPES[m], iterations=MIN_ITERATIONS, salt=salt,
                salted_password=salted))
        response = trio.from_thread.run(
            submit, AlterUserScramCredentialsRequest(deletions=[], upsertions=upsertions),
            trio_token=running.trio_token)
        refused = [(r.user, r.error_message) for r in response.results if r.error_code]
        if refused:
            raise ValueError(f"SCRAM users refused: {refused}")
    store = scram_credentials(running.broker)
    deadline = time.monotonic() + timeout_s
    while not all(set(mechanisms) <= set(store.get(u) or ()) for u in users):
        if time.monotonic() > deadline:
            raise TimeoutError("the broker did not load the new SCRAM users")
        time.sleep(0.01)


def broker_ssl_config(ca: CertificateAuthority, server: Issued, *, client_auth: str = "none",
                      kind: str = "PEM") -> dict[str, str]:
    """ssl.* settings for a broker listener, PEM or PKCS12 stores."""
    if kind == "PKCS12":
        out = {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(server.pkcs12),
               "ssl.keystore.password": server.password,
               "ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(ca.truststore_p12),
               "ssl.truststore.password": "test-password"}
    else:
        out = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(server.keystore_pem),
               "ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca.cert_pem)}
    out["ssl.client.auth"] = client_auth
    return out


def client_settings(protocol: str, ca: CertificateAuthority | None = None, *,
                    mechanism: str | None = None, username: str | None = None,
                    password: str | None = None, client_cert: Issued | None = None) -> dict:
    """The same connection for each client: {"kafka-python": {...}, "confluent": {...},
    "java": {...}} (Java's as properties)."""
    kp: dict = {"security_protocol": protocol}
    ck: dict = {"security.protocol": protocol.lower()}
    java: dict = {"security.protocol": protocol}
    if ca is not None:
        kp["ssl_cafile"] = str(ca.cert_pem)
        ck["ssl.ca.location"] = str(ca.cert_pem)
        java.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca.cert_pem)})
    if client_cert is not None:
        kp.update(ssl_certfile=str(client_cert.cert_pem), ssl_keyfile=str(client_cert.key_pem))
        ck.update({"ssl.certificate.location": str(client_cert.cert_pem),
                   "ssl.key.location": str(client_cert.key_pem)})
        java.update({"ssl.keystore.type": "PEM",
                     "ssl.keystore.location": str(client_cert.keystore_pem)})
    if mechanism is not None:
        kp["sasl_mechanism"] = mechanism
        ck["sasl.mechanisms"] = mechanism
        java["sasl.mechanism"] = mechanism
        if mechanism == "OAUTHBEARER":
            ck["enable.sasl.oauthbearer.unsecure.jwt"] = True
            ck["sasl.oauthbearer.config"] = f"principal={username}"
            java["sasl.jaas.config"] = (
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                f'unsecuredLoginStringClaim_sub="{username}";')
        else:
            kp.update(sasl_plain_username=username, sasl_plain_password=password)
            ck.update({"sasl.username": username, "sasl.password": password})
            module = ("plain.PlainLoginModule" if mechanism == "PLAIN"
                      else "scram.ScramLoginModule")
            java["sasl.jaas.config"] = (
                f"org.apache.kafka.common.security.{module} required "
                f'username="{username}" password="{password}";')
    return {"kafka-python": kp, "confluent": ck, "java": java}
