"""Kafka's ForwardingManager: on a KRaft broker's listeners, the admin requests that change
metadata go to the active controller inside an EnvelopeRequest (the client's request header
and body as received, its principal and address), and the controller's answer, unwrapped from
the EnvelopeResponse, goes back to the client.  An envelope the controller refuses (or no
controller within Kafka's 60 s forwarding timeout: REQUEST_TIMED_OUT) answers the client with
the request's own error response, as Kafka's ``request.getErrorResponse``: UNKNOWN_SERVER_ERROR
for an envelope the controller refused (say, the broker's principal lacks CLUSTER_ACTION).
The envelope carries the client's principal and address, which the controller authorizes."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

import trio

from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.kraft.error_responses import error_response, has_error
from wire.errors import ErrorCode
from wire.framing import read_response_header, response_header_version
from wire.messages.default_principal_data import DefaultPrincipalData
from wire.messages.envelope_request import EnvelopeRequest
from wire.primitives import Reader, Writer

log = logging.getLogger("pykafkad.kraft.forwarding")

#: the APIs a KRaft broker forwards (KafkaApis' maybeForwardToController)
FORWARDED = frozenset({
    19,  # CreateTopics
    20,  # DeleteTopics
    33,  # AlterConfigs
    37,  # CreatePartitions
    43,  # ElectLeaders
    44,  # IncrementalAlterConfigs
    45,  # AlterPartitionReassignments
    46,  # ListPartitionReassignments
    49,  # AlterClientQuotas
})


def serialize_principal(principal_type: str = "User", name: str = "ANONYMOUS") -> bytes:
    """Kafka's DefaultKafkaPrincipalBuilder.serialize: DefaultPrincipalData prefixed with its
    version (an int16)."""
    w = Writer()
    w.int16(DefaultPrincipalData.HIGHEST_VERSION)
    DefaultPrincipalData(type=principal_type, name=name, token_authenticated=False).write(
        w, DefaultPrincipalData.HIGHEST_VERSION)
    return w.getvalue()


def deserialize_principal(data: bytes | None):
    """The KafkaPrincipal an envelope carries (None for ANONYMOUS or none at all)."""
    from pykafkad.security.principal import KafkaPrincipal

    if not data or len(data) < 2:
        return None
    r = Reader(memoryview(data))
    version = r.int16()
    p = DefaultPrincipalData.read(r, version)
    if p.type == "User" and p.name == "ANONYMOUS":
        return None
    return KafkaPrincipal(p.type, p.name)


def client_peer(address: bytes | None, fallback: str) -> str:
    """The client's address from an envelope, as a peer string ("host:0")."""
    try:
        host = str(ipaddress.ip_address(bytes(address or b"")))
    except ValueError:
        return fallback
    return f"[{host}]:0" if ":" in host else f"{host}:0"


def client_address(peer: str) -> bytes:
    """The client's IP address as the envelope carries it (4 or 16 bytes)."""
    host = peer.rsplit(":", 1)[0].strip("[]") if peer else "127.0.0.1"
    try:
        return ipaddress.ip_address(host).packed
    except ValueError:
        return ipaddress.ip_address("127.0.0.1").packed


#: Kafka's forwarding channel gives a request this long (BrokerServer: retryTimeoutMs 60000)
#: to reach an active controller before it answers REQUEST_TIMED_OUT
FORWARDING_TIMEOUT_S = 60.0
#: how long a forwarded request the controller refused as NOT_CONTROLLER waits before the next
#: try (the quorum is electing, or has no majority)
NOT_CONTROLLER_BACKOFF_S = 0.05


class ForwardingManager:
    def __init__(self, channel: Any, *, request_timeout_s: float = FORWARDING_TIMEOUT_S):
        self.channel = channel
        self.request_timeout_s = request_timeout_s
        self._principal = serialize_principal()

    def forwards(self, api_key: int) -> bool:
        return api_key in FORWARDED

    async def forward(self, ctx: Any, frame: bytes, request: Any, response_type: type) -> Any:
        """The controller's response to ``request`` (``frame``: its header and body as the
        client sent them)."""
        principal = getattr(ctx, "principal", None)
        envelope = EnvelopeRequest(
            request_data=bytes(frame),
            request_principal=self._principal if principal is None else serialize_principal(
                principal.principal_type, principal.name),
            client_host_address=client_address(ctx.peer))
        deadline = trio.current_time() + self.request_timeout_s
        while True:
            remaining = deadline - trio.current_time()
            try:
                if remaining <= 0:
                    raise trio.TooSlowError("no active controller")
                answer = await self.channel.send(envelope, timeout_s=remaining)
            except (trio.TooSlowError, OSError) as e:
                log.info("forwarding %s failed: %r", type(request).__name__, e)
                return error_response(request, ErrorCode.REQUEST_TIMED_OUT, None)
            if answer.error_code == ErrorCode.NOT_CONTROLLER:
                await trio.sleep(min(NOT_CONTROLLER_BACKOFF_S,
                                     max(0.0, deadline - trio.current_time())))
                continue
            if answer.error_code or answer.response_data is None:
                # an envelope error is the brokers' misconfiguration (say, no CLUSTER_ACTION
                # for the broker's principal), not the client's: Kafka answers
                # UNKNOWN_SERVER_ERROR rather than an error the client would not expect
                log.warning("the controller refused the envelope of %s: error %d",
                            type(request).__name__, answer.error_code)
                return error_response(request, ErrorCode.UNKNOWN_SERVER_ERROR,
                                      DEFAULT_MESSAGES[ErrorCode.UNKNOWN_SERVER_ERROR])
            r = Reader(memoryview(answer.response_data))
            read_response_header(r, response_header_version(ctx.header.api_key, ctx.version))
            response = response_type.read(r, ctx.version)
            # a controller that was no longer active (a quorum without a majority, or an
            # election under way): Kafka's broker holds the request until a controller takes
            # it or its forwarding timeout passes (REQUEST_TIMED_OUT), never answering
            # NOT_CONTROLLER to the client
            if not has_error(response, ErrorCode.NOT_CONTROLLER):
                return response
            await trio.sleep(min(NOT_CONTROLLER_BACKOFF_S,
                                 max(0.0, deadline - trio.current_time())))
