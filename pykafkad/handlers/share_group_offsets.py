"""The share-group offsets admin APIs (kafka-share-groups --describe / --reset-offsets /
--delete-offsets): DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets.

The group and topic checks are Kafka's (DESCRIBE for describing, READ for altering,
DELETE on the group and READ on the topics for deleting).  The start offset described is the persisted share-partition start offset, and the lag (v1,
KIP-1226) is HW - start - the offsets past it whose delivery is complete, as Kafka computes
them from its share-group state summary."""

from __future__ import annotations

from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.coordinator.share_group.group import ShareGroup
from pykafkad.coordinator.share_group.service import service_of
from pykafkad.dispatch import RequestContext, handles
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import DELETE, DESCRIBE, GROUP, READ, TOPIC
from wire.errors import ErrorCode, KafkaError
from wire.messages import alter_share_group_offsets_response as alter_msg
from wire.messages import delete_share_group_offsets_response as delete_msg
from wire.messages import describe_share_group_offsets_response as describe_msg

_NO_TOPIC_ID = bytes(16)
_NOT_HOSTED = "This server does not host this topic-partition."
GROUP_DENIED = DEFAULT_MESSAGES[ErrorCode.GROUP_AUTHORIZATION_FAILED]
TOPIC_DENIED = DEFAULT_MESSAGES[ErrorCode.TOPIC_AUTHORIZATION_FAILED]


def _state_of(svc, group_id: str, topic_id: bytes, index: int):
    """(start offset, delivery complete count) of a share partition, live or persisted."""
    sp = svc.partitions.get((group_id, topic_id, index))
    if sp is not None:
        return sp.persisted or (sp.start_offset, sp.delivery_complete_count())
    state = svc.stored_states().get((group_id, topic_id, index))
    if state is not None:
        done = sum(z - a + 1 for a, z, s, _ in state.state_batches if s != 0 and z >= state.start_offset)
        return state.start_offset, done
    return None


@handles(90, 0, 1)
async def handle_describe_share_group_offsets(ctx: RequestContext, req):
    """Versions 0-1 (v1 adds the lag).  ``topics`` null: every partition with share state."""
    broker = ctx.broker
    svc = service_of(broker)
    groups = []
    for g in req.groups:
        if not authorized(ctx, GROUP, DESCRIBE, g.group_id):
            groups.append(describe_msg.DescribeShareGroupOffsetsResponseGroup(
                group_id=g.group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                error_message=GROUP_DENIED))
            continue
        code = broker.groups.coordinator.unavailable_error(g.group_id)
        if code:
            groups.append(describe_msg.DescribeShareGroupOffsetsResponseGroup(
                group_id=g.group_id, error_code=code))
            continue
        if g.topics is None:
            keys = sorted({(tid, p) for (gid, tid, p) in list(svc.partitions) + list(svc.stored_states())
                           if gid == g.group_id})
            wanted = [(broker.topics.by_id[tid].name, tid, p) for tid, p in keys
                      if tid in broker.topics.by_id and
                      authorized(ctx, TOPIC, DESCRIBE, broker.topics.by_id[tid].name)]
        else:
            wanted = []
            for t in g.topics:
                topic = broker.topics.get(t.topic_name)
                wanted += [(t.topic_name, topic.topic_id if topic else None, p)
                           for p in t.partitions]
        by_topic: dict[str, describe_msg.DescribeShareGroupOffsetsResponseTopic] = {}
        for name, tid, index in wanted:
            topic_out = by_topic.setdefault(name, describe_msg.DescribeShareGroupOffsetsResponseTopic(
                topic_name=name, topic_id=tid or _NO_TOPIC_ID, partitions=[]))
            if g.topics is not None and not authorized(ctx, TOPIC, DESCRIBE, name):
                topic_out.topic_id = _NO_TOPIC_ID
                topic_out.partitions.append(describe_msg.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=index, start_offset=-1, leader_epoch=-1, lag=-1,
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=TOPIC_DENIED))
                continue
            state = _state_of(svc, g.group_id, tid, index) if tid else None
            if state is None:
                topic_out.partitions.append(describe_msg.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=index, start_offset=-1, leader_epoch=-1, lag=-1))
                continue
            start, done = state
            leader, epoch = broker.replicas.current_leader(name, index)
            try:
                hw = broker.replicas.get_partition_or_error(name, index).high_watermark
                lag = max(hw - start - done, 0) if start >= 0 else -1
            except KafkaError:
                lag = -1
            topic_out.partitions.append(describe_msg.DescribeShareGroupOffsetsResponsePartition(
                partition_index=index, start_offset=start, leader_epoch=epoch, lag=lag))
        groups.append(describe_msg.DescribeShareGroupOffsetsResponseGroup(
            group_id=g.group_id, topics=list(by_topic.values())))
    return describe_msg.DescribeShareGroupOffsetsResponse(groups=groups)


@handles(91, 0, 0)
async def handle_alter_share_group_offsets(ctx: RequestContext, req):
    """Version 0: sets share-partition start offsets of an Empty group (a group not known yet
    is created, as Kafka does); a topic or partition not hosted answers
    UNKNOWN_TOPIC_OR_PARTITION, unknown topics first."""
    broker = ctx.broker
    svc = service_of(broker)
    if not authorized(ctx, GROUP, READ, req.group_id):
        return alter_msg.AlterShareGroupOffsetsResponse(
            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=GROUP_DENIED)
    code = broker.groups.coordinator.unavailable_error(req.group_id)
    if code:
        return alter_msg.AlterShareGroupOffsetsResponse(error_code=code)
    group = svc.coordinator.groups.get(req.group_id)
    if group is not None and group.members:
        return alter_msg.AlterShareGroupOffsetsResponse(
            error_code=ErrorCode.NON_EMPTY_GROUP,
            error_message="The group is not empty.")
    if group is None:
        svc.coordinator.groups[req.group_id] = ShareGroup(req.group_id)
    unknown, known = [], []
    for t in req.topics:
        topic = broker.topics.get(t.topic_name)
        out = alter_msg.AlterShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name, topic_id=topic.topic_id if topic else _NO_TOPIC_ID,
            partitions=[])
        for p in t.partitions:
            try:
                if not authorized(ctx, TOPIC, READ, t.topic_name):
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_DENIED)
                if topic is None:
                    raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, _NOT_HOSTED)
                partition = broker.replicas.get_partition_or_error(t.topic_name, p.partition_index)
                plog = partition.local_log_with_epoch(-1, require_leader=True)
                if await svc.prepare(req.group_id, [(topic.topic_id, p.partition_index)]):
                    raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
                sp = svc.share_partition(req.group_id, topic.topic_id, p.partition_index, plog)
                sp.reset(p.start_offset)
                error, message = ErrorCode.NONE, None
            except KafkaError as e:
                error = e.code
                message = _NOT_HOSTED if e.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else e.message
            out.partitions.append(alter_msg.AlterShareGroupOffsetsResponsePartition(
                partition_index=p.partition_index, error_code=error, error_message=message))
        (known if topic else unknown).append(out)
    try:
        await svc.flush()
    except KafkaError as e:
        return alter_msg.AlterShareGroupOffsetsResponse(error_code=e.code)
    return alter_msg.AlterShareGroupOffsetsResponse(responses=unknown + known)


@handles(92, 0, 0)
async def handle_delete_share_group_offsets(ctx: RequestContext, req):
    """Version 0: forgets the share state of whole topics for an Empty group (the next fetch
    starts again from share.auto.offset.reset)."""
    broker = ctx.broker
    svc = service_of(broker)
    if not authorized(ctx, GROUP, DELETE, req.group_id):
        return delete_msg.DeleteShareGroupOffsetsResponse(
            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=GROUP_DENIED)
    code = broker.groups.coordinator.unavailable_error(req.group_id)
    if code:
        return delete_msg.DeleteShareGroupOffsetsResponse(error_code=code)
    group = svc.coordinator.groups.get(req.group_id)
    if group is None:
        return delete_msg.DeleteShareGroupOffsetsResponse(
            error_code=ErrorCode.GROUP_ID_NOT_FOUND,
            error_message=f"Group {req.group_id} not found.")
    if group.members:
        return delete_msg.DeleteShareGroupOffsetsResponse(
            error_code=ErrorCode.NON_EMPTY_GROUP, error_message="The group is not empty.")
    out = []
    for t in req.topics:
        topic = broker.topics.get(t.topic_name)
        if not authorized(ctx, TOPIC, READ, t.topic_name):
            out.append(delete_msg.DeleteShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name, topic_id=_NO_TOPIC_ID,
                error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=TOPIC_DENIED))
            continue
        if topic is None:
            out.append(delete_msg.DeleteShareGroupOffsetsResponseTopic(
                topic_name=t.topic_name, topic_id=_NO_TOPIC_ID,
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, error_message=_NOT_HOSTED))
            continue
        await svc.delete_topic_state_everywhere(req.group_id, topic.topic_id)
        out.append(delete_msg.DeleteShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name, topic_id=topic.topic_id))
    return delete_msg.DeleteShareGroupOffsetsResponse(responses=out)
