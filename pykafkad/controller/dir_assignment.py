"""AssignReplicasToDirs (key 73): a broker tells the active controller which of its log dirs
holds each of its replicas (KIP-858, JBOD on KRaft).

A broker with several log dirs is given ``UNASSIGNED`` for its new replicas (the controller
cannot know where it will put them); it places each one, then reports the dir here, and the
controller records it as the partition's ``directories`` entry (a PartitionChangeRecord), as
Kafka's ReplicationControlManager.handleAssignReplicasToDirs does.  A move between dirs
(AlterReplicaLogDirs) is reported the same way once the future log has replaced the current.
"""

from __future__ import annotations

from pykafkad.controller.leadership import builder
from pykafkad.controller.replication_control import ReplicationControlManager
from pykafkad.controller.result import ControllerResult
from wire.errors import ErrorCode
from wire.messages.assign_replicas_to_dirs_response import (
    AssignReplicasToDirsResponse,
    DirectoryData,
    PartitionData,
    TopicData,
)


def assign_replicas_to_dirs(rc: ReplicationControlManager, request) -> ControllerResult:
    """Per partition: UNKNOWN_TOPIC_ID for a topic the controller does not know,
    UNKNOWN_TOPIC_OR_PARTITION for a partition it does not have, NOT_LEADER_OR_FOLLOWER when
    the broker holds no replica of it, else NONE with the new directory recorded (no record
    when it is there already).  A stale broker epoch fails the whole request
    (STALE_BROKER_EPOCH, raised to the caller)."""
    broker_id = request.broker_id
    rc.cluster.check_broker_epoch(broker_id, request.broker_epoch)
    records: list = []
    answer = AssignReplicasToDirsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE,
                                          directories=[])
    for d in request.directories:
        out_dir = DirectoryData(id=d.id, topics=[])
        answer.directories.append(out_dir)
        for t in d.topics:
            topic = rc.topics.get(t.topic_id)
            out_topic = TopicData(topic_id=t.topic_id, partitions=[])
            out_dir.topics.append(out_topic)
            for p in t.partitions:
                code = _assign(rc, topic, p.partition_index, broker_id, d.id, records)
                out_topic.partitions.append(
                    PartitionData(partition_index=p.partition_index, error_code=code))
    return ControllerResult(records, answer)


def _assign(rc, topic, index: int, broker_id: int, dir_id: bytes, records: list) -> int:
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_ID
    part = topic.parts.get(index)
    if part is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if broker_id not in part.replicas:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    change = builder(rc, topic, index, part)
    if change.default_dir is None:  # the metadata version predates directory assignment
        return ErrorCode.NONE
    change.target_directories[broker_id] = dir_id
    record = change.build()
    if record is not None:
        records.append(record)
    return ErrorCode.NONE
