"""Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete (stored in __consumer_offsets).

Unknown topics and partitions are answered UNKNOWN_TOPIC_OR_PARTITION here, as KafkaApis does
before the coordinator sees the request; a group-level refusal (ILLEGAL_GENERATION,
REBALANCE_IN_PROGRESS ...) applies to every partition the coordinator was asked about.
"""

from __future__ import annotations

from pykafkad.coordinator.coordinator import CommitPartition, CommitRequest, FetchedOffset
from pykafkad.coordinator.storage import commit_replicated
from pykafkad.dispatch import RequestContext, handles
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import GROUP, READ, TOPIC
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
from wire.primitives import ZERO_UUID

UNKNOWN = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
#: OffsetCommit and OffsetFetch v10 name topics by id only (KIP-848)
TOPIC_IDS_VERSION = 10


def _topic_name(broker, topic_id: bytes) -> str | None:
    t = broker.topics.by_id.get(topic_id)
    return None if t is None else t.name


def _partition_known(broker, topic: str, partition: int) -> bool:
    t = broker.topics.get(topic)
    return t is not None and 0 <= partition < t.num_partitions


@handles(8, 2, 10)
async def handle_offset_commit(ctx: RequestContext, req) -> OffsetCommitResponse:
    """Versions 2-10 (Kafka 4 closes the connection on 0-1).  Generation and member id
    (generation -1: a commit outside group management, accepted while the group is Empty);
    v2-4: retention_time_ms (an explicit expiry); v6+: committed leader epoch; v7+: group
    instance id; v9: GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION for a missing group;
    v10: topics by id, UNKNOWN_TOPIC_ID for an unknown one."""
    broker = ctx.broker
    v = ctx.version
    uses_ids = v >= TOPIC_IDS_VERSION
    errors: dict[tuple[str, int], int] = {}
    wanted: list[CommitPartition] = []
    names = []
    group_denied = not authorized(ctx, GROUP, READ, req.group_id)
    for t in req.topics:
        name = _topic_name(broker, t.topic_id) if uses_ids else t.name
        names.append(name)
        denied = (ErrorCode.GROUP_AUTHORIZATION_FAILED if group_denied
                  else 0 if name is None or authorized(ctx, TOPIC, READ, name)
                  else ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        for p in t.partitions:
            if name is None:
                continue
            if denied:
                errors[(name, p.partition_index)] = denied
                continue
            if not _partition_known(broker, name, p.partition_index):
                errors[(name, p.partition_index)] = UNKNOWN
                continue
            wanted.append(CommitPartition(
                topic=name, partition=p.partition_index, offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch if v >= 6 else -1,
                metadata=p.committed_metadata, commit_timestamp=-1))
    if wanted:
        commit = CommitRequest(
            group_id=req.group_id, partitions=wanted,
            generation_id=req.generation_id_or_member_epoch,
            member_id=req.member_id,
            group_instance_id=req.group_instance_id if v >= 7 else None,
            retention_time_ms=req.retention_time_ms if 2 <= v <= 4 else -1,
            api_version=v)
        groups = broker.groups
        try:
            committed = groups.call(groups.coordinator.commit_offsets, commit)
        except KafkaError as e:
            for p in wanted:
                errors[(p.topic, p.partition)] = e.code
        else:
            replicated = await commit_replicated(broker, groups.coordinator.storage)
            for p, error in committed:
                errors[(p.topic, p.partition)] = error or replicated
    return OffsetCommitResponse(throttle_time_ms=0, topics=[
        OffsetCommitResponseTopic(
            name="" if uses_ids else t.name,
            topic_id=t.topic_id if uses_ids else ZERO_UUID,
            partitions=[
            OffsetCommitResponsePartition(
                partition_index=p.partition_index,
                error_code=ErrorCode.UNKNOWN_TOPIC_ID if name is None
                else errors[(name, p.partition_index)])
            for p in t.partitions])
        for t, name in zip(req.topics, names, strict=True)])


@handles(9, 1, 10)
async def handle_offset_fetch(ctx: RequestContext, req) -> OffsetFetchResponse:
    """Versions 1-10 (Kafka 4 closes the connection on v0).  v2+ a null topic list fetches
    every committed offset of the group; v5+ committed leader epochs; v7+ require_stable
    (UNSTABLE_OFFSET_COMMIT while a transaction's offsets are pending); v8+ several groups per
    request; v9 member id/epoch, which classic groups do not check; v10 topics by id (an
    unknown id: UNKNOWN_TOPIC_ID on each of its partitions).  A group without offsets answers
    -1 for each partition, no error."""
    v = ctx.version
    broker = ctx.broker
    groups = broker.groups
    require_stable = v >= 7 and req.require_stable
    if v >= TOPIC_IDS_VERSION:
        return _offset_fetch_by_id(broker, req, require_stable)
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

    members = [(g.member_id, g.member_epoch) for g in req.groups] if v >= 9 else \
        [(None, -1)] * len(wanted)

    def checked_fetch(group_id, topics, member):
        try:  # a streams (or consumer) group checks the member's epoch (v9+)
            groups.call(groups.coordinator.validate_offset_fetch, group_id, *member)
        except KafkaError as e:
            return e.code, []
        return fetch(group_id, topics)

    answers = [(group_id, *checked_fetch(group_id, topics, member))
               for (group_id, topics), member in zip(wanted, members, strict=True)]
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


def _offset_fetch_by_id(broker, req, require_stable: bool) -> OffsetFetchResponse:
    """OffsetFetch v10: the coordinator keeps offsets by topic name, so ids are resolved
    here; offsets of topics that no longer exist are not listed when all are asked for."""
    groups = broker.groups
    out = []
    for g in req.groups:
        unknown: list = []
        topics = None
        if g.topics is not None:
            topics = []
            for t in g.topics:
                name = _topic_name(broker, t.topic_id)
                if name is None:
                    unknown.append(t)
                else:
                    topics.append((name, list(t.partition_indexes)))
        try:
            groups.call(groups.coordinator.validate_offset_fetch, g.group_id, g.member_id,
                        g.member_epoch)
        except KafkaError as e:
            out.append(OffsetFetchResponseGroup(group_id=g.group_id, error_code=e.code,
                                                topics=[]))
            continue
        result = groups.call(groups.coordinator.fetch_offsets, g.group_id, topics, require_stable)
        answered = []
        for name, fetched in result:
            topic = broker.topics.get(name)
            if topic is None:
                continue
            answered.append(OffsetFetchResponseTopics(topic_id=topic.topic_id, partitions=[
                OffsetFetchResponsePartitions(
                    partition_index=f.partition, committed_offset=f.offset,
                    committed_leader_epoch=f.leader_epoch, metadata=f.metadata,
                    error_code=f.error)
                for f in fetched]))
        answered += [OffsetFetchResponseTopics(topic_id=t.topic_id, partitions=[
            OffsetFetchResponsePartitions(
                partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                error_code=ErrorCode.UNKNOWN_TOPIC_ID)
            for p in t.partition_indexes]) for t in unknown]
        out.append(OffsetFetchResponseGroup(group_id=g.group_id, error_code=0, topics=answered))
    return OffsetFetchResponse(throttle_time_ms=0, groups=out)


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
