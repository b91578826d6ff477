"""WriteTxnMarkers (broker to broker): the logic is the partition leader's side in
pykafkad.coordinator.txn_marker_writer, which the transaction coordinator's marker channel
also calls for the partitions this broker leads."""

from __future__ import annotations

from pykafkad.coordinator.txn_marker_writer import write_txn_markers
from pykafkad.dispatch import RequestContext, handles
from wire.messages.write_txn_markers_response import WriteTxnMarkersResponse


@handles(27, 1, 2)
async def handle_write_txn_markers(ctx: RequestContext, req) -> WriteTxnMarkersResponse:
    """Versions 1-2 (v0 was removed in Kafka 4.0; v2 adds ``transaction_version``, KIP-1228,
    which Kafka 4.4 checks no differently for these markers: the same epoch is accepted).
    Broker listeners only.  Errors per partition, results merged per producer id."""
    return await write_txn_markers(ctx.broker, req)
