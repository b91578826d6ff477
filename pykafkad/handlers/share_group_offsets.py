"""The share-group offsets admin APIs (kafka-share-groups --describe / --reset-offsets /
--delete-offsets): DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets.

The group and topic checks are Kafka's (DESCRIBE for describing, READ for altering,
DELETE on the group and READ on the topics for deleting).  As Kafka's group coordinator, all
three go through the persister to each share partition's share coordinator, wherever its
__share_group_state partition is led: the start offset described is the persisted
share-partition start offset (ReadShareGroupStateSummary), and the lag (v1, KIP-1226) is HW -
start - the offsets past it whose delivery is complete; altering initializes the state afresh
(InitializeShareGroupState), deleting forgets it (DeleteShareGroupState)."""

from __future__ import annotations

import logging

import trio

from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.coordinator.share_group.group import new_group
from pykafkad.coordinator.share_group.service import service_of
from pykafkad.dispatch import RequestContext, handles
from pykafkad.network.client import NodeUnavailableError
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import DELETE, DESCRIBE, GROUP, READ, TOPIC
from wire.errors import ErrorCode, KafkaError
from wire.messages import alter_share_group_offsets_response as alter_msg
from wire.messages import delete_share_group_offsets_response as delete_msg
from wire.messages import describe_share_group_offsets_response as describe_msg
from wire.messages import list_offsets_request as list_offsets

log = logging.getLogger("pykafkad.share")

_NO_TOPIC_ID = bytes(16)
_NOT_HOSTED = "This server does not host this topic-partition."
GROUP_DENIED = DEFAULT_MESSAGES[ErrorCode.GROUP_AUTHORIZATION_FAILED]
TOPIC_DENIED = DEFAULT_MESSAGES[ErrorCode.TOPIC_AUTHORIZATION_FAILED]


async def _latest_offset(broker, svc, name: str, index: int) -> int | None:
    """The partition's latest offset (its HW) as its leader has it: Kafka's group
    coordinator asks the leaders with ListOffsets for the lag; None when it cannot say."""
    endpoint = broker.leader_endpoint(name, index)
    if endpoint is None or endpoint[0] < 0:
        return None
    node_id, host, port = endpoint
    if node_id == broker.node_id:
        try:
            return broker.replicas.get_partition_or_error(name, index).high_watermark
        except KafkaError:
            return None
    request = list_offsets.ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[
        list_offsets.ListOffsetsTopic(name=name, partitions=[list_offsets.ListOffsetsPartition(
            partition_index=index, current_leader_epoch=-1, timestamp=-1)])])
    try:
        response = await svc.persister.client(node_id, host, port).request(
            request, timeout_s=broker.config["request.timeout.ms"] / 1000)
    except (NodeUnavailableError, trio.TooSlowError, OSError):
        return None
    p = response.topics[0].partitions[0]
    return p.offset if p.error_code == 0 else None


def _forget_here(svc, key) -> None:
    """This node's cached share partition of ``key`` is read again at its next fetch."""
    svc.partitions.pop(key, None)
    svc.persisted.pop(key, None)
    svc.read_epochs.pop(key, None)


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
        states: dict = {}
        if g.topics is None:
            try:
                states = await svc.group_states(g.group_id)
            except KafkaError as e:
                groups.append(describe_msg.DescribeShareGroupOffsetsResponseGroup(
                    group_id=g.group_id, error_code=e.code, error_message=e.message))
                continue
            wanted = [(broker.topics.by_id[tid].name, tid, p) for _, tid, p in sorted(states)
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
            key = (g.group_id, tid, index)
            try:
                state = states[key] if key in states else (
                    await svc.summary(key) if tid and g.topics is not None else None)
            except KafkaError as e:
                topic_out.partitions.append(describe_msg.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=index, start_offset=-1, leader_epoch=-1, lag=-1,
                    error_code=e.code, error_message=e.message))
                continue
            if state is None:
                topic_out.partitions.append(describe_msg.DescribeShareGroupOffsetsResponsePartition(
                    partition_index=index, start_offset=-1, leader_epoch=-1, lag=-1))
                continue
            _, _, start, done = state
            done = max(done, 0)
            leader, epoch = broker.replicas.current_leader(name, index)
            hw = await _latest_offset(broker, svc, name, index)
            lag = max(hw - start - done, 0) if hw is not None and start >= 0 else -1
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
        svc.coordinator.groups[req.group_id] = new_group(req.group_id)
    unknown, known = [], []
    for t in req.topics:
        topic = broker.topics.get(t.topic_name)
        out = alter_msg.AlterShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name, topic_id=topic.topic_id if topic else _NO_TOPIC_ID,
            partitions=[])
        altered: list[int] = []
        # the partitions to initialize are recorded first (one record), as Kafka does
        initializing = [p.partition_index for p in t.partitions if topic is not None
                        and authorized(ctx, TOPIC, READ, t.topic_name)
                        and 0 <= p.partition_index < topic.num_partitions]
        if initializing:
            try:
                svc.coordinator.record_initializing(req.group_id, topic.topic_id,
                                                    t.topic_name, initializing)
            except KafkaError as e:
                log.warning("cannot record the share partitions of %s: %s", req.group_id, e)
        for p in t.partitions:
            try:
                if not authorized(ctx, TOPIC, READ, t.topic_name):
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_DENIED)
                if topic is None:
                    raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, _NOT_HOSTED)
                if not 0 <= p.partition_index < topic.num_partitions:
                    raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, _NOT_HOSTED)
                # a fresh state at the next state epoch, at the key's share coordinator
                # wherever it is (Kafka's group coordinator initializes it so); the leader
                # reads it at its next fetch (an Empty group's leaders hold no share
                # partition in their cache)
                key = (req.group_id, topic.topic_id, p.partition_index)
                state = await svc.summary(key)
                # at the group epoch (Kafka 4.4: 1 for a group made here), past the state's
                epoch = svc.coordinator.groups[req.group_id].group_epoch
                await svc.persister.initialize(
                    key, epoch if state is None else max(epoch, state[0] + 1), p.start_offset)
                _forget_here(svc, key)
                altered.append(p.partition_index)
                error, message = ErrorCode.NONE, None
            except KafkaError as e:
                error = e.code
                message = _NOT_HOSTED if e.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else e.message
            out.partitions.append(alter_msg.AlterShareGroupOffsetsResponsePartition(
                partition_index=p.partition_index, error_code=error, error_message=message))
        if initializing:
            try:
                svc.coordinator.initialized(
                    req.group_id, [(topic.topic_id, i) for i in altered],
                    [(topic.topic_id, i) for i in initializing if i not in altered])
            except KafkaError as e:  # the state is altered; a join initializes it again
                log.warning("cannot record the share partitions of %s: %s", req.group_id, e)
        (known if topic else unknown).append(out)
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
        svc.coordinator.record_deleting(req.group_id, topic.topic_id, topic.name)
        await svc.delete_topic_state_everywhere(req.group_id, topic.topic_id)
        svc.coordinator.record_deleted(req.group_id, topic.topic_id)
        out.append(delete_msg.DeleteShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name, topic_id=topic.topic_id))
    return delete_msg.DeleteShareGroupOffsetsResponse(responses=out)
