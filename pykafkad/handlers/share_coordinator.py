"""The share coordinator's APIs (KIP-932's persister RPCs), served on the leader of the
share partition's __share_group_state partition: InitializeShareGroupState,
ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState and
ReadShareGroupStateSummary.  pykafkad's own share partitions write their state directly; these
answer other brokers and tools with the same state (live share partitions first, then what is
stored)."""

from __future__ import annotations

from pykafkad.coordinator.partitioning import partition_for
from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.coordinator.share_group.service import service_of
from pykafkad.coordinator.share_group.share_partition import SharePartition
from pykafkad.coordinator.share_group.state_store import (
    SHARE_GROUP_STATE_TOPIC,
    _apply_update,
    coordinator_key,
)
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages import delete_share_group_state_response as delete_msg
from wire.messages import initialize_share_group_state_response as init_msg
from wire.messages import read_share_group_state_response as read_msg
from wire.messages import read_share_group_state_summary_response as summary_msg
from wire.messages import write_share_group_state_response as write_msg

_UNINITIALIZED = "Read operation on uninitialized share partition not allowed."


def _coordinator_error(broker, group_id: str, topic_id: bytes, partition: int) -> int:
    """NOT_COORDINATOR unless this node leads the key's __share_group_state partition."""
    svc = service_of(broker)
    if broker.topics.get(SHARE_GROUP_STATE_TOPIC) is None:
        svc.store.ensure_topic()
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    index = partition_for(coordinator_key(group_id, topic_id, partition),
                          svc.store.num_partitions())
    try:
        broker.replicas.get_partition_or_error(SHARE_GROUP_STATE_TOPIC, index) \
            .local_log_with_epoch(-1, require_leader=True)
    except KafkaError:
        return ErrorCode.NOT_COORDINATOR
    return ErrorCode.NONE


def _state(svc, key) -> sr.ShareStateValue | None:
    sp = svc.partitions.get(key)
    if sp is not None:
        return sr.ShareStateValue(
            snapshot_epoch=0, leader_epoch=0, start_offset=sp.start_offset,
            state_batches=sp.state_batches(), state_epoch=sp.state_epoch,
            delivery_complete_count=sp.delivery_complete_count())
    return svc.persisted.get(key)


def _store(svc, key, value: sr.ShareStateValue) -> None:
    """The state becomes what is stored; a live share partition is rebuilt from it."""
    sp = SharePartition.from_state(*key, value.start_offset, value.state_epoch,
                                   value.state_batches)
    sp.dirty = True
    svc.partitions[key] = sp
    svc.persisted.pop(key, None)
    svc.flush()


@handles(83, 0, 0)
async def handle_initialize_share_group_state(ctx: RequestContext, req):
    """Version 0: a share partition's state epoch and start offset (no batches)."""
    svc = service_of(ctx.broker)
    results = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            key = (req.group_id, t.topic_id, p.partition)
            error = _coordinator_error(ctx.broker, *key)
            if not error:
                _store(svc, key, sr.ShareStateValue(
                    snapshot_epoch=0, leader_epoch=0, start_offset=p.start_offset,
                    state_epoch=p.state_epoch))
            parts.append(init_msg.PartitionResult(partition=p.partition, error_code=error))
        results.append(init_msg.InitializeStateResult(topic_id=t.topic_id, partitions=parts))
    return init_msg.InitializeShareGroupStateResponse(results=results)


@handles(84, 0, 0)
async def handle_read_share_group_state(ctx: RequestContext, req):
    """Version 0: the state epoch, start offset and state batches; an uninitialized share
    partition is INVALID_REQUEST with Kafka's message."""
    svc = service_of(ctx.broker)
    results = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            key = (req.group_id, t.topic_id, p.partition)
            error = _coordinator_error(ctx.broker, *key)
            state = None if error else _state(svc, key)
            if error or state is None:
                parts.append(read_msg.PartitionResult(
                    partition=p.partition, error_code=error or ErrorCode.INVALID_REQUEST,
                    error_message=None if error else _UNINITIALIZED))
                continue
            parts.append(read_msg.PartitionResult(
                partition=p.partition, state_epoch=state.state_epoch,
                start_offset=state.start_offset,
                state_batches=[read_msg.StateBatch(first_offset=a, last_offset=z,
                                                   delivery_state=s, delivery_count=c)
                               for a, z, s, c in state.state_batches]))
        results.append(read_msg.ReadStateResult(topic_id=t.topic_id, partitions=parts))
    return read_msg.ReadShareGroupStateResponse(results=results)


@handles(85, 0, 1)
async def handle_write_share_group_state(ctx: RequestContext, req):
    """Versions 0-1 (v1: the delivery complete count): the batches written replace the
    offsets they cover; a start offset of -1 keeps the current one."""
    svc = service_of(ctx.broker)
    results = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            key = (req.group_id, t.topic_id, p.partition)
            error = _coordinator_error(ctx.broker, *key)
            if not error:
                update = sr.ShareStateValue(
                    snapshot_epoch=0, leader_epoch=p.leader_epoch, start_offset=p.start_offset,
                    state_batches=[(b.first_offset, b.last_offset, b.delivery_state,
                                    b.delivery_count) for b in p.state_batches])
                base = _state(svc, key) or sr.ShareStateValue(
                    snapshot_epoch=0, leader_epoch=0, start_offset=max(p.start_offset, 0))
                merged = _apply_update(base, update)
                merged.state_epoch = p.state_epoch
                _store(svc, key, merged)
            parts.append(write_msg.PartitionResult(partition=p.partition, error_code=error))
        results.append(write_msg.WriteStateResult(topic_id=t.topic_id, partitions=parts))
    return write_msg.WriteShareGroupStateResponse(results=results)


@handles(86, 0, 0)
async def handle_delete_share_group_state(ctx: RequestContext, req):
    """Version 0: forgets the share partitions' state (tombstones)."""
    svc = service_of(ctx.broker)
    results = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            key = (req.group_id, t.topic_id, p.partition)
            error = _coordinator_error(ctx.broker, *key)
            if not error:
                svc._forget(key)  # noqa: SLF001 - the service's own state change
            parts.append(delete_msg.PartitionResult(partition=p.partition, error_code=error))
        results.append(delete_msg.DeleteStateResult(topic_id=t.topic_id, partitions=parts))
    return delete_msg.DeleteShareGroupStateResponse(results=results)


@handles(87, 0, 1)
async def handle_read_share_group_state_summary(ctx: RequestContext, req):
    """Versions 0-1 (v1: the delivery complete count): an uninitialized share partition is
    start offset -1 without an error, as Kafka answers."""
    svc = service_of(ctx.broker)
    results = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            key = (req.group_id, t.topic_id, p.partition)
            error = _coordinator_error(ctx.broker, *key)
            state = None if error else _state(svc, key)
            if state is None:
                parts.append(summary_msg.PartitionResult(
                    partition=p.partition, error_code=error, start_offset=-1,
                    delivery_complete_count=-1))
                continue
            sp = svc.partitions.get(key)
            start, done = (sp.persisted or (state.start_offset, state.delivery_complete_count)) \
                if sp is not None else (state.start_offset, state.delivery_complete_count)
            parts.append(summary_msg.PartitionResult(
                partition=p.partition, state_epoch=state.state_epoch,
                leader_epoch=state.leader_epoch, start_offset=start,
                delivery_complete_count=done))
        results.append(summary_msg.ReadStateSummaryResult(topic_id=t.topic_id, partitions=parts))
    return summary_msg.ReadShareGroupStateSummaryResponse(results=results)
