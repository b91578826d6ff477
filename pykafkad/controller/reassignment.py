"""Partition reassignments (KIP-455) as Kafka's controller runs them.

Starting one writes the union of old and new replicas with adding/removing sets; the leader's
AlterPartition (or any ISR change) completes it once every target replica is in sync, through
PartitionChangeBuilder. Cancelling reverts to the original replicas.
"""

from __future__ import annotations

from pykafkad.controller.leadership import builder
from pykafkad.controller.partition_change import Election
from pykafkad.controller.replication_control import ReplicationControlManager, TopicControlInfo
from pykafkad.controller.result import NONE, ApiError, ControllerResult
from pykafkad.metadata.partition import PartitionRegistration
from wire.errors import ErrorCode
from wire.messages.alter_partition_reassignments_response import (
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from wire.messages.list_partition_reassignments_response import (
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)


def original_replicas(part: PartitionRegistration) -> list[int]:
    return [r for r in part.replicas if r not in part.adding_replicas]


def alter_partition_reassignments(rc: ReplicationControlManager, request,
                                  version: int = 1) -> ControllerResult:
    allow_rf_change = request.allow_replication_factor_change if version >= 1 else True
    records: list = []
    responses = []
    for topic in request.topics:
        out = ReassignableTopicResponse(name=topic.name, partitions=[])
        for p in topic.partitions:
            error = NONE
            try:
                record = _alter_one(rc, topic.name, p, allow_rf_change)
                if record is not None:
                    records.append(record)
            except ApiError as e:
                error = e
            out.partitions.append(ReassignablePartitionResponse(
                partition_index=p.partition_index, error_code=error.code,
                error_message=error.message))
        responses.append(out)
    response = AlterPartitionReassignmentsResponse(
        error_code=ErrorCode.NONE, error_message=None, responses=responses,
        allow_replication_factor_change=allow_rf_change)
    return ControllerResult(records, response, atomic=True)


def _alter_one(rc: ReplicationControlManager, topic_name: str, target, allow_rf_change: bool):
    topic_id = rc.topics_by_name.get(topic_name)
    if topic_id is None:
        raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                       f"Unable to find a topic named {topic_name}.")
    topic = rc.topics[topic_id]
    part = topic.parts.get(target.partition_index)
    if part is None:
        raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                       f"Unable to find partition {topic_name}:{target.partition_index}.")
    if target.replicas is None:
        return _cancel(rc, topic, target.partition_index, part)
    return _change(rc, topic, target.partition_index, part, list(target.replicas),
                   allow_rf_change)


def _cancel(rc, topic: TopicControlInfo, pid: int, part: PartitionRegistration):
    if not part.is_reassigning:
        # Kafka throws it with the default message, which ApiError.fromThrowable drops.
        raise ApiError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None)
    replicas = original_replicas(part)
    isr = [r for r in part.isr if r not in part.adding_replicas]
    if not isr:
        if not replicas:
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           "Invalid replica assignment: addingReplicas contains all replicas.")
        isr = [replicas[0]]
        if not rc.unclean_enabled(topic.name):
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"Unable to revert partition assignment for {topic.name}:{pid} "
                           "because it would require an unclean leader election.")
    b = builder(rc, topic, pid, part)
    if rc.unclean_enabled(topic.name):
        b.election = Election.UNCLEAN
    b.target_isr, b.target_replicas = isr, replicas
    b.target_removing, b.target_adding = [], []
    return b.build()


def _change(rc, topic: TopicControlInfo, pid: int, part: PartitionRegistration,
            target: list[int], allow_rf_change: bool):
    rc.validate_manual_assignment(target, None)
    if not allow_rf_change:
        # During a reassignment the factor is the target's: replicas + adding - removing.
        current = len((set(part.replicas) | set(part.adding_replicas))
                      - set(part.removing_replicas)) if part.is_reassigning \
            else len(part.replicas)
        if current != len(target):
            raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                           f"The replication factor is changed from {current} to {len(target)}")
    current_replicas = list(part.replicas)
    removing = sorted(set(current_replicas) - set(target))
    adding = sorted(set(target) - set(current_replicas))
    replicas = target + removing
    b = builder(rc, topic, pid, part)
    if replicas != current_replicas:
        b.target_replicas = replicas
    if removing:
        b.target_removing = removing
    if adding:
        b.target_adding = adding
    return b.build()


def list_partition_reassignments(rc: ReplicationControlManager, request) -> ControllerResult:
    topics = []
    if request.topics is None:
        wanted = [(t, sorted(t.parts)) for t in sorted(rc.topics.values(), key=lambda t: t.name)]
    else:
        wanted = [(rc.topics[rc.topics_by_name[t.name]], list(t.partition_indexes))
                  for t in request.topics if t.name in rc.topics_by_name]
    for topic, pids in wanted:
        ongoing = []
        for pid in pids:
            part = topic.parts.get(pid)
            if part is not None and part.is_reassigning:
                ongoing.append(OngoingPartitionReassignment(
                    partition_index=pid, replicas=list(part.replicas),
                    adding_replicas=list(part.adding_replicas),
                    removing_replicas=list(part.removing_replicas)))
        if ongoing:
            topics.append(OngoingTopicReassignment(name=topic.name, partitions=ongoing))
    return ControllerResult([], ListPartitionReassignmentsResponse(
        error_code=ErrorCode.NONE, error_message=None, topics=topics))
