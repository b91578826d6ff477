"""ListOffsets: earliest, latest, max timestamp and by timestamp; OffsetForLeaderEpoch."""

from __future__ import annotations

from pykafkad.broker import LEADER_EPOCH
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers.fetch import READ_COMMITTED, leader_epoch_error
from pykafkad.log.errors import KafkaStorageError
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


def lookup(plog, timestamp: int, read_committed: bool) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) as Kafka answers for one partition of a topic without
    tiered storage: the local log is the whole log and nothing is tiered or pending upload."""
    if timestamp == LATEST:
        offset = plog.last_stable_offset if read_committed else plog.high_watermark
        return offset, -1, LEADER_EPOCH
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return plog.log_start_offset, -1, LEADER_EPOCH
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return -1, -1, -1  # no tiered storage: nothing was ever tiered or is pending upload
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
    else:
        found = plog.offset_for_timestamp(timestamp)
    limit = plog.last_stable_offset if read_committed else plog.high_watermark
    if found is None or found[0] >= limit:
        return -1, -1, -1
    return found[0], found[1], LEADER_EPOCH


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
    read_committed = v >= 2 and req.isolation_level == READ_COMMITTED
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            resp = ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=0, timestamp=-1, offset=-1,
                leader_epoch=-1)
            parts.append(resp)
            try:
                plog = broker.logs.get(t.name, p.partition_index, storage_errors=True)
            except KafkaStorageError:  # Kafka: the partition's log dir is offline
                resp.error_code = ErrorCode.KAFKA_STORAGE_ERROR
                continue
            if plog is None:
                resp.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            if v >= 4:
                resp.error_code = leader_epoch_error(p.current_leader_epoch)
                if resp.error_code:
                    continue
            try:
                check_timestamp(p.timestamp, v)
                offset, ts, epoch = lookup(plog, p.timestamp, read_committed)
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
                plog = broker.logs.get(t.topic, p.partition, storage_errors=True)
            except KafkaStorageError:  # Kafka: the partition's log dir is offline
                res.error_code = ErrorCode.KAFKA_STORAGE_ERROR
                continue
            if plog is None:
                res.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            res.error_code = leader_epoch_error(p.current_leader_epoch)
            if res.error_code:
                continue
            res.leader_epoch, res.end_offset = plog.end_offset_for_epoch(p.leader_epoch)
        topics.append(OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)
