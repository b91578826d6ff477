"""DeleteRecords: raise a partition's log start offset."""

from __future__ import annotations

import trio

from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages.delete_records_response import (
    DeleteRecordsPartitionResult,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)

HIGH_WATERMARK = -1


@handles(21, 0, 2)
async def handle_delete_records(ctx: RequestContext, req) -> DeleteRecordsResponse:
    """Versions 0-2.  Offset -1 means the high watermark; beyond it is OFFSET_OUT_OF_RANGE.
    With followers, the answer waits (up to the request's timeout) until every replica's log
    start reached the offset, as Kafka's DelayedDeleteRecords."""
    broker = ctx.broker
    topics = []
    waits = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            res = DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=-1,
                                               error_code=0)
            parts.append(res)
            try:  # Kafka's deleteRecordsOnLeader: the leader's log, up to its HW
                partition = broker.replicas.get_partition_or_error(t.name, p.partition_index)
                plog = partition.local_log_with_epoch()
            except KafkaError as e:
                res.error_code = e.code
                continue
            offset = plog.high_watermark if p.offset == HIGH_WATERMARK else p.offset
            if offset < 0 or offset > plog.high_watermark:
                res.error_code = ErrorCode.OFFSET_OUT_OF_RANGE
                continue
            try:
                plog.delete_records(offset)
            except KafkaError as e:
                res.error_code = e.code
                continue
            res.low_watermark = partition.low_watermark()
            if res.low_watermark < offset:  # a follower still holds older records
                waits.append((res, partition, offset))
        topics.append(DeleteRecordsTopicResult(name=t.name, partitions=parts))
    if waits:
        deadline = trio.current_time() + max(req.timeout_ms, 0) / 1000
        for res, partition, offset in waits:
            res.error_code, res.low_watermark = await broker.replicas.wait_for_low_watermark(
                partition, offset, deadline)
    return DeleteRecordsResponse(throttle_time_ms=0, topics=topics)
