"""InitProducerId for idempotent producers (transactional ids come with the coordinator)."""

from __future__ import annotations

from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode
from wire.messages.init_producer_id_response import InitProducerIdResponse


@handles(22, 0, 5)
async def handle_init_producer_id(ctx: RequestContext, req) -> InitProducerIdResponse:
    """Versions 0-5.  A null transactional id gets a fresh producer id at epoch 0 from blocks
    that never repeat across restarts; a known id/epoch (v3+) is bumped to a new producer id,
    as Kafka does for idempotent producers.  Transactional ids are answered
    COORDINATOR_NOT_AVAILABLE until the transaction coordinator exists."""
    if req.transactional_id is not None:
        return InitProducerIdResponse(
            throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
            producer_id=-1, producer_epoch=-1)
    pid = ctx.broker.producer_ids.next_id()
    return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=pid, producer_epoch=0)
