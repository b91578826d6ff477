"""Share groups (KIP-932): ShareGroupHeartbeat and ShareGroupDescribe on the group
coordinator, ShareFetch and ShareAcknowledge on the partition leaders.

The logic lives in pykafkad.coordinator.share_group; these handlers map the wire fields.  A
ShareFetch that acquires nothing waits (up to ``max_wait_ms``) for the HW to move, for records
to be released, or for the nearest acquisition lock to expire.
"""

from __future__ import annotations

import logging

import trio

from pykafkad.coordinator.rebalance import append_error
from pykafkad.coordinator.share_group.service import service_of
from pykafkad.coordinator.share_group.share_partition import (
    BATCH_OPTIMIZED,
    aborted_batches,
    batch_bounds,
)
from pykafkad.coordinator.share_group.share_sessions import FINAL_EPOCH, INITIAL_EPOCH
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations
from pykafkad.handlers.groups import client_host
from pykafkad.replica.partition import HIGH_WATERMARK, TXN_COMMITTED
from pykafkad.security.api_acls import authorized, split_by_authorization
from pykafkad.security.authorizer import DESCRIBE, GROUP, READ
from wire.errors import ErrorCode, KafkaError
from wire.messages import share_acknowledge_response as ack_msg
from wire.messages import share_fetch_response as fetch_msg
from wire.messages.share_group_describe_response import (
    Assignment as DescribedAssignment,
)
from wire.messages.share_group_describe_response import (
    DescribedGroup,
    Member,
    ShareGroupDescribeResponse,
)
from wire.messages.share_group_describe_response import (
    TopicPartitions as DescribedTopicPartitions,
)
from wire.messages.share_group_heartbeat_response import (
    Assignment,
    ShareGroupHeartbeatResponse,
    TopicPartitions,
)

SIMPLE_ASSIGNOR = "simple"

log = logging.getLogger("pykafkad.share")


@handles(76, 1, 1)
async def handle_share_group_heartbeat(ctx: RequestContext, req) -> ShareGroupHeartbeatResponse:
    """Version 1 (v0 was Kafka 4.0's early access, removed in 4.1)."""
    if not authorized(ctx, GROUP, READ, req.group_id):
        return ShareGroupHeartbeatResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, member_epoch=0)
    code = ctx.broker.groups.coordinator.unavailable_error(req.group_id)
    if code:
        return ShareGroupHeartbeatResponse(error_code=code, member_epoch=0)
    if req.group_id in ctx.broker.groups.coordinator.groups:  # one group-id namespace
        return ShareGroupHeartbeatResponse(
            error_code=ErrorCode.GROUP_ID_NOT_FOUND, member_epoch=0,
            error_message=f"Group {req.group_id} is not a share group.")
    svc = service_of(ctx.broker)
    if req.member_epoch == 0:
        svc.store.ensure_topic()
    try:
        r = svc.coordinator.heartbeat(
            req.group_id, req.member_id, req.member_epoch, req.rack_id,
            req.subscribed_topic_names, ctx.header.client_id or "", client_host(ctx.peer))
    except KafkaError as e:  # the group's records could not be written
        return ShareGroupHeartbeatResponse(error_code=append_error(e.code), member_epoch=0)
    if r.error:
        return ShareGroupHeartbeatResponse(error_code=r.error, error_message=r.message,
                                           member_epoch=0)
    if r.initialize:  # async with respect to the heartbeat, as Kafka's persister call
        trio.lowlevel.spawn_system_task(svc.initialize_share_state, req.group_id,
                                        r.state_epoch, r.initialize)
    assignment = None if r.assignment is None else Assignment(topic_partitions=[
        TopicPartitions(topic_id=tid, partitions=parts) for tid, parts in r.assignment.items()])
    return ShareGroupHeartbeatResponse(
        member_id=r.member_id, member_epoch=r.member_epoch,
        heartbeat_interval_ms=r.heartbeat_interval_ms, assignment=assignment)


@handles(77, 1, 1)
async def handle_share_group_describe(ctx: RequestContext, req) -> ShareGroupDescribeResponse:
    """Version 1: members with their epochs, subscriptions and assignments (topic names
    resolved); an unknown group is GROUP_ID_NOT_FOUND."""
    svc = service_of(ctx.broker)
    denied, allowed = split_by_authorization(ctx, GROUP, DESCRIBE, req.group_ids)
    out = [DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=g, group_state="") for g in denied]
    for group_id in allowed:
        code = ctx.broker.groups.coordinator.unavailable_error(group_id)
        try:
            if code:
                raise KafkaError(code)
            if group_id in ctx.broker.groups.coordinator.groups:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                                 f"Group {group_id} is not a share group.")
            g = svc.coordinator.describe(group_id)
        except KafkaError as e:
            out.append(DescribedGroup(error_code=e.code, error_message=e.message,
                                      group_id=group_id, group_state=""))
            continue
        out.append(DescribedGroup(
            group_id=group_id, group_state=g.state, group_epoch=g.group_epoch,
            assignment_epoch=g.assignment_epoch, assignor_name=SIMPLE_ASSIGNOR,
            members=[Member(
                member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                assignment=DescribedAssignment(topic_partitions=[
                    DescribedTopicPartitions(topic_id=tid, topic_name=_topic_name(ctx, tid),
                                             partitions=parts)
                    for tid, parts in m.assignment.items()]))
                for m in g.members.values()],
            authorized_operations=authorized_operations.GROUP
            if req.include_authorized_operations else authorized_operations.OMITTED))
    return ShareGroupDescribeResponse(groups=out)


def _topic_name(ctx, topic_id: bytes) -> str:
    topic = ctx.broker.topics.by_id.get(topic_id)
    return "" if topic is None else topic.name


def _ack_batches(topics) -> dict[tuple[bytes, int], list[tuple[int, int, list[int]]]]:
    out: dict = {}
    for t in topics:
        for p in t.partitions:
            if p.acknowledgement_batches:
                out.setdefault((t.topic_id, p.partition_index), []).extend(
                    (b.first_offset, b.last_offset, list(b.acknowledge_types))
                    for b in p.acknowledgement_batches)
    return out


def _acknowledge(ctx, svc, group_id: str, member_id: str, acks) -> dict:
    """Applies the acknowledgements: (topic id, partition) -> (error, message)."""
    results = {}
    now = ctx.broker.clock()
    lock_ms, limit = svc.lock_ms(group_id), svc.delivery_limit(group_id)
    freed = False
    for (tid, index), batches in acks.items():
        sp = svc.partitions.get((group_id, tid, index))
        try:
            topic = ctx.broker.topics.by_id.get(tid)
            if topic is None:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_ID)
            ctx.broker.replicas.get_partition_or_error(topic.name, index) \
                .local_log_with_epoch(-1, require_leader=True)
            if sp is None:
                raise KafkaError(ErrorCode.INVALID_RECORD_STATE)
            sp.acknowledge(member_id, batches, now, lock_ms, limit)
            freed = True
            results[(tid, index)] = (ErrorCode.NONE, None)
        except KafkaError as e:
            results[(tid, index)] = (e.code, e.message)
    if freed:
        svc.notify_freed()
    return results


def _open_session(svc, req, requested, forgotten, has_acks: bool):
    """The share session of a ShareFetch/ShareAcknowledge: opened at epoch 0, continued
    (epoch checked, bumped, partitions added and forgotten) after that, closed at -1."""
    epoch = req.share_session_epoch
    if epoch == INITIAL_EPOCH:
        if has_acks:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             "Acknowledge data present in initial share fetch request")
        session, old = svc.sessions.open(req.group_id, req.member_id, requested)
        if old is not None:
            svc.release_member(req.group_id, req.member_id, old.partitions)
        return session
    session = svc.sessions.get(req.group_id, req.member_id, epoch)
    if epoch != FINAL_EPOCH:
        session.epoch += 1
        for tp in requested:
            session.partitions[tp] = None
        for tp in forgotten:
            session.partitions.pop(tp, None)
    return session


async def _flush(svc) -> None:
    """Writes changed share-partition state to the share coordinator before answering; a
    failed write is logged and retried on the next request (the records stay where they were
    in memory)."""
    try:
        await svc.flush()
    except KafkaError as e:
        log.warning("cannot persist share-partition state: %s", e)


def _close_session(svc, session) -> None:
    svc.sessions.close(session)
    svc.release_member(session.group_id, session.member_id, list(session.partitions))


@handles(78, 1, 2)
async def handle_share_fetch(ctx: RequestContext, req) -> fetch_msg.ShareFetchResponse:
    """Versions 1-2 (v2: ShareAcquireMode and RENEW acknowledgements, KIP-1206/1222).
    Acknowledgements ride on the fetch and are applied first; then records are acquired for
    the member under acquisition locks of ``share.record.lock.duration.ms``."""
    if not authorized(ctx, GROUP, READ, req.group_id):
        return fetch_msg.ShareFetchResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    broker = ctx.broker
    svc = service_of(broker)
    v = ctx.version
    group_id, member_id = req.group_id, req.member_id
    requested = [(t.topic_id, p.partition_index) for t in req.topics for p in t.partitions]
    forgotten = [(t.topic_id, p) for t in req.forgotten_topics_data for p in t.partitions]
    acks = _ack_batches(req.topics)
    lock_ms = svc.lock_ms(group_id) if group_id else 0
    try:
        if not group_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "The group id in the request is invalid.")
        if not member_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "The member id in the request is invalid.")
        session = _open_session(svc, req, requested, forgotten, bool(acks))
    except KafkaError as e:
        return fetch_msg.ShareFetchResponse(error_code=e.code, error_message=e.message,
                                            acquisition_lock_timeout_ms=lock_ms)
    if acks:  # a lock past its deadline no longer covers its records (INVALID_RECORD_STATE)
        svc.expire_locks(group_id)
    ack_results = _acknowledge(ctx, svc, group_id, member_id, acks)
    fetched: dict = {}
    if req.share_session_epoch == FINAL_EPOCH:
        _close_session(svc, session)
    else:
        mode = req.share_acquire_mode if v >= 2 else BATCH_OPTIMIZED
        max_records = req.max_records if req.max_records > 0 else 500
        max_bytes = min(req.max_bytes, broker.config["fetch.max.bytes"])
        deadline = trio.current_time() + max(req.max_wait_ms, 0) / 1000
        unready = await svc.prepare(group_id, list(session.partitions))
        while True:
            next_lock = svc.expire_locks(group_id)
            fetched = _acquire(ctx, svc, group_id, member_id,
                               [tp for tp in session.partitions if tp not in unready],
                               max_records, max_bytes, mode, lock_ms)
            if (any(f[0] or f[3] for f in fetched.values()) or broker.shutting_down
                    or trio.current_time() >= deadline or not session.partitions):
                break
            wait_until = deadline
            if next_lock is not None:
                wait_until = min(wait_until, trio.current_time()
                                 + max(0, next_lock - broker.clock()) / 1000)
            await _wait_for_records(broker, svc, wait_until)
    await _flush(svc)
    if req.share_session_epoch == FINAL_EPOCH:
        svc.drop_cached(group_id)
    by_topic: dict[bytes, list] = {}
    keys = list(dict.fromkeys(list(fetched) + list(ack_results)))
    for tid, index in keys:
        error, message, records, acquired = fetched.get((tid, index), (0, None, b"", []))
        ack_error, ack_message = ack_results.get((tid, index), (0, None))
        if req.share_session_epoch != INITIAL_EPOCH and not (error or records or acquired
                                                              or (tid, index) in ack_results):
            continue
        topic = broker.topics.by_id.get(tid)
        leader, epoch = (broker.replicas.current_leader(topic.name, index)
                         if topic is not None else (-1, -1))
        by_topic.setdefault(tid, []).append(fetch_msg.PartitionData(
            partition_index=index, error_code=error, error_message=message,
            acknowledge_error_code=ack_error, acknowledge_error_message=ack_message,
            current_leader=fetch_msg.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch),
            records=records,
            acquired_records=[fetch_msg.AcquiredRecords(first_offset=a, last_offset=z,
                                                        delivery_count=d)
                              for a, z, d in acquired]))
    return fetch_msg.ShareFetchResponse(
        acquisition_lock_timeout_ms=lock_ms,
        responses=[fetch_msg.ShareFetchableTopicResponse(topic_id=tid, partitions=parts)
                   for tid, parts in by_topic.items()])


async def _wait_for_records(broker, svc, deadline: float) -> None:
    """Until the HW moves, records are freed, or ``deadline`` (trio time)."""
    freed = svc.records_freed
    async with trio.open_nursery() as nursery:
        async def hw():
            await broker.replicas.wait_for_high_watermark(deadline)
            nursery.cancel_scope.cancel()

        async def released():
            with trio.move_on_at(deadline):
                await freed.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(hw)
        nursery.start_soon(released)


def _acquire(ctx, svc, group_id: str, member_id: str, partitions, max_records: int,
             max_bytes: int, mode: int, lock_ms: int) -> dict:
    """(topic id, partition) -> (error, message, record bytes, acquired ranges)."""
    broker = ctx.broker
    out = {}
    count = total = 0
    now = broker.clock()
    read_committed = svc.config(group_id, "share.isolation.level").strip().lower() \
        == "read_committed"
    max_in_flight = svc.max_record_locks(group_id)
    for tid, index in partitions:
        topic = broker.topics.by_id.get(tid)
        if topic is None:
            out[(tid, index)] = (ErrorCode.UNKNOWN_TOPIC_ID, None, b"", [])
            continue
        if count >= max_records or total >= max_bytes:
            out[(tid, index)] = (0, None, b"", [])
            continue
        try:
            partition = broker.replicas.get_partition_or_error(topic.name, index)
            plog = partition.local_log_with_epoch(-1, require_leader=True)
            sp = svc.share_partition(group_id, tid, index, plog)
            limit = plog.last_stable_offset if read_committed else plog.high_watermark
            start = sp.first_fetch_offset()
            if start >= limit or sp.capped(1, limit, max_in_flight)[0] <= 0:
                out[(tid, index)] = (0, None, b"", [])
                continue
            read = partition.read_records(start, max_bytes - total,
                                          TXN_COMMITTED if read_committed else HIGH_WATERMARK,
                                          min_one_batch=total == 0)
            data = read.to_bytes()
            bounds = batch_bounds(data)
            aborted = frozenset()
            if read_committed and bounds:
                aborted = frozenset(aborted_batches(
                    bounds, plog.aborted_transactions(start, bounds[-1].last_offset + 1)))
            ranges, send_end = sp.acquire(member_id, bounds, max_records - count,
                                          mode, now, lock_ms, limit, aborted, max_in_flight)
        except KafkaError as e:
            out[(tid, index)] = (e.code, e.message, b"", [])
            continue
        count += sum(z - a + 1 for a, z, _ in ranges)
        total += send_end
        out[(tid, index)] = (0, None, data[:send_end], ranges)
    return out


@handles(79, 1, 2)
async def handle_share_acknowledge(ctx: RequestContext, req) -> ack_msg.ShareAcknowledgeResponse:
    """Versions 1-2 (v2: RENEW and the acquisition lock timeout in the answer).  Needs an open
    share session (epoch > 0); epoch -1 also closes it, releasing the member's records."""
    if not authorized(ctx, GROUP, READ, req.group_id):
        return ack_msg.ShareAcknowledgeResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    svc = service_of(ctx.broker)
    acks = _ack_batches(req.topics)
    lock_ms = svc.lock_ms(req.group_id) if req.group_id else 0
    try:
        if not req.group_id or not req.member_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST)
        if req.share_session_epoch == INITIAL_EPOCH:
            raise KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                             "Share session epoch 0 is not valid for ShareAcknowledge")
        session = _open_session(svc, req, [], [], False)
    except KafkaError as e:
        return ack_msg.ShareAcknowledgeResponse(error_code=e.code, error_message=e.message,
                                                acquisition_lock_timeout_ms=lock_ms)
    if acks:
        svc.expire_locks(req.group_id)
    results = _acknowledge(ctx, svc, req.group_id, req.member_id, acks)
    if req.share_session_epoch == FINAL_EPOCH:
        _close_session(svc, session)
    await _flush(svc)
    if req.share_session_epoch == FINAL_EPOCH:
        svc.drop_cached(req.group_id)
    by_topic: dict[bytes, list] = {}
    for (tid, index), (error, message) in results.items():
        topic = ctx.broker.topics.by_id.get(tid)
        leader, epoch = (ctx.broker.replicas.current_leader(topic.name, index)
                         if topic is not None else (-1, -1))
        by_topic.setdefault(tid, []).append(ack_msg.PartitionData(
            partition_index=index, error_code=error, error_message=message,
            current_leader=ack_msg.LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)))
    return ack_msg.ShareAcknowledgeResponse(
        acquisition_lock_timeout_ms=lock_ms,
        responses=[ack_msg.ShareAcknowledgeTopicResponse(topic_id=tid, partitions=parts)
                   for tid, parts in by_topic.items()])
