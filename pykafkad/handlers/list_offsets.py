"""ListOffsets: earliest, latest, max timestamp and by timestamp; OffsetForLeaderEpoch."""

from __future__ import annotations

from pykafkad.broker import LEADER_EPOCH
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers.fetch import READ_COMMITTED, leader_epoch_error
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


def lookup(plog, timestamp: int, read_committed: bool) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) as Kafka answers for one partition."""
    if timestamp == LATEST:
        offset = plog.last_stable_offset if read_committed else plog.high_watermark
        return offset, -1, LEADER_EPOCH
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return plog.log_start_offset, -1, LEADER_EPOCH
    if timestamp == LATEST_TIERED:
        return -1, -1, -1  # no tiered storage: nothing was ever tiered
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
    elif timestamp < 0:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"unknown special timestamp {timestamp}")
    else:
        found = plog.offset_for_timestamp(timestamp)
    limit = plog.last_stable_offset if read_committed else plog.high_watermark
    if found is None or found[0] >= limit:
        return -1, -1, -1
    return found[0], found[1], LEADER_EPOCH


@handles(2, 0, 10)
async def handle_list_offsets(ctx: RequestContext, req) -> ListOffsetsResponse:
    """Versions 0-10 (v0: ``old_style_offsets`` list; v4+: leader epoch checks and answers;
    v2+: isolation level, read_committed answers LATEST with the last stable offset).  An
    unknown timestamp (no record at or after it) gives -1/-1."""
    broker = ctx.broker
    v = ctx.version
    read_committed = v >= 2 and req.isolation_level == READ_COMMITTED
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            resp = ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=0, timestamp=-1, offset=-1,
                leader_epoch=-1, old_style_offsets=[])
            parts.append(resp)
            plog = broker.logs.get(t.name, p.partition_index)
            if plog is None:
                resp.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            if v >= 4:
                resp.error_code = leader_epoch_error(p.current_leader_epoch)
                if resp.error_code:
                    continue
            try:
                offset, ts, epoch = lookup(plog, p.timestamp, read_committed)
            except KafkaError as e:
                resp.error_code = e.code
                continue
            if v == 0:
                resp.old_style_offsets = [offset] if offset >= 0 else []
            resp.offset, resp.timestamp, resp.leader_epoch = offset, ts, epoch
        topics.append(ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics)


@handles(23, 0, 4)
async def handle_offset_for_leader_epoch(ctx: RequestContext, req) -> OffsetForLeaderEpochResponse:
    """Versions 0-4 (librdkafka uses v2 only; Java 3-4).  Answers the largest epoch <= the
    requested one with the start offset of the next epoch (or the log end offset)."""
    broker = ctx.broker
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            plog = broker.logs.get(t.topic, p.partition)
            res = EpochEndOffset(error_code=0, partition=p.partition, leader_epoch=-1, end_offset=-1)
            parts.append(res)
            if plog is None:
                res.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            if ctx.version >= 2:
                res.error_code = leader_epoch_error(p.current_leader_epoch)
                if res.error_code:
                    continue
            res.leader_epoch, res.end_offset = plog.end_offset_for_epoch(p.leader_epoch)
        topics.append(OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics)
