"""Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete (stored in __consumer_offsets).

Unknown topics and partitions are answered UNKNOWN_TOPIC_OR_PARTITION here, as KafkaApis does
before the coordinator sees the request; a group-level refusal (ILLEGAL_GENERATION,
REBALANCE_IN_PROGRESS ...) applies to every partition the coordinator was asked about.
"""

from __future__ import annotations

from pykafkad.coordinator.coordinator import CommitPartition, CommitRequest, FetchedOffset
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages.offset_commit_response import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from wire.messages.offset_delete_response import (
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from wire.messages.offset_fetch_response import (
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)

UNKNOWN = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _partition_known(broker, topic: str, partition: int) -> bool:
    t = broker.topics.get(topic)
    return t is not None and 0 <= partition < t.num_partitions


@handles(8, 0, 9)
async def handle_offset_commit(ctx: RequestContext, req) -> OffsetCommitResponse:
    """Versions 0-9.  v1+ generation and member id (generation -1: a commit outside group
    management, accepted while the group is Empty); v1 only: per-partition commit timestamp;
    v2-4: retention_time_ms (an explicit expiry); v6+: committed leader epoch; v7+: group
    instance id; v9: GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION for a missing group."""
    broker = ctx.broker
    v = ctx.version
    errors: dict[tuple[str, int], int] = {}
    wanted: list[CommitPartition] = []
    for t in req.topics:
        for p in t.partitions:
            if not _partition_known(broker, t.name, p.partition_index):
                errors[(t.name, p.partition_index)] = UNKNOWN
                continue
            wanted.append(CommitPartition(
                topic=t.name, partition=p.partition_index, offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch if v >= 6 else -1,
                metadata=p.committed_metadata,
                commit_timestamp=p.commit_timestamp if v == 1 else -1))
    if wanted:
        commit = CommitRequest(
            group_id=req.group_id, partitions=wanted,
            generation_id=req.generation_id_or_member_epoch if v >= 1 else -1,
            member_id=req.member_id if v >= 1 else "",
            group_instance_id=req.group_instance_id if v >= 7 else None,
            retention_time_ms=req.retention_time_ms if 2 <= v <= 4 else -1,
            api_version=v)
        groups = broker.groups
        try:
            for p, error in groups.call(groups.coordinator.commit_offsets, commit):
                errors[(p.topic, p.partition)] = error
        except KafkaError as e:
            for p in wanted:
                errors[(p.topic, p.partition)] = e.code
    return OffsetCommitResponse(throttle_time_ms=0, topics=[
        OffsetCommitResponseTopic(name=t.name, partitions=[
            OffsetCommitResponsePartition(
                partition_index=p.partition_index,
                error_code=errors[(t.name, p.partition_index)])
            for p in t.partitions])
        for t in req.topics])


@handles(9, 0, 9)
async def handle_offset_fetch(ctx: RequestContext, req) -> OffsetFetchResponse:
    """Versions 0-9.  v2+ a null topic list fetches every committed offset of the group; v5+
    committed leader epochs; v7+ require_stable (UNSTABLE_OFFSET_COMMIT while a transaction's
    offsets are pending); v8+ several groups per request; v9 member id/epoch, which classic
    groups do not check.  A group without offsets answers -1 for each partition, no error."""
    v = ctx.version
    groups = ctx.broker.groups
    require_stable = v >= 7 and req.require_stable
    if v >= 8:
        wanted = [(g.group_id, None if g.topics is None else
                   [(t.name, list(t.partition_indexes)) for t in g.topics]) for g in req.groups]
    else:
        topics = req.topics
        wanted = [(req.group_id, None if topics is None else
                   [(t.name, list(t.partition_indexes)) for t in topics])]

    def fetch(group_id, topics):
        try:
            return 0, groups.call(groups.coordinator.fetch_offsets, group_id, topics,
                                  require_stable)
        except KafkaError as e:  # the group's coordinator is unavailable
            return e.code, [(t, [FetchedOffset(p, error=e.code) for p in parts])
                            for t, parts in topics or ()]

    answers = [(group_id, *fetch(group_id, topics)) for group_id, topics in wanted]
    if v >= 8:
        return OffsetFetchResponse(throttle_time_ms=0, groups=[
            OffsetFetchResponseGroup(group_id=group_id, error_code=error, topics=[
                OffsetFetchResponseTopics(name=topic, partitions=[
                    OffsetFetchResponsePartitions(
                        partition_index=f.partition, committed_offset=f.offset,
                        committed_leader_epoch=f.leader_epoch, metadata=f.metadata,
                        error_code=f.error)
                    for f in fetched])
                for topic, fetched in result])
            for group_id, error, result in answers])
    _, error, result = answers[0]
    return OffsetFetchResponse(throttle_time_ms=0, error_code=error, topics=[
        OffsetFetchResponseTopic(name=topic, partitions=[
            OffsetFetchResponsePartition(
                partition_index=f.partition, committed_offset=f.offset,
                committed_leader_epoch=f.leader_epoch, metadata=f.metadata, error_code=f.error)
            for f in fetched])
        for topic, fetched in result])


@handles(47, 0, 0)
async def handle_offset_delete(ctx: RequestContext, req) -> OffsetDeleteResponse:
    """Version 0 (KIP-496).  Offsets of topics the group is subscribed to (per its members'
    subscriptions) cannot be deleted: GROUP_SUBSCRIBED_TO_TOPIC; a non-empty group that is not
    a consumer group: NON_EMPTY_GROUP; a missing group: GROUP_ID_NOT_FOUND."""
    broker = ctx.broker
    errors: dict[tuple[str, int], int] = {}
    wanted: list[tuple[str, list[int]]] = []
    for t in req.topics:
        known = []
        for p in t.partitions:
            if _partition_known(broker, t.name, p.partition_index):
                known.append(p.partition_index)
            else:
                errors[(t.name, p.partition_index)] = UNKNOWN
        if known:
            wanted.append((t.name, known))
    groups = broker.groups
    try:
        for topic, parts in groups.call(groups.coordinator.delete_offsets, req.group_id, wanted):
            for p, error in parts:
                errors[(topic, p)] = error
    except KafkaError as e:
        return OffsetDeleteResponse(error_code=e.code, throttle_time_ms=0, topics=[])
    return OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=[
        OffsetDeleteResponseTopic(name=t.name, partitions=[
            OffsetDeleteResponsePartition(
                partition_index=p.partition_index,
                error_code=errors[(t.name, p.partition_index)])
            for p in t.partitions])
        for t in req.topics])
