"""The message of a CLUSTER_AUTHORIZATION_FAILED answer from the cluster gate (api_acls.py).

Kafka's ControllerApis refuses its cluster-level admin APIs (elections, reassignments,
features, broker unregistration) with AuthHelper's ``Request <request> needs <OP>
permission.``, where ``<request>`` is the RequestChannel.Request's own string: the network
processor, the connection id, the session, the listener, the request's buffer and the
Envelope it came in, if a broker forwarded it. Those parts name this node's connections, so
pykafkad renders its own in the same shape (ChannelInfo, Received). The other gated APIs whose
answers have a message field carry the error's default text, and DescribeClientQuotas none.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pykafkad.controller.result import DEFAULT_MESSAGES
from wire.errors import ErrorCode

#: the APIs refused with the request's string, by the operation they need (ControllerApis)
NAMED_REQUEST = {43: "ALTER", 45: "ALTER", 46: "DESCRIBE", 57: "ALTER", 64: "ALTER"}
#: the gated APIs Kafka refuses with an exception that has no message
WITHOUT_MESSAGE = frozenset({48})  # DescribeClientQuotas (KafkaApis)


@dataclass(frozen=True)
class ChannelInfo:
    """Who a connection is, as Kafka's Processor names it."""

    processor: int
    #: Kafka's "localHost:localPort-remoteHost:remotePort-processor-index"
    connection_id: str
    listener_name: str
    security_protocol: str


@dataclass(slots=True)
class Received:
    """One request as it came off a connection: its frame (header and body) size; ``capacity``
    is the buffer's (larger when the request was read out of an Envelope's bytes)."""

    channel: ChannelInfo
    size: int
    capacity: int
    #: the Envelope this request came in, when a broker forwarded it
    envelope: Received | None = None
    #: the request header's size (where the body starts)
    header_size: int = 0

    def kafka_string(self) -> str:
        """Kafka's RequestChannel.Request.toString for this request."""
        c = self.channel
        envelope = ("Optional.empty" if self.envelope is None
                    else f"Optional[{self.envelope.kafka_string()}]")
        # a Session per request, printed by Object.toString: its identity hash, in hex
        session = f"org.apache.kafka.network.Session@{random.getrandbits(31):x}"
        return (f"Request(processor={c.processor}, connectionId={c.connection_id}, "
                f"session={session}, listenerName=ListenerName({c.listener_name}), "
                f"securityProtocol={c.security_protocol}, "
                f"buffer=java.nio.HeapByteBuffer[pos={self.size} lim={self.size} "
                f"cap={self.capacity}], envelope={envelope})")


def forwarded(envelope: Received, request_data_size: int) -> Received:
    """The request inside ``envelope``: Kafka reads it from a slice of the envelope's buffer
    that starts at its bytes (after the envelope's header and the bytes' varint length, the
    first field of its body) and runs to the envelope's end."""
    prefix = envelope.header_size + _uvarint_size(request_data_size + 1)
    return Received(envelope.channel, request_data_size, envelope.size - prefix, envelope)


def _uvarint_size(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def denial_message(api_key: int, received: Received | None) -> str | None:
    """Kafka's error message for ``api_key`` refused by the cluster gate."""
    if api_key in WITHOUT_MESSAGE:
        return None
    operation = NAMED_REQUEST.get(api_key)
    if operation is not None and received is not None:
        return f"Request {received.kafka_string()} needs {operation} permission."
    return DEFAULT_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED]


class Processors:
    """Kafka's network processors of one SocketServer: ``num.network.threads`` per listener,
    numbered across its listeners in order; each new connection goes to the next one of its
    listener's, round robin, and takes that processor's next connection index."""

    def __init__(self, threads: int):
        self.threads = max(1, threads)
        self._base: dict[str, int] = {}
        self._turn: dict[str, int] = {}
        self._index: dict[int, int] = {}

    def assign(self, listener_name: str) -> tuple[int, int]:
        """(processor id, connection index) for a new connection on ``listener_name``."""
        base = self._base.setdefault(listener_name, len(self._base) * self.threads)
        turn = self._turn.get(listener_name, 0)
        self._turn[listener_name] = turn + 1
        processor = base + turn % self.threads
        index = self._index.get(processor, 0)
        self._index[processor] = index + 1
        return processor, index


def channel_info(processors: Processors, sock, listener_name: str,
                 security_protocol: str) -> ChannelInfo:
    """A new connection's ChannelInfo (its addresses from ``sock``)."""
    processor, index = processors.assign(listener_name)
    try:
        local_host, local_port = sock.getsockname()[:2]
        remote_host, remote_port = sock.getpeername()[:2]
    except OSError:
        local_host, local_port, remote_host, remote_port = "?", 0, "?", 0
    connection_id = f"{local_host}:{local_port}-{remote_host}:{remote_port}-{processor}-{index}"
    return ChannelInfo(processor, connection_id, listener_name, security_protocol)
