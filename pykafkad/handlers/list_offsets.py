"""ListOffsets: earliest, latest, max timestamp and by timestamp; OffsetForLeaderEpoch."""

from __future__ import annotations

from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers.fetch import READ_COMMITTED
from wire.errors import ErrorCode, KafkaError
from wire.messages.list_offsets_response import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from wire.messages.offset_for_leader_epoch_response import (
    EpochEndOffset,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6
#: the first ListOffsets version that knows each special timestamp; Kafka answers an older
#: version, or a negative timestamp it does not know, with UNSUPPORTED_VERSION per partition
SPECIAL_TIMESTAMP_MIN_VERSION = {
    LATEST: 0,
    EARLIEST: 0,
    MAX_TIMESTAMP: 7,  # KIP-734
    EARLIEST_LOCAL: 8,  # KIP-405
    LATEST_TIERED: 9,  # KIP-1005
    EARLIEST_PENDING_UPLOAD: 11,  # KIP-1023
}


def check_timestamp(timestamp: int, version: int) -> None:
    if timestamp < 0 and version < SPECIAL_TIMESTAMP_MIN_VERSION.get(timestamp, 0x7FFF):
        raise KafkaError(ErrorCode.UNSUPPORTED_VERSION,
                         f"ListOffsets v{version} does not support timestamp {timestamp}")


def lookup(partition, timestamp: int, isolation: int | None) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) as Kafka answers for one partition of a topic without
    tiered storage: the local log is the whole log and nothing is tiered or pending upload.
    ``isolation``: 1 read_committed (up to the LSO), 0 read_uncommitted (the HW), None a
    replica's request (the log end)."""
    plog = partition.log
    if isolation == READ_COMMITTED:
        limit = plog.last_stable_offset
    elif isolation is None:
        limit = plog.log_end_offset
    else:
        limit = plog.high_watermark
    epoch = partition.leader_epoch
    if timestamp == LATEST:
        return limit, -1, epoch
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return plog.log_start_offset, -1, epoch
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1, -1  # no tiered storage: nothing was ever tiered or is pending upload
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
    else:
        found = plog.offset_for_timestamp(timestamp)
    if found is None or found[0] >= limit:
        return -1, -1, -1
    epoch_of_record = plog.epoch_for_offset(found[0])
    return found[0], found[1], -1 if epoch_of_record is None else epoch_of_record


@handles(2, 1, 11)
async def handle_list_offsets(ctx: RequestContext, req) -> ListOffsetsResponse:
    """Versions 1-11 (Kafka 4 closes the connection on v0; v4+: leader epoch checks and
    answers; v2+: isolation level, read_committed answers LATEST with the last stable offset).
    Special timestamps: -1 latest, -2 earliest, -3 max timestamp (v7+), -4 earliest local
    (v8+), -5 latest tiered (v9+), -6 earliest pending upload (v11+); any other negative
    timestamp, or one newer than the version, is UNSUPPORTED_VERSION.  A timestamp with no
    record at or after it gives -1/-1."""
    broker = ctx.broker
    v = ctx.version
    # Kafka: a replica's request reads to the log end; v0-1 know no isolation level
    isolation = None if req.replica_id >= 0 else (req.isolation_level if v >= 2 else 0)
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            resp = ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=0, timestamp=-1, offset=-1,
                leader_epoch=-1)
            parts.append(resp)
            try:  # (a debugging replica, -2, may read a follower: Kafka's fetchOnlyFromLeader)
                partition = broker.replicas.get_partition_or_error(t.name, p.partition_index)
                partition.local_log_with_epoch(
                    p.current_leader_epoch if v >= 4 else -1, require_leader=req.replica_id != -2)
                check_timestamp(p.timestamp, v)
                offset, ts, epoch = lookup(partition, p.timestamp, isolation)
            except KafkaError as e:
                resp.error_code = e.code
                continue
            resp.offset, resp.timestamp, resp.leader_epoch = offset, ts, epoch
        topics.append(ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics)


@handles(23, 2, 4)
async def handle_offset_for_leader_epoch(ctx: RequestContext, req) -> OffsetForLeaderEpochResponse:
    """Versions 2-4 (Kafka 4 closes the connection on 0-1; librdkafka uses v2 only; Java 3-4).  Answers the largest epoch <= the
    requested one with the start offset of the next epoch (or the log end offset)."""
    broker = ctx.broker
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            res = EpochEndOffset(error_code=0, partition=p.partition, leader_epoch=-1, end_offset=-1)
            parts.append(res)
            try:
                partition = broker.replicas.get_partition_or_error(t.topic, p.partition)
                plog = partition.local_log_with_epoch(p.current_leader_epoch)
            except KafkaError as e:
                res.error_code = e.code
                continue
            res.leader_epoch, res.end_offset = plog.end_offset_for_epoch(p.leader_epoch)
        topics.append(OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)
