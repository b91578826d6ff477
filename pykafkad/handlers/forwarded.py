"""APIs a KRaft broker serves only by forwarding them to the active controller (Kafka's
KafkaApis ``forwardToController``): DescribeQuorum, ElectLeaders, AlterPartitionReassignments,
ListPartitionReassignments, UpdateFeatures, AddRaftVoter, RemoveRaftVoter and UnregisterBroker.  A single-node broker has no controller to ask: it neither
advertises nor answers them (the connection is closed, as for any API not enabled).

The request goes in an Envelope with the client's header and body (ForwardingManager), so the
controller answers it as if the client had asked it directly.
"""

from __future__ import annotations

from typing import Any

from pykafkad.dispatch import BROKER, RequestContext, handles
from wire.framing import encode_request
from wire.messages import API_KEYS


def is_kraft_broker(broker: Any) -> bool:
    return getattr(broker, "forwarding", None) is not None


async def _forward(ctx: RequestContext, req: Any) -> Any:
    frame = encode_request(ctx.header, req)[4:]  # the client's header and body, as sent
    return await ctx.broker.forwarding.forward(ctx, frame, req, API_KEYS[ctx.header.api_key].response_type())


def forwards(ctx: RequestContext) -> bool:
    """Whether this request came to a KRaft broker's listener (not a controller's)."""
    return ctx.listener_kind is BROKER and is_kraft_broker(ctx.broker)


async def to_controller(ctx: RequestContext, req: Any) -> Any:
    """The active controller's answer: forwarded from a broker listener, submitted to this
    node's controller on a controller listener."""
    if forwards(ctx):
        return await _forward(ctx, req)
    from pykafkad.handlers.controller_apis import _submit

    return await _submit(ctx, req)


@handles(43, 0, 2, available=is_kraft_broker)
async def handle_elect_leaders(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: election type; v2: flexible): preferred or unclean elections."""
    return await _forward(ctx, req)


@handles(45, 0, 1, available=is_kraft_broker)
async def handle_alter_partition_reassignments(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: allow_replication_factor_change)."""
    return await _forward(ctx, req)


@handles(46, 0, 0, available=is_kraft_broker)
async def handle_list_partition_reassignments(ctx: RequestContext, req: Any) -> Any:
    """Version 0."""
    return await _forward(ctx, req)


@handles(57, 0, 2, available=is_kraft_broker)
async def handle_update_features(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2: ``kafka-features upgrade/downgrade/disable`` through any broker."""
    return await _forward(ctx, req)


@handles(55, 0, 2, available=is_kraft_broker)
async def handle_describe_quorum(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2: ``kafka-metadata-quorum --bootstrap-server`` describes the quorum from any
    broker."""
    return await _forward(ctx, req)


@handles(80, 0, 1, available=is_kraft_broker)
async def handle_add_raft_voter(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1: ``kafka-metadata-quorum --bootstrap-server add-controller``."""
    return await _forward(ctx, req)


@handles(81, 0, 0, available=is_kraft_broker)
async def handle_remove_raft_voter(ctx: RequestContext, req: Any) -> Any:
    """Version 0: ``kafka-metadata-quorum --bootstrap-server remove-controller``."""
    return await _forward(ctx, req)


@handles(64, 0, 0, available=is_kraft_broker)
async def handle_unregister_broker(ctx: RequestContext, req: Any) -> Any:
    """Version 0: ``kafka-cluster unregister --id N`` through any broker."""
    return await _forward(ctx, req)
