"""Fetch: long poll, byte limits (KIP-74), topic ids (v13+), incremental sessions (KIP-227).

Record data is never copied: each partition's ``records`` is a list of segment file regions
that the connection sends with ``os.sendfile``.
"""

from __future__ import annotations

import trio

from pykafkad.broker import LEADER_EPOCH
from pykafkad.dispatch import RequestContext, handles
from pykafkad.fetch_sessions import FetchSessionCache, SessionContext
from pykafkad.handlers.quorum import is_raft_fetch
from pykafkad.log.errors import KafkaStorageError
from wire.errors import ErrorCode, KafkaError
from wire.messages.fetch_response import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchResponse,
    PartitionData,
)

API_KEY = 1
TOPIC_IDS_VERSION = 13
READ_COMMITTED = 1


def leader_epoch_error(current_leader_epoch: int) -> int:
    """-1 skips the check; a newer epoch than ours is unknown, an older one fenced."""
    if current_leader_epoch < 0 or current_leader_epoch == LEADER_EPOCH:
        return ErrorCode.NONE
    if current_leader_epoch > LEADER_EPOCH:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.FENCED_LEADER_EPOCH


class PartitionRead:
    __slots__ = (
        "key", "partition", "error", "hwm", "lso", "log_start", "records", "size", "aborted")

    def __init__(self, key, partition: int):
        self.key = key
        self.partition = partition
        self.error = ErrorCode.NONE
        self.hwm = self.lso = self.log_start = -1
        self.records: list = []
        self.size = 0
        self.aborted: list = []


def read_partitions(
    broker, sctx: SessionContext, epochs: dict, uses_ids: bool, max_bytes: int,
    read_committed: bool = False,
) -> tuple[list[PartitionRead], int, bool]:
    """Reads every partition of the fetch once: (results, total bytes, any error).

    read_committed reads stop at the last stable offset and collect the aborted transactions
    of the range read (their records are in the data; consumers drop them)."""
    out: list[PartitionRead] = []
    total = 0
    any_error = False
    for key, part, fetch_offset, part_max in sctx.partitions:
        res = PartitionRead(key, part)
        out.append(res)
        topic = broker.topics.by_id.get(key) if uses_ids else broker.topics.get(key)
        try:
            plog = (broker.logs.get(topic.name, part, storage_errors=True)
                    if topic is not None else None)
        except KafkaStorageError:  # Kafka: the partition's log dir is offline
            res.error = ErrorCode.KAFKA_STORAGE_ERROR
            any_error = True
            continue
        if plog is None:
            res.error = (
                ErrorCode.UNKNOWN_TOPIC_ID
                if uses_ids and topic is None
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            )
            any_error = True
            continue
        res.hwm = plog.high_watermark
        res.lso = plog.last_stable_offset
        res.log_start = plog.log_start_offset
        res.error = leader_epoch_error(epochs.get((key, part), -1))
        if res.error:
            any_error = True
            continue
        budget = min(part_max, max_bytes - total)
        if budget <= 0 and total > 0:
            continue
        try:
            result = plog.read(
                fetch_offset, max(budget, 0), max_offset=res.lso if read_committed else res.hwm,
                min_one_batch=total == 0,
            )
        except KafkaError as e:
            res.error = e.code
            any_error = True
            continue
        res.records = result.regions
        res.size = result.size
        total += result.size
        if read_committed and result.size:
            res.aborted = plog.aborted_transactions(fetch_offset, res.lso)
    return out, total, any_error


@handles(API_KEY, 4, 18)
async def handle_fetch(ctx: RequestContext, req) -> FetchResponse:
    """Versions 4-18 (Kafka 4 closes the connection on 0-3; v18 only adds a follower's high
    watermark, a tagged field consumers never send).  v13+ names topics by id (UNKNOWN_TOPIC_ID when unknown).  Records are
    empty bytes, never null.  read_committed stops at the last stable offset and carries the
    aborted transactions of the range read (from the .txnindex files).  The wait ends when ``min_bytes`` are there, on an
    error, at ``max_wait_ms``, or at shutdown; a fetch of no partitions at all (a session
    close from Java's consumer, epoch -1) is answered at once, as Kafka does."""
    broker = ctx.broker
    v = ctx.version
    if is_raft_fetch(broker, req, v):
        return await broker.raft.handle_fetch(req, v)
    uses_ids = v >= TOPIC_IDS_VERSION
    requested = []
    epochs = {}
    for t in req.topics:
        key = t.topic_id if uses_ids else t.topic
        for p in t.partitions:
            requested.append((key, p.partition, p.fetch_offset, p.partition_max_bytes))
            epochs[(key, p.partition)] = p.current_leader_epoch
    if v >= 7:
        forgotten = [
            (f.topic_id if uses_ids else f.topic, p)
            for f in req.forgotten_topics_data
            for p in f.partitions
        ]
        sctx = broker.fetch_sessions.context(
            req.session_id, req.session_epoch, requested, forgotten, uses_ids
        )
        if sctx.error:
            return FetchResponse(throttle_time_ms=0, error_code=sctx.error, session_id=0)
    else:
        sctx = SessionContext(requested, None, incremental=False)
    # as Kafka: the request's bound, never above fetch.max.bytes
    max_bytes = min(req.max_bytes, broker.config["fetch.max.bytes"])
    read_committed = req.isolation_level == READ_COMMITTED
    deadline = trio.current_time() + max(req.max_wait_ms, 0) / 1000
    while True:
        reads, total, any_error = read_partitions(
            broker, sctx, epochs, uses_ids, max_bytes, read_committed)
        if (
            total >= req.min_bytes
            or any_error
            or not sctx.partitions  # nothing to wait for (e.g. a session close): as Kafka
            or broker.shutting_down
            or trio.current_time() >= deadline
        ):
            break
        await broker.wait_for_append(deadline)

    by_topic: dict = {}
    for res in reads:
        if not FetchSessionCache.should_include(
            sctx.session, (res.key, res.partition), bool(res.size), res.error,
            res.hwm, res.lso, res.log_start, sctx.incremental,
        ):
            continue
        by_topic.setdefault(res.key, []).append(PartitionData(
            partition_index=res.partition,
            error_code=(ErrorCode.NOT_LEADER_OR_FOLLOWER  # Kafka: v0-5 clients may not know 56
                        if res.error == ErrorCode.KAFKA_STORAGE_ERROR and v <= 5 else res.error),
            high_watermark=res.hwm,
            last_stable_offset=res.lso,
            log_start_offset=res.log_start,
            aborted_transactions=[
                AbortedTransaction(producer_id=a.producer_id, first_offset=a.first_offset)
                for a in res.aborted
            ] if read_committed else None,
            preferred_read_replica=-1,
            records=res.records or b"",
        ))
    responses = [
        FetchableTopicResponse(topic_id=key, partitions=parts)
        if uses_ids
        else FetchableTopicResponse(topic=key, partitions=parts)
        for key, parts in by_topic.items()
    ]
    return FetchResponse(
        throttle_time_ms=0, error_code=0, session_id=sctx.response_session_id,
        responses=responses)
