"""The active controller's APIs on controller listeners (Kafka's ControllerApis), with Kafka
4.4's controller version ranges: each is handed to the node's ControllerServer, which answers
NOT_CONTROLLER unless it is the active controller. Envelope carries a request a broker
forwarded (its ForwardingManager): unwrapped, handled here, the response wrapped back.

A node without a controller (a broker-only node) never serves these: they are registered for
CONTROLLER listeners only.
"""

from __future__ import annotations

import logging
from typing import Any

from pykafkad.dispatch import CONTROLLER, CONTROLLER_HANDLERS, RequestContext, handles
from pykafkad.kraft.error_responses import error_response
from pykafkad.kraft.forwarding import client_peer, deserialize_principal
from pykafkad.security.api_acls import authorized, cluster_gate_allows
from pykafkad.security.cluster_denial import denial_message, forwarded
from wire.errors import ErrorCode, RemoteProtocolError
from wire.framing import encode_response, read_request_header
from wire.messages.envelope_response import EnvelopeResponse
from wire.primitives import Reader

log = logging.getLogger("pykafkad.controller")

ENVELOPE_KEY = 58


async def _submit(ctx: RequestContext, req: Any, *, mutation: bool = False) -> Any:
    """``mutation``: CreateTopics, DeleteTopics or CreatePartitions, which take from the
    principal's and client's controller_mutation_rate."""
    server = getattr(ctx.broker, "controller_server", None)
    if server is None:  # a node started without the controller role
        return error_response(req, ErrorCode.NOT_CONTROLLER,
                              "No controller appears to be active.")
    mutator = None
    if mutation:
        user = ctx.principal.name if ctx.principal is not None else "ANONYMOUS"
        mutator = (user, ctx.header.client_id or "", ctx.header.api_key)
    response = await server.submit(req, ctx.version, authorize=_authorizing(ctx),
                                   mutator=mutator)
    if mutation and not ctx.forwarded:
        # a client of the controller listener itself is muted for the throttle time; a
        # forwarded request's broker mutes its client instead (RequestHandlerHelper)
        ctx.throttle_ms = max(ctx.throttle_ms, getattr(response, "throttle_time_ms", 0) or 0)
    return response


def _authorizing(ctx: RequestContext):
    """What the request's principal may do, as the controller asks it per topic; None on a
    node without an authorizer."""
    if getattr(ctx.broker, "authorizer", None) is None:
        return None
    return lambda operation, resource_type, name: authorized(ctx, resource_type, operation, name)


@handles(62, 0, 4, listeners=CONTROLLER)
async def handle_broker_registration(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-4 (v2: log dir ids, KIP-858; v3: the previous broker epoch, KIP-966; v4
    allows a supported feature's minimum of 0, KAFKA-17011)."""
    return await _submit(ctx, req)


@handles(70, 0, 0, listeners=CONTROLLER)
async def handle_controller_registration(ctx: RequestContext, req: Any) -> Any:
    """Version 0 (KIP-919): a controller's endpoints and supported features, written as a
    RegisterControllerRecord."""
    return await _submit(ctx, req)


@handles(57, 0, 2, listeners=CONTROLLER)
async def handle_update_features(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: upgrade types and dry runs; v2: no per-feature results)."""
    return await _submit(ctx, req)


@handles(63, 0, 2, listeners=CONTROLLER)
async def handle_broker_heartbeat(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: offline log dirs; v2: cordoned log dirs)."""
    return await _submit(ctx, req)


@handles(64, 0, 0, listeners=CONTROLLER)
async def handle_unregister_broker(ctx: RequestContext, req: Any) -> Any:
    """Version 0."""
    return await _submit(ctx, req)


@handles(56, 2, 3, listeners=CONTROLLER)
async def handle_alter_partition(ctx: RequestContext, req: Any) -> Any:
    """Versions 2-3 (topic ids; v3: broker epochs of the new ISR)."""
    return await _submit(ctx, req)


@handles(67, 0, 0, listeners=CONTROLLER)
async def handle_allocate_producer_ids(ctx: RequestContext, req: Any) -> Any:
    """Version 0."""
    return await _submit(ctx, req)


@handles(19, 2, 7, listeners=CONTROLLER)
async def handle_create_topics(ctx: RequestContext, req: Any) -> Any:
    """Versions 2-7 (Kafka's controller refuses 0-1; v6+: a strict mutation quota)."""
    return await _submit(ctx, req, mutation=True)


@handles(20, 1, 6, listeners=CONTROLLER)
async def handle_delete_topics(ctx: RequestContext, req: Any) -> Any:
    """Versions 1-6 (v5+: a strict mutation quota; v6: by topic id)."""
    return await _submit(ctx, req, mutation=True)


@handles(37, 0, 3, listeners=CONTROLLER)
async def handle_create_partitions(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-3 (v3+: a strict mutation quota)."""
    return await _submit(ctx, req, mutation=True)


@handles(44, 0, 1, listeners=CONTROLLER)
async def handle_incremental_alter_configs(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1."""
    return await _submit(ctx, req)


@handles(33, 0, 2, listeners=CONTROLLER)
async def handle_alter_configs(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2."""
    return await _submit(ctx, req)


@handles(43, 0, 2, listeners=CONTROLLER)
async def handle_elect_leaders(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: election type and a top-level error)."""
    return await _submit(ctx, req)


@handles(45, 0, 1, listeners=CONTROLLER)
async def handle_alter_partition_reassignments(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: allow_replication_factor_change)."""
    return await _submit(ctx, req)


@handles(46, 0, 0, listeners=CONTROLLER)
async def handle_list_partition_reassignments(ctx: RequestContext, req: Any) -> Any:
    """Version 0."""
    return await _submit(ctx, req)


@handles(ENVELOPE_KEY, 0, 0, listeners=CONTROLLER)
async def handle_envelope(ctx: RequestContext, req: Any) -> EnvelopeResponse:
    """Version 0: a request a broker forwarded, in its own header and body, answered with the
    inner response (header and body) as ``response_data``.  (The forwarding broker's own
    CLUSTER_ACTION is checked before, by the cluster gate: security/api_acls.py; the client's
    cluster-gated requests, which brokers forward unchecked, are checked here.)"""

    r = Reader(memoryview(req.request_data))
    try:
        header = read_request_header(r)
    except RemoteProtocolError:
        return EnvelopeResponse(response_data=None, error_code=ErrorCode.INVALID_REQUEST)
    handler = CONTROLLER_HANDLERS.get(header.api_key)
    if handler is None or header.api_key == ENVELOPE_KEY or header.api_key == 18:
        return EnvelopeResponse(response_data=None, error_code=ErrorCode.INVALID_REQUEST)
    if not handler.min_version <= header.api_version <= handler.max_version:
        return EnvelopeResponse(response_data=None, error_code=ErrorCode.UNSUPPORTED_VERSION)
    try:
        inner = handler.request_type.read(r, header.api_version)
    except RemoteProtocolError as e:
        log.info("dropping a malformed forwarded request: %s", e)
        return EnvelopeResponse(response_data=None, error_code=ErrorCode.INVALID_REQUEST)
    # the client's principal and address, as the broker saw them: the APIs the controller
    # authorizes (CreateAcls, DeleteAcls, AlterUserScramCredentials) check them
    received = None if ctx.received is None else forwarded(ctx.received, len(req.request_data))
    inner_ctx = RequestContext(ctx.broker, header,
                               client_peer(req.client_host_address, ctx.peer),
                               ctx.listener_name, CONTROLLER,
                               deserialize_principal(req.request_principal), received,
                               forwarded=True)
    if cluster_gate_allows(inner_ctx, forwarded=True):
        response = await handler.fn(inner_ctx, inner)
    else:  # the APIs brokers forward unchecked (api_acls.CHECKED_BY_THE_CONTROLLER)
        response = error_response(inner, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                  denial_message(header.api_key, received))
    chunks = encode_response(header.correlation_id, header.api_key, header.api_version,
                             response)
    data = b"".join(bytes(c) for c in chunks)[4:]
    return EnvelopeResponse(response_data=data, error_code=ErrorCode.NONE)


@handles(73, 0, 0, listeners=CONTROLLER)
async def handle_assign_replicas_to_dirs(ctx: RequestContext, req: Any) -> Any:
    """Version 0 (KIP-858): the log dir of each of a broker's replicas."""
    return await _submit(ctx, req)
