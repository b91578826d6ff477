"""One SASL connection's authentication, before (and, KIP-368, between) its requests: as
Kafka's SaslServerAuthenticator, only ApiVersions and SaslHandshake may come first, then
SaslAuthenticate tokens until the mechanism completes; anything else closes the connection.

After a SaslHandshake v0 the tokens come unwrapped (a 4-byte length and the token, no Kafka
request header) and are answered the same way; a failure then is answered with nothing, the
connection just closes, as Kafka's handling of a handshake without SaslAuthenticate headers."""

from __future__ import annotations

import logging
import time

from pykafkad.metadata.java_properties import java_hash_order
from pykafkad.security.principal import KafkaPrincipal
from pykafkad.security.sasl import (
    AuthenticationFailed,
    SaslListener,
    generic_failure,
    mechanism_server,
    principal_of,
)
from pykafkad.security.scram import ScramFailure
from wire.errors import ErrorCode, RemoteProtocolError
from wire.messages.sasl_authenticate_response import SaslAuthenticateResponse
from wire.messages.sasl_handshake_response import SaslHandshakeResponse

log = logging.getLogger("pykafkad.security")

SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS = 17, 36, 18


class AuthenticationClosed(Exception):
    """The answer was sent (or none is due): close the connection now."""


class SaslAuthenticator:
    def __init__(self, listener: SaslListener, broker):
        self.listener = listener
        self.broker = broker
        self.state = "handshake"  # handshake -> authenticate -> done
        self.mechanism: str | None = None
        self.server = None
        self.principal: KafkaPrincipal | None = None
        #: monotonic seconds when the session ends (KIP-368), None: never
        self.session_end: float | None = None
        self.reauthenticating = False
        #: completed re-authentications (KIP-368) on this connection
        self.reauthentications = 0
        #: the handshake was v0: its tokens are framed by their length alone
        self.unwrapped = False

    @property
    def authenticated(self) -> bool:
        return self.state == "done"

    @property
    def expects_unwrapped_token(self) -> bool:
        """Whether the next frame is a bare SASL token (after SaslHandshake v0), not a request."""
        return self.unwrapped and self.state == "authenticate"

    def intercepts(self, api_key: int) -> bool:
        """Whether the authenticator answers this request rather than the broker's handlers."""
        if self.state != "done":
            return api_key != API_VERSIONS or self.state != "handshake"
        if self.session_end is not None and time.monotonic() >= self.session_end:
            return True  # expired: only a re-authentication may follow
        return api_key == SASL_HANDSHAKE and self.session_end is not None \
            or (self.reauthenticating and api_key == SASL_AUTHENTICATE)

    def handle(self, api_key: int, version: int, request):
        if api_key == SASL_HANDSHAKE and self.state in ("handshake", "done"):
            return self._handshake(version, request)
        if api_key == SASL_AUTHENTICATE and self.state == "authenticate":
            return self._authenticate(version, request)
        if self.state == "done":
            raise RemoteProtocolError("session expired: re-authentication was required "
                                      "(connections.max.reauth.ms)")
        raise RemoteProtocolError(
            f"Unexpected Kafka request of type {api_key} during SASL {self.state}")

    def _handshake(self, version: int, request) -> SaslHandshakeResponse:
        # Kafka answers its enabled mechanisms in the order of a java.util.HashSet of them
        mechanisms = java_hash_order(dict.fromkeys(self.listener.mechanisms))
        if self.state == "done":
            if request.mechanism != self.mechanism:
                raise AuthenticationClosed  # Kafka: re-authentication may not switch mechanism
            self.reauthenticating = True
        if request.mechanism not in mechanisms:
            self.closing = True
            return SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                         mechanisms=mechanisms)
        self.mechanism = request.mechanism
        self.server = mechanism_server(self.listener, request.mechanism, self.broker)
        self.state = "authenticate"
        self.unwrapped = version == 0
        return SaslHandshakeResponse(error_code=0, mechanisms=mechanisms)

    def _authenticate(self, version: int, request) -> SaslAuthenticateResponse:
        try:
            challenge = self.server.evaluate(bytes(request.auth_bytes))
        except AuthenticationFailed as e:
            return self._failed(str(e))
        except ScramFailure as e:
            log.info("SASL %s authentication failed: %s", self.mechanism, e)
            return self._failed(generic_failure(self.mechanism, self.reauthenticating))
        if not self.server.complete:
            return SaslAuthenticateResponse(error_code=0, auth_bytes=challenge)
        changed = self._principal_change()
        if changed:
            return self._failed(changed)
        lifetime_ms = self._complete()
        return SaslAuthenticateResponse(error_code=0, auth_bytes=challenge,
                                        session_lifetime_ms=lifetime_ms)

    def unwrapped_token(self, token: bytes) -> bytes:
        """A bare token after SaslHandshake v0: the mechanism's answer, sent back bare (Kafka
        sends one for every token its mechanisms evaluate, empty ones too). A failure has no
        answer here (there is no error field to carry it): AuthenticationClosed."""
        try:
            challenge = self.server.evaluate(token)
        except (AuthenticationFailed, ScramFailure) as e:
            log.info("SASL %s authentication failed: %s", self.mechanism, e)
            raise AuthenticationClosed from None
        if self.server.complete:
            changed = self._principal_change()
            if changed:
                log.info("SASL %s re-authentication failed: %s", self.mechanism, changed)
                raise AuthenticationClosed
            self._complete()
        return challenge

    def _principal_change(self) -> str | None:
        """Kafka's refusal of a re-authentication as someone else, else None."""
        principal = principal_of(self.server)
        if self.reauthenticating and principal != self.principal:
            return (f"Cannot change principals during re-authentication from {self.principal}: "
                    f"{principal}")
        return None

    def _complete(self) -> int:
        """The mechanism completed: the session starts; its lifetime in ms (0: unlimited)."""
        self.principal = principal_of(self.server)
        self.state = "done"
        if self.reauthenticating:
            self.reauthentications += 1
        self.reauthenticating = False
        lifetime_ms = self._session_lifetime_ms()
        self.session_end = None if lifetime_ms is None else time.monotonic() + lifetime_ms / 1000
        return lifetime_ms or 0

    def _session_lifetime_ms(self) -> int | None:
        """KIP-368: connections.max.reauth.ms, or the credential's own expiry (an OAUTHBEARER
        token's), whichever ends first; None when neither is set: the session never ends."""
        limit = self.listener.reauth_ms
        expiry = getattr(self.server, "lifetime_ms", None)
        if expiry is None:
            return limit or None
        left = max(expiry - int(time.time() * 1000), 0)
        return min(left, limit) if limit else left

    def _failed(self, message: str) -> SaslAuthenticateResponse:
        self.closing = True
        return SaslAuthenticateResponse(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                                        error_message=message, auth_bytes=b"")

    closing = False
