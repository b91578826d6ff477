"""What a listener's security protocol asks of each connection: a TLS handshake (SSL,
SASL_SSL) and a SASL exchange (SASL_PLAINTEXT, SASL_SSL)."""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass

import trio

from pykafkad.security.authenticator import SaslAuthenticator
from pykafkad.security.principal import ANONYMOUS, KafkaPrincipal
from pykafkad.security.sasl import SaslListener
from pykafkad.security.settings import listener_setting
from pykafkad.security.tls import parse_mapping_rules, principal_from_cert, server_context

log = logging.getLogger("pykafkad.security")

#: how long a client may take over its TLS handshake
HANDSHAKE_TIMEOUT_S = 30.0


@dataclass
class ListenerSecurity:
    protocol: str
    context: ssl.SSLContext | None = None
    sasl: SaslListener | None = None
    mapping_rules: list | None = None

    @classmethod
    def from_config(cls, config, listener: str, protocol: str) -> ListenerSecurity:
        out = cls(protocol)
        if protocol in ("SSL", "SASL_SSL"):
            out.context = server_context(config, listener)
            out.mapping_rules = parse_mapping_rules(
                listener_setting(config, listener, "ssl.principal.mapping.rules") or "DEFAULT")
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            out.sasl = SaslListener.from_config(config, listener)
        return out

    async def start_tls(self, stream: trio.SocketStream, timeout_s: float):
        """(the TLS stream or None, the certificate's principal); (False, None) when the
        handshake fails."""
        if self.context is None:
            return None, ANONYMOUS
        tls = trio.SSLStream(stream, self.context, server_side=True)
        try:
            with trio.fail_after(min(timeout_s, HANDSHAKE_TIMEOUT_S)):
                await tls.do_handshake()
        except (trio.TooSlowError, trio.BrokenResourceError, ssl.SSLError, OSError) as e:
            log.info("Failed authentication (SSL handshake failed): %s", e)
            try:
                await stream.aclose()
            except Exception:  # noqa: BLE001 - already broken
                pass
            return False, None
        principal: KafkaPrincipal = ANONYMOUS
        if self.sasl is None:
            principal = principal_from_cert(tls.getpeercert(), self.mapping_rules)
        return tls, principal

    def authenticator(self, broker) -> SaslAuthenticator | None:
        return SaslAuthenticator(self.sasl, broker) if self.sasl is not None else None
