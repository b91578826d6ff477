"""KIP-848 consumer groups: ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69).

The logic lives in pykafkad.coordinator.consumer_group; these handlers map the fields.  Both
answer NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when the group's __consumer_offsets
partition is not served here, as every group request does.
"""

from __future__ import annotations

from pykafkad.coordinator.consumer_group.manager import (
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    Heartbeat,
)
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations
from pykafkad.handlers.groups import client_host
from pykafkad.security.api_acls import authorized, split_by_authorization
from pykafkad.security.authorizer import DESCRIBE, GROUP, READ
from wire.errors import ErrorCode
from wire.messages import consumer_group_describe_response as cgd
from wire.messages.consumer_group_heartbeat_response import (
    Assignment,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)


@handles(68, 0, 1)
async def handle_consumer_group_heartbeat(ctx: RequestContext, req) -> ConsumerGroupHeartbeatResponse:
    """Versions 0-1 (v1: the client generates its member id, and a subscribed topic regex)."""
    if not authorized(ctx, GROUP, READ, req.group_id):
        return ConsumerGroupHeartbeatResponse(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                              member_epoch=0, heartbeat_interval_ms=0)
    groups = ctx.broker.groups
    code = groups.coordinator.unavailable_error(req.group_id) if req.group_id else 0
    if groups.closed:
        code = ErrorCode.NOT_COORDINATOR
    if code:
        return ConsumerGroupHeartbeatResponse(throttle_time_ms=0, error_code=code,
                                              member_epoch=0, heartbeat_interval_ms=0)
    hb = Heartbeat(
        group_id=req.group_id, member_id=req.member_id, member_epoch=req.member_epoch,
        instance_id=req.instance_id, rack_id=req.rack_id,
        rebalance_timeout_ms=req.rebalance_timeout_ms,
        subscribed_topic_names=req.subscribed_topic_names,
        subscribed_topic_regex=req.subscribed_topic_regex if ctx.version >= 1 else None,
        server_assignor=req.server_assignor,
        owned=None if req.topic_partitions is None else
        [(tp.topic_id, list(tp.partitions)) for tp in req.topic_partitions],
        client_id=ctx.header.client_id or "", client_host=client_host(ctx.peer),
        api_version=ctx.version)
    result = groups.call(groups.coordinator.consumer_groups.heartbeat, hb)
    assignment = None
    if result.assignment is not None:
        assignment = Assignment(topic_partitions=[
            TopicPartitions(topic_id=t, partitions=sorted(ps))
            for t, ps in sorted(result.assignment.items())])
    return ConsumerGroupHeartbeatResponse(
        throttle_time_ms=0, error_code=result.error, error_message=result.message,
        member_id=result.member_id, member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=assignment)


def _assignment(partitions, topics) -> cgd.Assignment:
    out = []
    for t, ps in sorted(partitions.items()):
        name = topics.name_of(t)
        if name is not None and ps:
            out.append(cgd.TopicPartitions(topic_id=t, topic_name=name, partitions=sorted(ps)))
    out.sort(key=lambda tp: tp.topic_name)
    return cgd.Assignment(topic_partitions=out)


@handles(69, 0, 1)
async def handle_consumer_group_describe(ctx: RequestContext, req) -> cgd.ConsumerGroupDescribeResponse:
    """Versions 0-1 (v1: each member's type)."""
    groups = ctx.broker.groups
    manager = groups.coordinator.consumer_groups
    denied, allowed = split_by_authorization(ctx, GROUP, DESCRIBE, req.group_ids)
    out = [cgd.DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=g) for g in denied]
    for group_id in allowed:
        code = groups.coordinator.unavailable_error(group_id)
        if code:
            out.append(cgd.DescribedGroup(error_code=code, group_id=group_id))
            continue
        d = groups.call(manager.describe, group_id)
        if d.error:
            out.append(cgd.DescribedGroup(error_code=d.error, error_message=d.message,
                                          group_id=group_id))
            continue
        members = [cgd.Member(
            member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
            member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=sorted(m.subscribed_topic_names),
            subscribed_topic_regex=m.subscribed_topic_regex or "",  # Kafka: "" when none
            assignment=_assignment(m.assigned, manager.topics),
            target_assignment=_assignment(d.targets.get(m.member_id, {}), manager.topics),
            member_type=MEMBER_TYPE_CONSUMER if m.classic is None else MEMBER_TYPE_CLASSIC)
            for m in d.members]
        out.append(cgd.DescribedGroup(
            error_code=0, group_id=group_id, group_state=d.state, group_epoch=d.group_epoch,
            assignment_epoch=d.assignment_epoch, assignor_name=d.assignor, members=members,
            authorized_operations=authorized_operations.GROUP
            if req.include_authorized_operations else authorized_operations.OMITTED))
    return cgd.ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=out)
