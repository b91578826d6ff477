"""A node's own client to its peers over a secured listener: TLS, then SaslHandshake and
SaslAuthenticate with the inter-broker (or controller) mechanism, as Kafka's NetworkClient
does with the listener's own settings."""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import trio

from pykafkad.network.client import AuthenticationError
from pykafkad.security.jaas import parse_jaas
from pykafkad.security.scram import MECHANISMS as SCRAM_MECHANISMS
from pykafkad.security.scram import ScramClient
from pykafkad.security.settings import listener_setting


@dataclass
class ClientSecurity:
    protocol: str
    context: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None

    @classmethod
    def from_config(cls, config, listener: str, protocol: str,
                    mechanism_key: str = "sasl.mechanism.inter.broker.protocol") -> ClientSecurity:
        """Kafka's settings for ``listener``: its trust store (and key store, for mTLS) and the
        JAAS ``username``/``password`` of the mechanism ``mechanism_key`` names."""
        out = cls(protocol)
        if protocol in ("SSL", "SASL_SSL"):
            out.context = client_context(config, listener)
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            mechanism = listener_setting(config, listener, mechanism_key) or "GSSAPI"
            out.mechanism = mechanism
            text = listener_setting(config, listener, "sasl.jaas.config", mechanism)
            options = parse_jaas(text)[1] if text else {}
            out.username, out.password = options.get("username"), options.get("password")
        return out

    async def wrap(self, stream: trio.SocketStream, host: str):
        if self.context is None:
            return stream
        tls = trio.SSLStream(stream, self.context, server_hostname=host)
        await tls.do_handshake()
        return tls

    async def authenticate(self, exchange) -> None:
        """SaslHandshake v1 then SaslAuthenticate; ``exchange(api_key, version, request)``
        sends one request on the connection being set up."""
        if self.mechanism is None:
            return
        from wire.messages.sasl_authenticate_request import SaslAuthenticateRequest
        from wire.messages.sasl_handshake_request import SaslHandshakeRequest

        hs = await exchange(17, 1, SaslHandshakeRequest(mechanism=self.mechanism))
        if hs.error_code:
            raise AuthenticationError(f"{self.mechanism} is not enabled on the peer "
                                      f"(it offers {', '.join(hs.mechanisms)})")

        async def step(token: bytes) -> bytes:
            r = await exchange(36, 2, SaslAuthenticateRequest(auth_bytes=token))
            if r.error_code:
                raise AuthenticationError(r.error_message or f"error {r.error_code}")
            return bytes(r.auth_bytes)

        if self.mechanism == "PLAIN":
            await step(f"\0{self.username}\0{self.password}".encode())
        elif self.mechanism in SCRAM_MECHANISMS:
            scram = ScramClient(self.mechanism, self.username or "", self.password or "")
            server_first = await step(scram.first())
            scram.check(await step(scram.final(server_first)))
        else:
            raise AuthenticationError(f"pykafkad's own client does not speak {self.mechanism}")


def client_context(config, listener: str) -> ssl.SSLContext:
    """Trusts the listener's trust store; presents its key store (mTLS peers)."""
    from pykafkad.security.tls import _load_keystore, _load_truststore

    def get(key: str) -> str | None:
        return listener_setting(config, listener, key)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _load_truststore(ctx, get)
    if get("ssl.endpoint.identification.algorithm") == "":
        ctx.check_hostname = False
    if get("ssl.keystore.location") or get("ssl.keystore.certificate.chain"):
        _load_keystore(ctx, get)
    return ctx


def inter_broker_security(config) -> ClientSecurity | None:
    """How this broker reaches the others (replica fetchers, transaction markers): the
    inter-broker listener's protocol with ``sasl.mechanism.inter.broker.protocol``; None when
    it is PLAINTEXT (or on a controller-only node)."""
    endpoint = config.inter_broker_listener
    if endpoint is None or endpoint.security_protocol == "PLAINTEXT":
        return None
    return ClientSecurity.from_config(config, endpoint.listener_name,
                                      endpoint.security_protocol)


def controller_security(config) -> ClientSecurity | None:
    """How this node reaches the controllers (raft peers, the broker's and controller's
    channels): the first controller listener's protocol with
    ``sasl.mechanism.controller.protocol``; None when it is PLAINTEXT."""
    names = config.controller_listener_names
    if not names:
        return None
    protocol = config.listener_security_protocol(names[0])
    if protocol == "PLAINTEXT":
        return None
    return ClientSecurity.from_config(config, names[0], protocol,
                                      mechanism_key="sasl.mechanism.controller.protocol")
