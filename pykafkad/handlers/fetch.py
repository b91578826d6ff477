"""Fetch: long poll, byte limits (KIP-74), topic ids (v13+), incremental sessions (KIP-227).

Record data is never copied: each partition's ``records`` is a list of segment file regions
that the connection sends with ``os.sendfile``.
"""

from __future__ import annotations

import trio

from pykafkad.dispatch import RequestContext, handles
from pykafkad.fetch_sessions import FetchSessionCache, SessionContext
from pykafkad.replica.partition import HIGH_WATERMARK, LOG_END, TXN_COMMITTED
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import CLUSTER, CLUSTER_ACTION, READ, TOPIC
from wire.errors import ErrorCode, KafkaError
from wire.messages.fetch_response import (
    AbortedTransaction,
    EpochEndOffset,
    FetchableTopicResponse,
    FetchResponse,
    LeaderIdAndEpoch,
    PartitionData,
)

API_KEY = 1
TOPIC_IDS_VERSION = 13
READ_COMMITTED = 1
#: consumers send their rack (client metadata) from v11 on
RACK_AWARE_VERSION = 11
#: v16+ tells where the leader is on NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH (KIP-951)
CURRENT_LEADER_VERSION = 16
_POINT_TO_LEADER = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)


class PartitionRead:
    __slots__ = ("key", "partition", "error", "hwm", "lso", "log_start", "records", "size",
                 "aborted", "diverging")

    def __init__(self, key, partition: int):
        self.key = key
        self.partition = partition
        self.error = ErrorCode.NONE
        self.hwm = self.lso = self.log_start = -1
        self.records: list = []
        self.size = 0
        self.aborted: list = []
        self.diverging: tuple[int, int] | None = None


class FetchParams:
    """The request-wide part of a fetch (Kafka's FetchParams)."""

    __slots__ = ("replica_id", "replica_epoch", "isolation", "uses_ids", "max_bytes", "details",
                 "update_fetch_state", "fetch_only_leader", "denied")

    def __init__(self, replica_id: int, replica_epoch: int, read_committed: bool,
                 uses_ids: bool, max_bytes: int, details: dict, version: int):
        self.replica_id = replica_id
        self.replica_epoch = replica_epoch
        self.isolation = (LOG_END if replica_id >= 0
                          else TXN_COMMITTED if read_committed else HIGH_WATERMARK)
        self.uses_ids = uses_ids
        self.max_bytes = max_bytes
        #: (key, partition) -> (current leader epoch, last fetched epoch, follower log start)
        self.details = details
        #: a follower's position is recorded once per request, not on each long-poll re-read
        self.update_fetch_state = True
        #: KIP-392: a consumer that sends client metadata (v11+) may read from a follower
        self.fetch_only_leader = replica_id >= 0 or version < RACK_AWARE_VERSION
        #: topic keys the principal may not READ (TOPIC_AUTHORIZATION_FAILED)
        self.denied: frozenset = frozenset()

    @property
    def is_from_follower(self) -> bool:
        return self.replica_id >= 0


def _read_one(broker, params: FetchParams, res: PartitionRead, topic, fetch_offset: int,
              budget: int, min_one_batch: bool) -> None:
    """One partition: the checks of Kafka's Partition.fetchRecords, the read, and for a
    follower its new position (which may move the ISR and the HW)."""
    current_epoch, last_fetched_epoch, follower_start = params.details.get(
        (res.key, res.partition), (-1, -1, -1))
    if res.key in params.denied:
        res.error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        return
    if topic is None:
        res.error = (ErrorCode.UNKNOWN_TOPIC_ID if params.uses_ids
                     else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return
    try:
        partition = broker.replicas.get_partition_or_error(topic.name, res.partition)
        plog = partition.local_log_with_epoch(
            current_epoch, require_leader=params.fetch_only_leader)
        if params.is_from_follower:
            partition.follower_or_error(params.replica_id, current_epoch)
        hwm, lso, log_start, leo = (plog.high_watermark, plog.last_stable_offset,
                                    plog.log_start_offset, plog.log_end_offset)
        if params.is_from_follower and last_fetched_epoch >= 0:
            res.diverging = partition.diverging_epoch(last_fetched_epoch, fetch_offset)
        if res.diverging is None and (budget > 0 or min_one_batch):
            result = partition.read_records(
                fetch_offset, max(budget, 0), params.isolation, min_one_batch=min_one_batch)
            res.records = result.regions
            res.size = result.size
            if params.isolation == TXN_COMMITTED and result.size:
                res.aborted = plog.aborted_transactions(fetch_offset, lso)
    except KafkaError as e:
        res.error = e.code
        return
    res.hwm, res.lso, res.log_start = hwm, lso, log_start
    if params.is_from_follower and params.update_fetch_state and res.diverging is None:
        partition.update_follower_fetch_state(
            params.replica_id, fetch_offset, follower_start, broker.clock(), leo,
            params.replica_epoch)


def read_partitions(
    broker, sctx: SessionContext, params: FetchParams,
) -> tuple[list[PartitionRead], int, bool]:
    """Reads every partition of the fetch once: (results, total bytes, any error).

    A consumer reads up to the high watermark (read_committed: the last stable offset, with
    the aborted transactions of the range read; consumers drop their records), a follower up
    to the log end.  On an error the offsets are -1, as Kafka answers."""
    out: list[PartitionRead] = []
    total = 0
    any_error = False
    max_bytes = params.max_bytes
    for key, part, fetch_offset, part_max in sctx.partitions:
        res = PartitionRead(key, part)
        out.append(res)
        topic = broker.topics.by_id.get(key) if params.uses_ids else broker.topics.get(key)
        budget = min(part_max, max_bytes - total)
        _read_one(broker, params, res, topic, fetch_offset, budget, total == 0)
        if res.error or res.diverging is not None:
            any_error = True
            continue
        total += res.size
    params.update_fetch_state = False
    return out, total, any_error


def _unreadable(ctx: RequestContext, keys: set, uses_ids: bool) -> frozenset:
    """The fetched topics a consumer may not READ (an unknown id: by its null name)."""
    by_id = ctx.broker.topics.by_id
    denied = set()
    for key in keys:
        topic = by_id.get(key) if uses_ids else None
        name = topic.name if topic is not None else (None if uses_ids else key)
        if name is not None and not authorized(ctx, TOPIC, READ, name):
            denied.add(key)
    return frozenset(denied)


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
    uses_ids = v >= TOPIC_IDS_VERSION
    requested = []
    details = {}
    for t in req.topics:
        key = t.topic_id if uses_ids else t.topic
        for p in t.partitions:
            requested.append((key, p.partition, p.fetch_offset, p.partition_max_bytes))
            details[(key, p.partition)] = (
                p.current_leader_epoch, p.last_fetched_epoch, p.log_start_offset)
    if v >= 15:
        replica_id, replica_epoch = req.replica_state.replica_id, req.replica_state.replica_epoch
    else:
        replica_id, replica_epoch = req.replica_id, -1
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
    quotas = getattr(broker, "client_quotas", None)
    if quotas is not None and quotas.active and replica_id < 0:
        # a consumer under a consumer_byte_rate quota: at most one quota window's bytes
        max_bytes = min(max_bytes, quotas.fetch_window_bytes(ctx.header.client_id or ""))
    read_committed = req.isolation_level == READ_COMMITTED
    params = FetchParams(
        replica_id, replica_epoch, read_committed, uses_ids, max_bytes, details, v)
    if broker.authorizer is not None:
        if replica_id >= 0 and not authorized(ctx, CLUSTER, CLUSTER_ACTION):
            return FetchResponse(throttle_time_ms=0,
                                 error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, session_id=0)
        if replica_id < 0:
            params.denied = _unreadable(ctx, {r[0] for r in sctx.partitions}, uses_ids)
    deadline = trio.current_time() + max(req.max_wait_ms, 0) / 1000
    while True:
        reads, total, any_error = read_partitions(broker, sctx, params)
        if (
            total >= req.min_bytes
            or any_error
            or not sctx.partitions  # nothing to wait for (e.g. a session close): as Kafka
            or broker.shutting_down
            or trio.current_time() >= deadline
        ):
            break
        if params.is_from_follower:  # a follower waits for the log end, a consumer the HW
            await broker.replicas.wait_for_log_end(deadline)
        else:
            await broker.replicas.wait_for_high_watermark(deadline)

    by_topic: dict = {}
    for res in reads:
        if not FetchSessionCache.should_include(
            sctx.session, (res.key, res.partition), bool(res.size) or res.diverging is not None,
            res.error,
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
            **({"diverging_epoch": EpochEndOffset(epoch=res.diverging[0],
                                                  end_offset=res.diverging[1])}
               if res.diverging is not None else {}),
            records=res.records or b"",
        ))
        if v >= CURRENT_LEADER_VERSION and res.error in _POINT_TO_LEADER:
            _point_to_leader(broker, by_topic[res.key][-1], res, uses_ids)
    responses = [
        FetchableTopicResponse(topic_id=key, partitions=parts)
        if uses_ids
        else FetchableTopicResponse(topic=key, partitions=parts)
        for key, parts in by_topic.items()
    ]
    return FetchResponse(
        throttle_time_ms=0, error_code=0, session_id=sctx.response_session_id,
        responses=responses)


def _point_to_leader(broker, data: PartitionData, res: PartitionRead, uses_ids: bool) -> None:
    """KIP-951, as Kafka's handleFetchRequest: the current leader and epoch.  (Kafka 4.4 names
    no node endpoint when that leader is the broker answering; another leader's endpoint is
    the metadata layer's to add.)"""
    topic = broker.topics.by_id.get(res.key) if uses_ids else broker.topics.get(res.key)
    leader, epoch = (broker.replicas.current_leader(topic.name, res.partition)
                     if topic is not None else (-1, -1))
    data.current_leader = LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
