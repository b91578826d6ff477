"""Consumer groups (classic protocol): JoinGroup, SyncGroup, Heartbeat, LeaveGroup, and the admin
views DescribeGroups, ListGroups, DeleteGroups.

The logic lives in pykafkad.coordinator; these handlers map each version's fields.  A JoinGroup
or SyncGroup may wait for the rest of the group (up to the rebalance timeout); it waits on a trio
event, so only its own connection is held, as Kafka parks (mutes) that one connection.
"""

from __future__ import annotations

from pykafkad.coordinator.membership import JoinRequest, SyncRequest
from pykafkad.coordinator.share_group.service import service_of
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import DESCRIBE, GROUP, READ
from wire.errors import ErrorCode
from wire.messages.delete_groups_response import DeletableGroupResult, DeleteGroupsResponse
from wire.messages.describe_groups_response import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsResponse,
)
from wire.messages.heartbeat_response import HeartbeatResponse
from wire.messages.join_group_response import JoinGroupResponse, JoinGroupResponseMember
from wire.messages.leave_group_response import LeaveGroupResponse, MemberResponse
from wire.messages.list_groups_response import ListedGroup, ListGroupsResponse
from wire.messages.sync_group_response import SyncGroupResponse

#: DescribeGroups answers an unknown group GROUP_ID_NOT_FOUND from v6 on (KIP-1043)
GROUP_ID_NOT_FOUND_VERSION = 6


def client_host(peer: str) -> str:
    """Kafka reports a member's address as Java's InetAddress.toString(): "/127.0.0.1"."""
    host = peer.rsplit(":", 1)[0] if ":" in peer else peer
    return "/" + host.strip("[]")


@handles(11, 0, 9)
async def handle_join_group(ctx: RequestContext, req) -> JoinGroupResponse:
    """Versions 0-9.  v0 has no rebalance timeout (the session timeout is used); v4+ answers a
    new dynamic member MEMBER_ID_REQUIRED first (KIP-394); v5+ static membership
    (group.instance.id, KIP-345); v7+ nullable protocol type/name; v9 skip_assignment for a
    static leader rejoining a stable group (KIP-814)."""
    v = ctx.version
    if not authorized(ctx, GROUP, READ, req.group_id):
        return JoinGroupResponse(
            throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, generation_id=-1,
            protocol_type=None, protocol_name="" if v < 7 else None, leader="", member_id="",
            members=[])
    if req.group_id in service_of(ctx.broker).coordinator.groups:  # a share group's id
        return JoinGroupResponse(throttle_time_ms=0,
                                 error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                 generation_id=-1, member_id="", leader="", members=[],
                                 protocol_name=None if v >= 7 else "")
    result = await ctx.broker.groups.join_group(JoinRequest(
        group_id=req.group_id,
        member_id=req.member_id,
        session_timeout_ms=req.session_timeout_ms,
        rebalance_timeout_ms=req.session_timeout_ms if v == 0 else req.rebalance_timeout_ms,
        protocol_type=req.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in req.protocols],
        group_instance_id=req.group_instance_id if v >= 5 else None,
        client_id=ctx.header.client_id or "",
        client_host=client_host(ctx.peer),
        reason=req.reason if v >= 8 else None,
        api_version=v,
    ))
    protocol_name = result.protocol_name
    if v < 7 and protocol_name is None:
        protocol_name = ""
    elif v >= 7 and protocol_name == "":
        protocol_name = None
    return JoinGroupResponse(
        throttle_time_ms=0,
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=protocol_name,
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=meta)
                 for m, i, meta in result.members],
    )


@handles(14, 0, 5)
async def handle_sync_group(ctx: RequestContext, req) -> SyncGroupResponse:
    """Versions 0-5 (v3+ group instance id; v5 protocol type and name, which must be present
    and match the group's)."""
    v = ctx.version
    if v >= 5 and (req.protocol_type is None or req.protocol_name is None):
        return SyncGroupResponse(throttle_time_ms=0,
                                 error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, assignment=b"")
    if not authorized(ctx, GROUP, READ, req.group_id):
        return SyncGroupResponse(throttle_time_ms=0,
                                 error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, assignment=b"")
    result = await ctx.broker.groups.sync_group(SyncRequest(
        group_id=req.group_id,
        generation_id=req.generation_id,
        member_id=req.member_id,
        assignments={a.member_id: bytes(a.assignment) for a in req.assignments},
        group_instance_id=req.group_instance_id if v >= 3 else None,
        protocol_type=req.protocol_type if v >= 5 else None,
        protocol_name=req.protocol_name if v >= 5 else None,
    ))
    return SyncGroupResponse(
        throttle_time_ms=0, error_code=result.error, protocol_type=result.protocol_type,
        protocol_name=result.protocol_name, assignment=result.assignment)


@handles(12, 0, 4)
async def handle_heartbeat(ctx: RequestContext, req) -> HeartbeatResponse:
    """Versions 0-4 (v3+ group instance id).  REBALANCE_IN_PROGRESS tells the member to rejoin."""
    if not authorized(ctx, GROUP, READ, req.group_id):
        return HeartbeatResponse(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    groups = ctx.broker.groups
    error = groups.call(groups.coordinator.heartbeat, req.group_id, req.member_id,
                        req.group_instance_id if ctx.version >= 3 else None, req.generation_id)
    return HeartbeatResponse(throttle_time_ms=0, error_code=error)


@handles(13, 0, 5)
async def handle_leave_group(ctx: RequestContext, req) -> LeaveGroupResponse:
    """Versions 0-5: one member_id (v0-2) or a batch of members (v3+, KIP-345), which may name a
    static member by group instance id alone (administrative removal)."""
    v = ctx.version
    if not authorized(ctx, GROUP, READ, req.group_id):
        return LeaveGroupResponse(throttle_time_ms=0,
                                  error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, members=[])
    if v >= 3:
        members = [(m.member_id, m.group_instance_id, m.reason if v >= 5 else None)
                   for m in req.members]
    else:
        members = [(req.member_id, None, None)]
    groups = ctx.broker.groups
    error, results = groups.call(groups.coordinator.leave_group, req.group_id, members)
    if v < 3:
        if not error and results:
            error = results[0][2]
        return LeaveGroupResponse(throttle_time_ms=0, error_code=error)
    return LeaveGroupResponse(
        throttle_time_ms=0, error_code=error,
        members=[MemberResponse(member_id=m, group_instance_id=i, error_code=e)
                 for m, i, e in results])


@handles(15, 0, 6)
async def handle_describe_groups(ctx: RequestContext, req) -> DescribeGroupsResponse:
    """Versions 0-6.  An unknown group is described as state "Dead", without an error before
    v6 and with GROUP_ID_NOT_FOUND and Kafka's message from v6 on (KIP-1043); members carry
    metadata and assignment only when Stable."""
    groups = ctx.broker.groups
    include_ops = ctx.version >= 3 and req.include_authorized_operations
    out = []
    share_groups = service_of(ctx.broker).coordinator.groups
    for g in groups.call(groups.coordinator.describe_groups, req.groups):
        error, message = g.error, g.error_message
        if not authorized(ctx, GROUP, DESCRIBE, g.group_id):
            out.append(DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                      error_message=None, group_id=g.group_id, group_state="",
                                      protocol_type="", protocol_data="", members=[],
                                      authorized_operations=authorized_operations.OMITTED))
            continue
        if g.group_id in share_groups:  # one group-id namespace: not a classic group
            error = ErrorCode.GROUP_ID_NOT_FOUND
            message = f"Group {g.group_id} is not a classic group."
        if ctx.version < GROUP_ID_NOT_FOUND_VERSION and error == ErrorCode.GROUP_ID_NOT_FOUND:
            error, message = ErrorCode.NONE, None  # a group of another type: "Dead"
        if ctx.version >= GROUP_ID_NOT_FOUND_VERSION and not error and g.state == "Dead":
            error, message = ErrorCode.GROUP_ID_NOT_FOUND, \
                g.error_message or f"Group {g.group_id} not found."
        out.append(DescribedGroup(
            error_code=error, error_message=message, group_id=g.group_id, group_state=g.state,
            protocol_type=g.protocol_type, protocol_data=g.protocol_data,
            members=[DescribedGroupMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id,
                client_id=m.client_id, client_host=m.client_host, member_metadata=m.metadata,
                member_assignment=m.assignment) for m in g.members],
            authorized_operations=authorized_operations.of(ctx, GROUP, g.group_id)
            if include_ops and not error else authorized_operations.OMITTED))
    return DescribeGroupsResponse(throttle_time_ms=0, groups=out)


@handles(16, 0, 5)
async def handle_list_groups(ctx: RequestContext, req) -> ListGroupsResponse:
    """Versions 0-5 (v4+ states filter, case-insensitive; v5 types filter: "classic" groups)."""
    v = ctx.version
    groups = ctx.broker.groups
    listed = groups.call(groups.coordinator.list_groups,
                         req.states_filter if v >= 4 else (), req.types_filter if v >= 5 else ())
    shared = service_of(ctx.broker).coordinator.list_groups(
        req.states_filter if v >= 4 else (), req.types_filter if v >= 5 else ())
    return ListGroupsResponse(
        throttle_time_ms=0, error_code=0,
        groups=[ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type,
                            group_state=g.state, group_type=g.group_type) for g in listed]
        + [ListedGroup(group_id=g, protocol_type=p, group_state=st, group_type=t)
           for g, p, st, t in shared])


@handles(42, 0, 3)
async def handle_delete_groups(ctx: RequestContext, req) -> DeleteGroupsResponse:
    """Versions 0-3 (v3 adds a per-group ``error_message``, which Kafka leaves null for the
    errors a classic group can have).  Only Empty groups are deleted (NON_EMPTY_GROUP otherwise), with their
    committed offsets: tombstones in __consumer_offsets."""
    groups = ctx.broker.groups
    names = list(dict.fromkeys(req.groups_names))
    share = service_of(ctx.broker)
    shared = {g: await share.delete_group(g) for g in names if g in share.coordinator.groups}
    results = groups.call(groups.coordinator.delete_groups, [g for g in names if g not in shared])
    results = [(g, shared[g]) if g in shared else next(r for r in results if r[0] == g)
               for g in names]
    return DeleteGroupsResponse(
        throttle_time_ms=0,
        results=[DeletableGroupResult(group_id=g, error_code=e) for g, e in results])
