"""Streams groups (KIP-1071): StreamsGroupHeartbeat and StreamsGroupDescribe.

The logic lives in pykafkad.coordinator.streams_group; this maps the wire fields and, as
Kafka's KafkaApis does, asks for the internal topics (repartition, changelog) the
coordinator reported missing: they are created with the partition counts the topology needs.
"""

from __future__ import annotations

import logging

from pykafkad.coordinator.streams_group.assignor import TaskSets
from pykafkad.coordinator.streams_group.coordinator import (
    ACCEPTABLE_RECOVERY_LAG,
    TASK_OFFSET_INTERVAL_MS,
)
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations
from pykafkad.handlers.groups import client_host
from pykafkad.security.api_acls import authorized, split_by_authorization
from pykafkad.security.authorizer import DESCRIBE, GROUP, READ
from wire.errors import ErrorCode, KafkaError
from wire.messages import streams_group_describe_response as d
from wire.messages import streams_group_heartbeat_response as h
from wire.messages.create_topics_request import CreatableTopic, CreatableTopicConfig

log = logging.getLogger("pykafkad.streams")


def _task_ids(cls, tasks) -> list:
    by_sub: dict[str, list[int]] = {}
    for sub, p in sorted(tasks):
        by_sub.setdefault(sub, []).append(p)
    return [cls(subtopology_id=s, partitions=ps) for s, ps in by_sub.items()]


def _create_internal_topics(broker, topics) -> None:
    """Kafka's AutoTopicCreationManager.createStreamsInternalTopics: one CreateTopics per
    missing topic to the controller (default replication factor when the topology sets
    none), answered asynchronously; the next heartbeat sees them."""
    creation = getattr(broker, "auto_topic_creation", None)
    for t in topics:
        if t.partitions <= 0:
            continue
        rf = t.replication_factor if t.replication_factor > 0 else \
            broker.config["default.replication.factor"]
        if creation is not None:
            creation.create(CreatableTopic(
                name=t.name, num_partitions=t.partitions, replication_factor=rf,
                assignments=[],
                configs=[CreatableTopicConfig(k, v) for k, v in t.configs.items()]))
            continue
        try:
            broker.create_topics([(t.name, t.partitions, dict(t.configs))])
        except KafkaError as e:
            log.info("creating internal topic %s: %s", t.name, e)


@handles(88, 0, 1)
async def handle_streams_group_heartbeat(ctx: RequestContext, req):
    """Versions 0-1 (v1: AcceptableRecoveryLag as int64, TopologyDescriptionRequired, which
    is never set here: topology descriptions are not kept)."""
    if not authorized(ctx, GROUP, READ, req.group_id):
        return h.StreamsGroupHeartbeatResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    v = ctx.version
    groups = ctx.broker.groups
    coordinator = groups.coordinator

    def run():
        code = coordinator.unavailable_error(req.group_id)
        if code:
            raise KafkaError(code)
        classic = coordinator.groups.get(req.group_id)
        if classic is not None:
            if not classic.is_empty:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                                 f"Group {req.group_id} is not a streams group.")
            coordinator.groups.pop(req.group_id)  # an empty classic group becomes a streams one
        return coordinator.streams.heartbeat(req, ctx.header.client_id or "",
                                             client_host(ctx.peer))
    try:
        r = groups.call(run)
    except KafkaError as e:
        return h.StreamsGroupHeartbeatResponse(
            throttle_time_ms=0, error_code=e.code, error_message=e.message or None,
            member_id="", member_epoch=0)
    if r.create_topics:
        _create_internal_topics(ctx.broker, r.create_topics)
    tasks = r.tasks
    endpoints = None
    if r.endpoints is not None:
        endpoints = [h.EndpointToPartitions(
            user_endpoint=h.Endpoint(host=host, port=port),
            active_partitions=[h.TopicPartition(topic=t, partitions=ps) for t, ps in a.items()],
            standby_partitions=[h.TopicPartition(topic=t, partitions=ps) for t, ps in s.items()])
            for (host, port), a, s in r.endpoints]
    return h.StreamsGroupHeartbeatResponse(
        throttle_time_ms=0, error_code=0, error_message=None, member_id=r.member_id,
        member_epoch=r.member_epoch, heartbeat_interval_ms=r.heartbeat_interval_ms,
        acceptable_recovery_lag_legacy=ACCEPTABLE_RECOVERY_LAG if v == 0 else 0,
        task_offset_interval_ms=TASK_OFFSET_INTERVAL_MS,
        acceptable_recovery_lag=ACCEPTABLE_RECOVERY_LAG,
        status=[h.Status(status_code=c, status_detail=m) for c, m in r.statuses],
        active_tasks=None if tasks is None else _task_ids(h.TaskIds, tasks.active),
        standby_tasks=None if tasks is None else _task_ids(h.TaskIds, tasks.standby),
        warmup_tasks=None if tasks is None else _task_ids(h.TaskIds, tasks.warmup),
        topology_description_required=False,
        endpoint_information_epoch=r.endpoint_epoch,
        partitions_by_user_endpoint=endpoints)


def _assignment(tasks: TaskSets) -> d.Assignment:
    return d.Assignment(active_tasks=_task_ids(d.TaskIds, tasks.active),
                        standby_tasks=_task_ids(d.TaskIds, tasks.standby),
                        warmup_tasks=_task_ids(d.TaskIds, tasks.warmup))


def _task_offsets(offsets: dict) -> list:
    """A member's last reported offset sums, as Kafka 4.4's describe carries them."""
    return [d.TaskOffset(subtopology_id=s, partition=p, offset=o)
            for (s, p), o in sorted(offsets.items())]


def _describe(coordinator, group_id: str, include_ops: bool) -> d.DescribedGroup:
    code = coordinator.unavailable_error(group_id)
    group = coordinator.streams.get(group_id)
    if code or group is None:
        message = None
        if not code:
            code = ErrorCode.GROUP_ID_NOT_FOUND
            message = (f"Group {group_id} is not a streams group."
                       if group_id in coordinator.groups else f"Group {group_id} not found.")
        return d.DescribedGroup(error_code=code, error_message=message, group_id=group_id,
                                group_state="", members=[])
    topology = None
    if group.topology is not None:
        def infos(ts):
            return [d.TopicInfo(name=t.name, partitions=t.partitions,
                                replication_factor=t.replication_factor,
                                topic_configs=[d.KeyValue(key=k, value=val)
                                               for k, val in sorted(t.configs.items())])
                    for t in ts]
        topology = d.Topology(epoch=group.topology.epoch, subtopologies=[
            d.Subtopology(subtopology_id=s.subtopology_id, source_topics=s.source_topics,
                          repartition_sink_topics=s.repartition_sink_topics,
                          state_changelog_topics=infos(s.changelog_topics),
                          repartition_source_topics=infos(s.repartition_source_topics))
            for s in group.topology.subtopologies])
    members = [d.Member(
        member_id=m.member_id, member_epoch=m.member_epoch, instance_id=m.instance_id,
        rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
        topology_epoch=m.topology_epoch, process_id=m.process_id,
        user_endpoint=None if m.user_endpoint is None else
        d.Endpoint(host=m.user_endpoint[0], port=m.user_endpoint[1]),
        client_tags=[d.KeyValue(key=k, value=val) for k, val in sorted(m.client_tags.items())],
        task_offsets=_task_offsets(m.task_offsets),
        task_end_offsets=_task_offsets(m.task_end_offsets), assignment=_assignment(m.assigned),
        target_assignment=_assignment(group.target.get(m.member_id, TaskSets())),
        is_classic=False) for m in group.members.values()]
    return d.DescribedGroup(
        error_code=0, error_message=None, group_id=group_id, group_state=group.state,
        group_epoch=group.group_epoch, assignment_epoch=group.target_epoch,
        topology=topology, members=members,
        authorized_operations=authorized_operations.GROUP if include_ops
        else authorized_operations.OMITTED,
        topology_description=None, topology_description_status=0, assignor_name="sticky")


@handles(89, 0, 1)
async def handle_streams_group_describe(ctx: RequestContext, req):
    """Versions 0-1 (v1: topology description, never kept here, and the assignor name)."""
    groups = ctx.broker.groups
    coordinator = groups.coordinator
    denied, allowed = split_by_authorization(ctx, GROUP, DESCRIBE, req.group_ids)
    out = [d.DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=g, group_state="", members=[])
           for g in denied]
    out += groups.call(lambda: [_describe(coordinator, g, req.include_authorized_operations)
                                for g in allowed])
    return d.StreamsGroupDescribeResponse(throttle_time_ms=0, groups=out)
