"""The KRaft quorum's APIs: Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot,
DescribeQuorum and the Fetch of ``__cluster_metadata``, answered by the node's RaftClient.

Served on controller listeners (Kafka's ControllerApis, with these version ranges); a broker
listener neither advertises nor answers them: the connection is closed, as on Kafka.
"""

from __future__ import annotations

from typing import Any

from pykafkad.dispatch import CONTROLLER, RequestContext, handles
from pykafkad.handlers import describe_cluster
from wire.messages.describe_cluster_response import DescribeClusterResponse


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


@handles(80, 0, 1, listeners=CONTROLLER)
async def handle_add_raft_voter(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: ack_when_committed): the leader of a dynamic quorum adds a voter."""
    return await ctx.broker.raft.handle_add_raft_voter(req, ctx.version)


@handles(81, 0, 0, listeners=CONTROLLER)
async def handle_remove_raft_voter(ctx: RequestContext, req: Any) -> Any:
    """Version 0: the leader of a dynamic quorum removes a voter."""
    return await ctx.broker.raft.handle_remove_raft_voter(req, ctx.version)


@handles(82, 0, 0, listeners=CONTROLLER)
async def handle_update_raft_voter(ctx: RequestContext, req: Any) -> Any:
    """Version 0: a voter following the leader reports its listeners and kraft.version range
    (pykafkad.raft.update_voter)."""
    return ctx.broker.raft.handle_update_raft_voter(req, ctx.version)


@handles(59, 0, 1, listeners=CONTROLLER)
async def handle_fetch_snapshot(ctx: RequestContext, req: Any) -> Any:
    """Versions 0-1 (v1: the replica's directory id)."""
    return ctx.broker.raft.handle_fetch_snapshot(req, ctx.version)


@handles(60, 0, 2, listeners=CONTROLLER)
async def describe_controllers(ctx: RequestContext, req: Any) -> DescribeClusterResponse:
    """DescribeCluster on a controller (KIP-919, what ``--bootstrap-controller`` tools ask
    first): the registered controllers' endpoints on this listener and the active controller
    (-1 until it has registered). Asking for brokers (v0
    always does) gets Kafka's mismatched-endpoint error."""
    error = describe_cluster.endpoint_error(ctx.version, req, describe_cluster.CONTROLLER_ENDPOINT)
    if error is not None:
        return error
    raft = ctx.broker.raft
    shared = getattr(ctx.broker, "shared_server", None)
    if shared is not None:  # a KRaft node: the registered controllers (KIP-919)
        nodes = []
        for cid, reg in sorted(shared.loader.image.controllers.items()):
            ep = next((e for e in reg.listeners if e.name == ctx.listener_name), None)
            if ep is not None:
                nodes.append((cid, ep.host, ep.port, None, False))
    else:  # a bare raft node (tests): its voters
        nodes = [(n, h, p, None, False) for n, (h, p) in sorted(raft.voters.items())]
    return describe_cluster.described(
        req, describe_cluster.CONTROLLER_ENDPOINT, ctx.broker.cluster_id,
        raft.leader_and_epoch.leader_id, nodes)
