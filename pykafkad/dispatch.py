"""The handler registry: which APIs and versions each kind of listener serves, and how to
call them.

ApiVersions advertises exactly what is registered here for the listener it is asked on, so an
API exists for clients only once a handler for it is written and tested.  As in Kafka, a
broker listener serves the broker's APIs (KafkaApis) and a controller listener (one named in
``controller.listener.names``) the controller's (ControllerApis): a handler registers for the
kinds of listener it serves, BROKER unless it says otherwise.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from wire.framing import RequestHeader
from wire.messages import API_KEYS

log = logging.getLogger("pykafkad.dispatch")


class ListenerKind(enum.Enum):
    """Which API set a listener serves: Kafka's KafkaApis or ControllerApis."""

    BROKER = "broker"
    CONTROLLER = "controller"


BROKER, CONTROLLER = ListenerKind.BROKER, ListenerKind.CONTROLLER


@dataclass
class RequestContext:
    broker: Any  # pykafkad.broker.Broker (not imported: dispatch sits above handlers)
    header: RequestHeader
    peer: str
    #: the listener the request came in on (Metadata advertises that listener's endpoints)
    listener_name: str = "PLAINTEXT"
    listener_kind: ListenerKind = BROKER
    #: the session's principal (pykafkad.security.principal.KafkaPrincipal; None: ANONYMOUS)
    principal: Any = None
    #: the request as received (pykafkad.security.cluster_denial.Received): Kafka's messages
    #: for a refused cluster operation name the connection and the request's buffer
    received: Any = None
    #: a request a broker forwarded in an Envelope (the controller throttles no connection)
    forwarded: bool = False
    #: how long the connection is muted once the response is sent (a quota's throttle time
    #: that no quota manager of the connection recorded: the controller mutation quota)
    throttle_ms: int = 0

    @property
    def principal_name(self) -> str:
        """"User:alice", as ACLs name principals."""
        return "User:ANONYMOUS" if self.principal is None else str(self.principal)

    @property
    def client_host(self) -> str:
        """The client's address without the port, as ACLs name hosts."""
        return self.peer.rsplit(":", 1)[0].strip("[]")

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def handlers(self) -> dict[int, Handler]:
        """The APIs served on this request's listener (what ApiVersions advertises)."""
        return HANDLERS_BY_KIND[self.listener_kind]

    @property
    def endpoint(self):
        """This broker's advertised endpoint on the request's listener."""
        return self.broker.endpoint_for(self.listener_name)


HandlerFn = Callable[[RequestContext, Any], Awaitable[Any]]


@dataclass(frozen=True)
class Handler:
    api_key: int
    min_version: int
    max_version: int
    fn: HandlerFn
    #: the lowest version ApiVersions advertises; below ``min_version`` only for Produce, which
    #: Kafka advertises from 0 but refuses below 3 (KAFKA-18659: librdkafka needs the 0)
    advertised_min_version: int
    #: None: served by every node with this listener kind; else whether ``broker`` serves it
    #: (DescribeQuorum on a broker listener: only a KRaft broker, which forwards it)
    available: Callable[[Any], bool] | None = None

    def served_by(self, broker: Any) -> bool:
        return self.available is None or self.available(broker)

    @property
    def request_type(self) -> type:
        return API_KEYS[self.api_key].request_type()

    @property
    def response_type(self) -> type:
        return API_KEYS[self.api_key].response_type()


#: the broker listeners' APIs (KafkaApis)
HANDLERS: dict[int, Handler] = {}
#: the controller listeners' APIs (ControllerApis)
CONTROLLER_HANDLERS: dict[int, Handler] = {}
HANDLERS_BY_KIND: dict[ListenerKind, dict[int, Handler]] = {
    BROKER: HANDLERS, CONTROLLER: CONTROLLER_HANDLERS}


def handles(
    api_key: int, min_version: int, max_version: int, *, advertised_min_version: int | None = None,
    listeners: ListenerKind | tuple[ListenerKind, ...] = BROKER,
    available: Callable[[Any], bool] | None = None,
) -> Callable[[HandlerFn], HandlerFn]:
    """Registers an ``async def handle_x(ctx, request) -> response | None`` for the listener
    kinds in ``listeners`` (one kind or a tuple); an API may have a different handler per kind
    (Kafka's CreateTopics is KafkaApis' forwarding on a broker, the controller's own on a
    controller), but only one per kind."""
    spec = API_KEYS[api_key]
    assert spec.lowest_version <= min_version <= max_version <= spec.highest_version
    advertised = min_version if advertised_min_version is None else advertised_min_version
    assert advertised <= min_version
    kinds = (listeners,) if isinstance(listeners, ListenerKind) else tuple(listeners)

    def register(fn: HandlerFn) -> HandlerFn:
        for kind in kinds:
            HANDLERS_BY_KIND[kind][api_key] = Handler(
                api_key, min_version, max_version, fn, advertised, available)
        return fn

    return register


def load_handlers() -> dict[int, Handler]:
    import pykafkad.handlers  # noqa: F401  (registers every handler module)

    return HANDLERS
