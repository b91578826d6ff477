"""The share coordinator's APIs (KIP-932's persister RPCs), served on the leader of the
share partition's __share_group_state partition: InitializeShareGroupState,
ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState and
ReadShareGroupStateSummary.  Share-partition leaders on other brokers call them
(pykafkad/coordinator/share_group/persister.py); the state is the share coordinator's
(pykafkad/coordinator/share_group/share_coordinator.py)."""

from __future__ import annotations

from pykafkad.coordinator.share_group.service import service_of
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages import delete_share_group_state_response as delete_msg
from wire.messages import initialize_share_group_state_response as init_msg
from wire.messages import read_share_group_state_response as read_msg
from wire.messages import read_share_group_state_summary_response as summary_msg
from wire.messages import write_share_group_state_response as write_msg


async def _each(ctx, req, run, *, writes: bool = False):
    """Runs ``run(key, partition data)`` for every partition of the request on this node's
    share coordinator: {(topic id, partition): (error code, message, run's answer)}.
    ``writes``: run's answers are the records' receipts, answered once replicated."""
    coordinator = service_of(ctx.broker).share_coordinator
    out = {}
    for t in req.topics:
        for p in t.partitions:
            key = (req.group_id, t.topic_id, p.partition)
            error = coordinator.check(key)
            if error:
                out[(t.topic_id, p.partition)] = (error, None, None)
                continue
            try:
                answer = run(coordinator, key, p)
            except KafkaError as e:
                out[(t.topic_id, p.partition)] = (e.code, e.message, None)
                continue
            if writes:
                code = await coordinator.store.replicated(answer)
                out[(t.topic_id, p.partition)] = (code, None, None)
            else:
                out[(t.topic_id, p.partition)] = (ErrorCode.NONE, None, answer)
    return out


def _by_topic(results, make_partition, make_topic):
    topics: dict[bytes, list] = {}
    for (tid, partition), answer in results.items():
        topics.setdefault(tid, []).append(make_partition(partition, *answer))
    return [make_topic(tid, parts) for tid, parts in topics.items()]


@handles(83, 0, 0)
async def handle_initialize_share_group_state(ctx: RequestContext, req):
    """Version 0: a share partition's state epoch and start offset (no batches)."""
    results = await _each(ctx, req, lambda c, key, p: c.initialize(key, p.state_epoch,
                                                                   p.start_offset), writes=True)
    return init_msg.InitializeShareGroupStateResponse(results=_by_topic(
        results,
        lambda part, error, message, _: init_msg.PartitionResult(
            partition=part, error_code=error, error_message=message),
        lambda tid, parts: init_msg.InitializeStateResult(topic_id=tid, partitions=parts)))


@handles(84, 0, 0)
async def handle_read_share_group_state(ctx: RequestContext, req):
    """Version 0: the state epoch, start offset and state batches; an uninitialized share
    partition is INVALID_REQUEST with Kafka's message."""
    results = await _each(ctx, req, lambda c, key, p: c.read(key, p.leader_epoch))

    def partition(part, error, message, state):
        if state is None:
            return read_msg.PartitionResult(partition=part, error_code=error,
                                            error_message=message)
        return read_msg.PartitionResult(
            partition=part, state_epoch=state.state_epoch, start_offset=state.start_offset,
            state_batches=[read_msg.StateBatch(first_offset=a, last_offset=z,
                                               delivery_state=s, delivery_count=n)
                           for a, z, s, n in state.state_batches])
    return read_msg.ReadShareGroupStateResponse(results=_by_topic(
        results, partition,
        lambda tid, parts: read_msg.ReadStateResult(topic_id=tid, partitions=parts)))


@handles(85, 0, 1)
async def handle_write_share_group_state(ctx: RequestContext, req):
    """Versions 0-1 (v1: the delivery complete count): a ShareUpdate of the batches
    written, or a snapshot (the first write of a key, or after enough updates)."""
    results = await _each(ctx, req, lambda c, key, p: c.write(
        key, p.state_epoch, p.leader_epoch, p.start_offset,
        [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
         for b in p.state_batches], p.delivery_complete_count), writes=True)
    return write_msg.WriteShareGroupStateResponse(results=_by_topic(
        results,
        lambda part, error, message, _: write_msg.PartitionResult(
            partition=part, error_code=error, error_message=message),
        lambda tid, parts: write_msg.WriteStateResult(topic_id=tid, partitions=parts)))


@handles(86, 0, 0)
async def handle_delete_share_group_state(ctx: RequestContext, req):
    """Version 0: forgets the share partitions' state (tombstones)."""
    svc = service_of(ctx.broker)

    def delete(c, key, p):
        svc.persisted.pop(key, None)
        return c.delete(key)
    results = await _each(ctx, req, delete, writes=True)
    return delete_msg.DeleteShareGroupStateResponse(results=_by_topic(
        results,
        lambda part, error, message, _: delete_msg.PartitionResult(
            partition=part, error_code=error, error_message=message),
        lambda tid, parts: delete_msg.DeleteStateResult(topic_id=tid, partitions=parts)))


@handles(87, 0, 1)
async def handle_read_share_group_state_summary(ctx: RequestContext, req):
    """Versions 0-1 (v1: the delivery complete count): an uninitialized share partition is
    start offset -1 without an error, as Kafka answers."""
    results = await _each(ctx, req, lambda c, key, p: c.summary(key))

    def partition(part, error, message, state):
        if state is None:
            return summary_msg.PartitionResult(partition=part, error_code=error,
                                               error_message=message, start_offset=-1,
                                               delivery_complete_count=-1)
        return summary_msg.PartitionResult(
            partition=part, state_epoch=state.state_epoch, leader_epoch=state.leader_epoch,
            start_offset=state.start_offset,
            delivery_complete_count=state.delivery_complete_count)
    return summary_msg.ReadShareGroupStateSummaryResponse(results=_by_topic(
        results, partition,
        lambda tid, parts: summary_msg.ReadStateSummaryResult(topic_id=tid, partitions=parts)))
