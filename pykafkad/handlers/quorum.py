"""The KRaft quorum's APIs: Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot,
DescribeQuorum and the Fetch of ``__cluster_metadata``, answered by the node's RaftClient.

Served on controller listeners (Kafka's ControllerApis, with these version ranges); a broker
listener neither advertises nor answers them: the connection is closed, as on Kafka.
"""

from __future__ import annotations

from typing import Any

from pykafkad.dispatch import CONTROLLER, RequestContext, handles
from pykafkad.handlers import authorized_operations
from wire.errors import ErrorCode
from wire.messages.describe_cluster_response import DescribeClusterBroker, DescribeClusterResponse

CONTROLLER_ENDPOINT_TYPE = 2


@handles(1, 4, 18, listeners=CONTROLLER)
async def handle_quorum_fetch(ctx: RequestContext, req: Any) -> Any:
    """Versions 4-18: on a controller listener every Fetch is the quorum's (voters and
    observers replicating ``__cluster_metadata``), as Kafka's ControllerApis."""
    return await ctx.broker.raft.handle_fetch(req, ctx.version)


@handles(52, 0, 2, listeners=CONTROLLER)
async def handle_vote(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: voter and directory ids, endpoints; v2: pre-vote, KIP-996)."""
    return ctx.broker.raft.handle_vote(req, ctx.version)


@handles(53, 0, 1, listeners=CONTROLLER)
async def handle_begin_quorum_epoch(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: voter key and the leader's endpoints)."""
    return ctx.broker.raft.handle_begin_quorum_epoch(req, ctx.version)


@handles(54, 0, 1, listeners=CONTROLLER)
async def handle_end_quorum_epoch(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: preferred candidates with directory ids instead of ids)."""
    return ctx.broker.raft.handle_end_quorum_epoch(req, ctx.version)


@handles(55, 0, 2, listeners=CONTROLLER)
async def handle_describe_quorum(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: fetch and caught-up times; v2: directory ids, nodes' listeners)."""
    return ctx.broker.raft.handle_describe_quorum(req, ctx.version)


@handles(59, 0, 1, listeners=CONTROLLER)
async def handle_fetch_snapshot(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: the replica's directory id)."""
    return ctx.broker.raft.handle_fetch_snapshot(req, ctx.version)


@handles(60, 0, 2, listeners=CONTROLLER)
async def describe_controllers(ctx: RequestContext, req: Any) -> DescribeClusterResponse:
    """DescribeCluster on a controller (KIP-919, what ``--bootstrap-controller`` tools ask
    first): the voters' endpoints and the active controller, or UNSUPPORTED_ENDPOINT_TYPE with
    Kafka's message when the client wants brokers (v0 cannot say, so it gets controllers)."""
    if ctx.version >= 1 and req.endpoint_type != CONTROLLER_ENDPOINT_TYPE:
        return DescribeClusterResponse(
            error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message="The request was sent to an endpoint of type CONTROLLER, but we "
                          "wanted an endpoint of type BROKER",
            endpoint_type=req.endpoint_type, cluster_id="", controller_id=-1)
    raft = ctx.broker.raft
    return DescribeClusterResponse(
        error_code=ErrorCode.NONE, endpoint_type=CONTROLLER_ENDPOINT_TYPE,
        cluster_id=ctx.broker.cluster_id, controller_id=raft.leader_and_epoch.leader_id,
        brokers=[DescribeClusterBroker(broker_id=n, host=h, port=p, rack=None, is_fenced=False)
                 for n, (h, p) in sorted(raft.voters.items())],
        cluster_authorized_operations=authorized_operations.CLUSTER
        if req.include_cluster_authorized_operations else authorized_operations.OMITTED)

