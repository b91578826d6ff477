"""The KRaft quorum's APIs: Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot,
DescribeQuorum and the Fetch of ``__cluster_metadata``, answered by the node's RaftClient.

Served only by a node that runs one (Kafka serves them on its controller listener, with these
version ranges); elsewhere they are neither advertised nor answered, as on Kafka's broker
listener, where a request for an API that is not enabled closes the connection.
"""

from __future__ import annotations

from typing import Any

from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations
from pykafkad.raft.log import TOPIC, TOPIC_ID
from wire.errors import ErrorCode
from wire.messages.describe_cluster_response import DescribeClusterBroker, DescribeClusterResponse

CONTROLLER_ENDPOINT_TYPE = 2


def has_raft(broker: Any) -> bool:
    return getattr(broker, "raft", None) is not None


def is_raft_fetch(broker: Any, req: Any, version: int) -> bool:
    """A Fetch the raft client answers: every Fetch on a controller-only node (Kafka's
    controller listener sends them all to raft), else one for the metadata topic."""
    if not has_raft(broker):
        return False
    if getattr(broker, "controller_only", False):
        return True
    return any((t.topic_id == TOPIC_ID) if version >= 13 else (t.topic == TOPIC)
               for t in req.topics)


@handles(52, 0, 2, available=has_raft)
async def handle_vote(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: voter and directory ids, endpoints; v2: pre-vote, KIP-996)."""
    return ctx.broker.raft.handle_vote(req, ctx.version)


@handles(53, 0, 1, available=has_raft)
async def handle_begin_quorum_epoch(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: voter key and the leader's endpoints)."""
    return ctx.broker.raft.handle_begin_quorum_epoch(req, ctx.version)


@handles(54, 0, 1, available=has_raft)
async def handle_end_quorum_epoch(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: preferred candidates with directory ids instead of ids)."""
    return ctx.broker.raft.handle_end_quorum_epoch(req, ctx.version)


@handles(55, 0, 2, available=has_raft)
async def handle_describe_quorum(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-2 (v1: fetch and caught-up times; v2: directory ids, nodes' listeners)."""
    return ctx.broker.raft.handle_describe_quorum(req, ctx.version)


@handles(59, 0, 1, available=has_raft)
async def handle_fetch_snapshot(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: the replica's directory id)."""
    return ctx.broker.raft.handle_fetch_snapshot(req, ctx.version)


def describe_controllers(ctx: RequestContext, req: Any) -> DescribeClusterResponse:
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
