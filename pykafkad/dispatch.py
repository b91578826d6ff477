"""The handler registry: which APIs and versions the broker serves, and how to call them.

ApiVersions advertises exactly what is registered here, so an API exists for clients only
once a handler for it is written and tested.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from wire.framing import RequestHeader
from wire.messages import API_KEYS

log = logging.getLogger("pykafkad.dispatch")


@dataclass
class RequestContext:
    broker: Any  # pykafkad.broker.Broker (not imported: dispatch sits above handlers)
    header: RequestHeader
    peer: str

    @property
    def version(self) -> int:
        return self.header.api_version


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
    #: whether this node serves the API at all (None: always); the quorum APIs exist only on a
    #: node that runs a raft client, as on Kafka's controller listener
    available: Callable[[Any], bool] | None = None

    @property
    def request_type(self) -> type:
        return API_KEYS[self.api_key].request_type()

    @property
    def response_type(self) -> type:
        return API_KEYS[self.api_key].response_type()


HANDLERS: dict[int, Handler] = {}


def handles(
    api_key: int, min_version: int, max_version: int, *, advertised_min_version: int | None = None,
    available: Callable[[Any], bool] | None = None,
) -> Callable[[HandlerFn], HandlerFn]:
    """Registers an ``async def handle_x(ctx, request) -> response | None``."""
    spec = API_KEYS[api_key]
    assert spec.lowest_version <= min_version <= max_version <= spec.highest_version
    advertised = min_version if advertised_min_version is None else advertised_min_version
    assert advertised <= min_version

    def register(fn: HandlerFn) -> HandlerFn:
        HANDLERS[api_key] = Handler(api_key, min_version, max_version, fn, advertised, available)
        return fn

    return register


def is_available(handler: Handler, broker: Any) -> bool:
    """Whether ``broker`` serves ``handler``'s API: a node may restrict itself to a set of API
    keys (``served_api_keys``, e.g. a controller-only node) and a handler may need a part the
    node lacks. Kafka neither advertises nor answers an API that is not enabled on a listener:
    the connection is closed."""
    served = getattr(broker, "served_api_keys", None)
    if served is not None and handler.api_key not in served:
        return False
    return handler.available is None or handler.available(broker)


def load_handlers() -> dict[int, Handler]:
    import pykafkad.handlers  # noqa: F401  (registers every handler module)

    return HANDLERS
