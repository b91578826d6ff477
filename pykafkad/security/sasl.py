"""A SASL listener's mechanisms and one connection's exchange, as Kafka's
SaslServerAuthenticator runs them: SaslHandshake picks an enabled mechanism, SaslAuthenticate
tokens go to that mechanism's server until it completes or fails."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field

from pykafkad.config.types import ConfigError
from pykafkad.security.credentials import scram_credentials
from pykafkad.security.jaas import parse_jaas, plain_users
from pykafkad.security.principal import KafkaPrincipal
from pykafkad.security.scram import MECHANISMS as SCRAM_MECHANISMS
from pykafkad.security.scram import ScramFailure, ScramServer
from pykafkad.security.settings import csv, listener_setting

SUPPORTED = ("PLAIN", "OAUTHBEARER", *SCRAM_MECHANISMS)


class AuthenticationFailed(Exception):
    """Answered SASL_AUTHENTICATION_FAILED with this message; the connection then closes."""


def generic_failure(mechanism: str, reauth: bool = False) -> str:
    """Kafka's message for a mechanism's SaslException: it names nothing but the mechanism."""
    phase = "re-authentication" if reauth else "authentication"
    return (f"Authentication failed during {phase} due to invalid credentials with SASL "
            f"mechanism {mechanism}")


@dataclass
class SaslListener:
    """What one SASL listener accepts: its enabled mechanisms and PLAIN's users."""

    name: str
    mechanisms: list[str]
    plain_users: dict[str, str] = field(default_factory=dict)
    reauth_ms: int = 0

    @classmethod
    def from_config(cls, config, listener: str) -> SaslListener:
        mechanisms = csv(listener_setting(config, listener, "sasl.enabled.mechanisms"))
        for m in mechanisms:
            if m not in SUPPORTED:
                raise ConfigError(f"pykafkad does not serve SASL mechanism {m} (it serves "
                                  f"{', '.join(SUPPORTED)})", "sasl.enabled.mechanisms")
        users: dict[str, str] = {}
        if "PLAIN" in mechanisms:
            text = listener_setting(config, listener, "sasl.jaas.config", "PLAIN")
            if text is None:
                raise ConfigError(
                    f"Could not find a 'KafkaServer' or 'listener.name.{listener.lower()}."
                    "plain.sasl.jaas.config' entry in the JAAS configuration. System property "
                    "'java.security.auth.login.config' is not set", "sasl.jaas.config")
            users = plain_users(parse_jaas(text)[1])
        reauth = int(listener_setting(config, listener, "connections.max.reauth.ms") or 0)
        return cls(listener, mechanisms, users, reauth)


class PlainServer:
    """RFC 4616: ``authzid NUL user NUL password``, checked against the JAAS users."""

    def __init__(self, users: dict[str, str]):
        self.users = users
        self.complete = False
        self.username: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        parts = _plain_tokens(token.decode("utf-8", "replace"))
        if len(parts) != 3:
            raise AuthenticationFailed("Invalid SASL/PLAIN response: expected 3 tokens, got "
                                       f"{len(parts)}")
        authzid, user, password = parts
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        if self.users.get(user) != password:
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise AuthenticationFailed("Authentication failed: Client requested an authorization "
                                       "id that is different from username")
        self.username = user
        self.complete = True
        return b""


def _plain_tokens(text: str) -> list[str]:
    """The NUL-separated fields, counted as Kafka's PlainSaslServer does: it stops at four."""
    tokens: list[str] = []
    start = 0
    for _ in range(4):
        end = text.find("\0", start)
        if end < 0:
            tokens.append(text[start:])
            break
        tokens.append(text[start:end])
        start = end + 1
    return tokens


class UnsecuredOAuthBearerServer:
    """OAUTHBEARER with Kafka's default validator (OAuthBearerUnsecuredValidatorCallbackHandler):
    an unsigned JWT (alg none) whose ``sub`` names the principal and whose ``exp`` is ahead.

    A token that fails validation is answered, as Kafka's OAuthBearerSaslServer does (RFC 7628
    section 3.2.2), with a JSON error challenge; the client acknowledges it with a lone %x01,
    and only then does the exchange fail, with that JSON as its message."""

    #: Kafka's challenge for a token its unsecured validator refuses
    INVALID_TOKEN = '{"status":"invalid_token"}'

    def __init__(self) -> None:
        self.complete = False
        self.username: str | None = None
        self.lifetime_ms: int | None = None
        self.error: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self.error is not None:
            raise AuthenticationFailed(self.error)
        self.error = None
        text = token.decode("utf-8", "replace")
        gs2, _, rest = text.partition("\x01")
        kv = dict(p.split("=", 1) for p in rest.split("\x01") if "=" in p)
        auth = kv.get("auth", "")
        if not gs2.startswith(("n,", "y,")) or not auth.startswith("Bearer "):
            raise ScramFailure("Invalid OAUTHBEARER client first message")
        claims = _valid_unsecured_jwt(auth[7:].strip())
        if claims is None:
            self.error = self.INVALID_TOKEN
            return self.error.encode()
        self.username = claims["sub"]
        self.lifetime_ms = int(claims["exp"] * 1000)
        self.complete = True
        return b""


def _valid_unsecured_jwt(jwt: str) -> dict | None:
    """The claims of an unsigned JWT that names a subject and has not expired, else None."""
    try:
        header_b64, payload_b64, _sig = jwt.split(".")
        header = json.loads(_b64url(header_b64))
        claims = json.loads(_b64url(payload_b64))
    except (ValueError, TypeError):
        return None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return None
    exp, sub = claims.get("exp"), claims.get("sub")
    if header.get("alg") != "none" or not isinstance(sub, str) or not sub \
            or not isinstance(exp, (int, float)) or exp <= time.time():
        return None
    return claims


def _b64url(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def mechanism_server(listener: SaslListener, mechanism: str, broker):
    if mechanism == "PLAIN":
        return PlainServer(listener.plain_users)
    if mechanism == "OAUTHBEARER":
        return UnsecuredOAuthBearerServer()
    return ScramServer(mechanism, scram_credentials(broker).get)


def principal_of(server) -> KafkaPrincipal:
    return KafkaPrincipal("User", server.username)
