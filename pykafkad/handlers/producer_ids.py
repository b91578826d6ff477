"""InitProducerId for idempotent and transactional producers."""

from __future__ import annotations

from pykafkad.coordinator.rebalance import append_error
from pykafkad.dispatch import RequestContext, handles
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import CLUSTER, IDEMPOTENT_WRITE, TOPIC, TRANSACTIONAL_ID, WRITE
from wire.errors import ErrorCode, KafkaError
from wire.messages.init_producer_id_response import InitProducerIdResponse

#: PRODUCER_FENCED exists from InitProducerId v4 on; older clients get INVALID_PRODUCER_EPOCH
PRODUCER_FENCED_VERSION = 4


def _denied(ctx: RequestContext, transactional_id: str | None) -> int:
    """Kafka's checks: WRITE on the transactional id; for an idempotent producer
    IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679).  0 when allowed."""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return 0
    if transactional_id is not None:
        return (0 if authorized(ctx, TRANSACTIONAL_ID, WRITE, transactional_id)
                else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if authorized(ctx, CLUSTER, IDEMPOTENT_WRITE) or authorizer.authorize_any(
            ctx.principal_name, ctx.client_host, WRITE, TOPIC):
        return 0
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


@handles(22, 0, 5)
async def handle_init_producer_id(ctx: RequestContext, req) -> InitProducerIdResponse:
    """Versions 0-5.  A null transactional id always gets a fresh producer id at epoch 0 from
    blocks that never repeat across restarts (as Kafka, also when v3+ carries the old id and
    epoch).  A transactional id goes to the transaction coordinator: epoch 0 for a new id, a
    bumped epoch (fencing the previous instance) on re-init, CONCURRENT_TRANSACTIONS while it
    aborts an open transaction, PRODUCER_FENCED (v0-3: INVALID_PRODUCER_EPOCH) for a stale
    id/epoch."""
    denied = _denied(ctx, req.transactional_id)
    if denied:
        return InitProducerIdResponse(
            throttle_time_ms=0, error_code=denied, producer_id=-1, producer_epoch=-1)
    if req.transactional_id is None:
        try:
            pid = ctx.broker.producer_ids.next_id()
        except KafkaError as e:  # a KRaft broker waiting for its block (retriable)
            return InitProducerIdResponse(
                throttle_time_ms=0, error_code=e.code, producer_id=-1, producer_epoch=-1)
        return InitProducerIdResponse(
            throttle_time_ms=0, error_code=0, producer_id=pid, producer_epoch=0)
    expected_pid = req.producer_id if ctx.version >= 3 else -1
    expected_epoch = req.producer_epoch if ctx.version >= 3 else -1
    coordinator = ctx.broker.txn_coordinator
    try:
        err, pid, epoch = coordinator.init_producer_id(
            req.transactional_id, req.transaction_timeout_ms, expected_pid, expected_epoch)
    except KafkaError as e:  # the transaction log write failed (disk full): Kafka's mapping
        err, pid, epoch = append_error(e.code), -1, -1
    if not err:  # answered once the new epoch is replicated (acks=all)
        err = await coordinator.replicated(req.transactional_id)
        if err:
            pid, epoch = -1, -1
    if err == ErrorCode.PRODUCER_FENCED and ctx.version < PRODUCER_FENCED_VERSION:
        err = ErrorCode.INVALID_PRODUCER_EPOCH
    return InitProducerIdResponse(
        throttle_time_ms=0, error_code=err, producer_id=pid, producer_epoch=epoch)
