"""SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ScramSaslServer speaks it,
with credentials in Kafka's stored form (salt, stored key, server key, iterations)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass

MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
#: Kafka's wire/records mechanism ids (ScramMechanism)
MECHANISM_TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
#: Kafka's minimum iterations (ScramMechanism.minIterations), and kafka-configs' default
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def _hmac(hash_name: str, key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hash_name).digest()


def make_credential(mechanism: str, password: str, *, salt: bytes | None = None,
                    iterations: int = MIN_ITERATIONS) -> ScramCredential:
    """What the controller stores for ``password`` (Kafka's ScramFormatter.generateCredential)."""
    h = MECHANISMS[mechanism]
    salt = salt if salt is not None else os.urandom(32)
    salted = hashlib.pbkdf2_hmac(h, password.encode(), salt, iterations)
    client_key = _hmac(h, salted, b"Client Key")
    return ScramCredential(salt, hashlib.new(h, client_key).digest(),
                           _hmac(h, salted, b"Server Key"), iterations)


class ScramFailure(Exception):
    """A failed exchange; Kafka answers it with its generic invalid-credentials message."""


class ScramServer:
    """One exchange: client-first -> server-first, client-final -> server-final."""

    def __init__(self, mechanism: str, lookup):
        self.mechanism = mechanism
        self.hash = MECHANISMS[mechanism]
        self.lookup = lookup  # user name -> {mechanism: ScramCredential}
        self.state = "first"
        self.complete = False
        self.username: str | None = None
        self.token_auth = False

    def evaluate(self, token: bytes) -> bytes:
        if self.state == "first":
            return self._first(token.decode("utf-8", "replace"))
        if self.state == "final":
            return self._final(token.decode("utf-8", "replace"))
        raise ScramFailure("Unexpected SCRAM message")

    def _first(self, msg: str) -> bytes:
        parts = msg.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y") or not parts[2].startswith("n="):
            raise ScramFailure("Invalid SCRAM client first message")
        self.gs2_header = parts[0] + "," + parts[1] + ","
        attrs = _attrs(parts[2])
        self.username = _saslname(attrs.get("n", ""))
        self.client_nonce = attrs.get("r")
        if not self.client_nonce:
            raise ScramFailure("Invalid SCRAM client first message")
        self.token_auth = attrs.get("tokenauth", "false").lower() == "true"
        credential = (self.lookup(self.username) or {}).get(self.mechanism)
        if credential is None or self.token_auth:
            raise ScramFailure(f"Authentication failed: Invalid user credentials for {self.username}")
        self.credential = credential
        self.client_first_bare = parts[2]
        self.nonce = self.client_nonce + base64.b64encode(os.urandom(24)).decode().rstrip("=")
        self.server_first = (f"r={self.nonce},s={base64.b64encode(credential.salt).decode()},"
                             f"i={credential.iterations}")
        self.state = "final"
        return self.server_first.encode()

    def _final(self, msg: str) -> bytes:
        without_proof, _, proof_part = msg.rpartition(",p=")
        attrs = _attrs(without_proof)
        if attrs.get("r") != self.nonce or not proof_part:
            raise ScramFailure("Invalid SCRAM client final message")
        if base64.b64decode(attrs.get("c", "")) != self.gs2_header.encode():
            raise ScramFailure("Invalid channel binding")
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        c = self.credential
        signature = _hmac(self.hash, c.stored_key, auth_message)
        proof = base64.b64decode(proof_part)
        if len(proof) != len(signature):
            raise ScramFailure("Invalid client proof")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(self.hash, client_key).digest(), c.stored_key):
            raise ScramFailure("Invalid client credentials")
        self.state = "done"
        self.complete = True
        server_signature = _hmac(self.hash, c.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)


def _attrs(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key] = value
    return out


def _saslname(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")


def credential_from_salted(mechanism: str, salt: bytes, salted_password: bytes,
                           iterations: int) -> ScramCredential:
    """What AlterUserScramCredentials' upsertion (the client salts and hashes) is stored as."""
    h = MECHANISMS[mechanism]
    client_key = _hmac(h, salted_password, b"Client Key")
    return ScramCredential(salt, hashlib.new(h, client_key).digest(),
                           _hmac(h, salted_password, b"Server Key"), iterations)


class ScramClient:
    """The client's side of one exchange (a node's own client authenticating to a peer)."""

    def __init__(self, mechanism: str, username: str, password: str):
        self.hash = MECHANISMS[mechanism]
        self.password = password
        name = username.replace("=", "=3D").replace(",", "=2C")
        self.nonce = base64.b64encode(os.urandom(24)).decode().rstrip("=")
        self.first_bare = f"n={name},r={self.nonce}"

    def first(self) -> bytes:
        return ("n,," + self.first_bare).encode()

    def final(self, server_first: bytes) -> bytes:
        text = server_first.decode()
        attrs = _attrs(text)
        nonce, salt, iterations = attrs["r"], base64.b64decode(attrs["s"]), int(attrs["i"])
        if not nonce.startswith(self.nonce):
            raise ScramFailure("the server's nonce does not extend the client's")
        salted = hashlib.pbkdf2_hmac(self.hash, self.password.encode(), salt, iterations)
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self.first_bare},{text},{without_proof}".encode()
        client_key = _hmac(self.hash, salted, b"Client Key")
        signature = _hmac(self.hash, hashlib.new(self.hash, client_key).digest(), auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self.expected = b"v=" + base64.b64encode(
            _hmac(self.hash, _hmac(self.hash, salted, b"Server Key"), auth_message))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def check(self, server_final: bytes) -> None:
        if not hmac.compare_digest(server_final, self.expected):
            raise ScramFailure("the server's signature is wrong")
