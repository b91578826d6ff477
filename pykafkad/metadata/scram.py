"""``format --add-scram``: SCRAM credentials in the bootstrap metadata (Kafka's ScramParser).

``SCRAM-SHA-256=[name=alice,password=alice-secret]`` or, with a given salt and salted password
(both base64), ``SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]``
becomes a UserScramCredentialRecord: salt, iterations, stored key H(HMAC(salted, "Client Key"))
and server key HMAC(salted, "Server Key"), with PBKDF2 (RFC 5802's Hi) for a password.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

from wire.metadata.user_scram_credential_record import UserScramCredentialRecord

#: mechanism name -> (record type, hash name, min iterations, max iterations)
MECHANISMS = {
    "SCRAM-SHA-256": (1, "sha256", 4096, 16384),
    "SCRAM-SHA-512": (2, "sha512", 4096, 16384),
}
DEFAULT_ITERATIONS = 4096


class ScramError(ValueError):
    """An --add-scram argument Kafka refuses (the message is Kafka's)."""


def _random_salt() -> bytes:
    """ScramFormatter.secureRandomBytes: a random 130-bit number written in base 36."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out.encode()


def _components(config: str) -> dict[str, str]:
    out = {}
    for component in config.split(","):
        key, sep, value = component.partition("=")
        if not sep:
            raise ScramError(f"No equals sign found in SCRAM component: {component}")
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        out[key] = value
    return out


def _b64(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ScramError(f"Failed to decode given {what}: {value}") from None


def scram_credential(mechanism: str, name: str, salt: bytes, iterations: int,
                     salted_password: bytes) -> UserScramCredentialRecord:
    kind, digest, _, _ = MECHANISMS[mechanism]
    client_key = hmac.new(salted_password, b"Client Key", digest).digest()
    return UserScramCredentialRecord(
        name=name, mechanism=kind, salt=salt,
        stored_key=hashlib.new(digest, client_key).digest(),
        server_key=hmac.new(salted_password, b"Server Key", digest).digest(),
        iterations=iterations)


def parse_add_scram(argument: str) -> UserScramCredentialRecord:
    argument = argument.strip()
    mechanism, sep, config = argument.partition("=")
    if not sep:
        raise ScramError(f"Failed to find equals sign in SCRAM argument '{argument}'")
    if mechanism not in MECHANISMS:
        raise ScramError(f"The add-scram mechanism {mechanism} is not supported.")
    if not config.startswith("["):
        raise ScramError("Expected configuration string to start with [")
    if not config.endswith("]"):
        raise ScramError("Expected configuration string to end with ]")
    parts = _components(config[1:-1])
    name = parts.pop("name", None)
    if name is None:
        raise ScramError("You must supply 'name' to add-scram")
    salt = parts.pop("salt", None)
    salt = None if salt is None else _b64(salt, "salt")
    iterations_text = parts.pop("iterations", None)
    try:
        iterations = DEFAULT_ITERATIONS if iterations_text is None else int(iterations_text)
    except ValueError:
        raise ScramError(f"Failed to parse iterations count: {iterations_text}") from None
    password = parts.pop("password", None)
    salted_text = parts.pop("saltedpassword", None)
    if password is None:
        if salted_text is None:
            raise ScramError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise ScramError("You must supply 'salt' with 'saltedpassword' to add-scram")
        salted = _b64(salted_text, "saltedPassword")
    if parts:
        raise ScramError("Unknown SCRAM configurations: " + ", ".join(sorted(parts)))
    _, digest, low, high = MECHANISMS[mechanism]
    java_name = mechanism.replace("-", "_")
    if iterations < low:
        raise ScramError(f"The 'iterations' value must be >= {low} for add-scram using {java_name}")
    if iterations > high:
        raise ScramError(f"The 'iterations' value must be <= {high} for add-scram using {java_name}")
    if salt is None:
        salt = _random_salt()
    if password is not None:
        salted = hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)
    return scram_credential(mechanism, name, salt, iterations, salted)


def java_string(record: UserScramCredentialRecord) -> str:
    """The record as Kafka's generated toString prints it (byte arrays as signed lists)."""
    def arr(b: bytes) -> str:
        return "[" + ", ".join(str(x - 256 if x > 127 else x) for x in b) + "]"

    return (f"UserScramCredentialRecord(name='{record.name}', mechanism={record.mechanism}, "
            f"salt={arr(record.salt)}, storedKey={arr(record.stored_key)}, "
            f"serverKey={arr(record.server_key)}, iterations={record.iterations})")
