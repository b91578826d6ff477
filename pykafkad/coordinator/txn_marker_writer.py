"""The partition leader's side of WriteTxnMarkers: a transaction coordinator (this broker's
or another's) ends a producer's transaction in the partitions this broker leads.

Per marker and partition, as Kafka's KafkaApis.handleWriteTxnMarkersRequest: a partition this
broker does not host is UNKNOWN_TOPIC_OR_PARTITION; otherwise the control batch is appended as
leader with acks=all (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR, and the
producer state's checks: a producer epoch older than the partition has seen is
INVALID_PRODUCER_EPOCH, an older coordinator epoch TRANSACTION_COORDINATOR_FENCED), which ends
the producer's transaction there (LSO, producer state, .txnindex).  Once a marker's appends are
replicated, the group coordinator is told about those on ``__consumer_offsets`` partitions (the
transactional offsets become visible or are dropped).  Results are keyed by producer id, as
Kafka's: two markers of one producer share one result.

The WriteTxnMarkers handler and the transaction coordinator's marker channel (for the partitions
this broker leads) both call ``write_txn_markers``.
"""

from __future__ import annotations

import logging

import trio

from pykafkad.coordinator.partitioning import GROUP_METADATA_TOPIC
from wire.errors import ErrorCode, KafkaError
from wire.messages.write_txn_markers_response import (
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse,
)
from wire.records.control import ABORT, COMMIT, build_control_batch

log = logging.getLogger("pykafkad.txn")

#: Kafka's RecordBatch.NO_PRODUCER_ID / NO_PRODUCER_EPOCH: a marker cannot be built for them
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


def _append(broker, topic: str, index: int, marker, now: int):
    """Appends one marker batch; (error code, partition, offset to wait for)."""
    try:
        partition = broker.replicas.get_partition(topic, index)
    except KafkaError as e:  # the log cannot be opened (disk full, offline)
        return e.code, None, -1
    if partition is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None, -1
    pid, epoch = marker.producer_id, marker.producer_epoch
    if pid == NO_PRODUCER_ID or epoch == NO_PRODUCER_EPOCH:
        return ErrorCode.UNKNOWN_SERVER_ERROR, None, -1  # Kafka cannot build the batch
    kind = COMMIT if marker.transaction_result else ABORT
    try:
        batch = build_control_batch(kind, pid, epoch, marker.coordinator_epoch, 0,
                                    partition.leader_epoch, now)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR, None, -1
    try:
        info = partition.append_marker(batch, kind, pid, epoch, marker.coordinator_epoch,
                                       now_ms=now, required_acks=-1)
    except KafkaError as e:
        if e.code == ErrorCode.KAFKA_STORAGE_ERROR:
            log.warning("transaction marker for %s-%d not written: %s", topic, index, e)
        return e.code, None, -1
    return ErrorCode.NONE, partition, info.last_offset + 1


async def write_txn_markers(broker, request, timeout_ms: int | None = None
                            ) -> WriteTxnMarkersResponse:
    """Writes every marker of ``request`` (a WriteTxnMarkersRequest); the response once each
    append is replicated (or failed, or timed out after request.timeout.ms)."""
    if timeout_ms is None:
        timeout_ms = broker.config["request.timeout.ms"]
    now = broker.clock()
    #: producer id -> {(topic, partition): error}, in request order
    results: dict[int, dict[tuple[str, int], int]] = {}
    waits = []
    appended = False
    for i, marker in enumerate(request.markers):
        errors = results.setdefault(marker.producer_id, {})
        for t in marker.topics:
            for index in t.partition_indexes:
                code, partition, offset = _append(broker, t.name, index, marker, now)
                errors[(t.name, index)] = code
                if partition is not None:
                    appended = True
                    waits.append((i, t.name, index, partition, offset))
    if appended:
        broker.notify_append()
    deadline = trio.current_time() + max(timeout_ms, 0) / 1000
    offsets_done: dict[int, list[int]] = {}
    for i, topic, index, partition, offset in waits:
        marker = request.markers[i]
        code = await broker.replicas.wait_for_acks(partition, offset, deadline)
        results[marker.producer_id][(topic, index)] = code
        if code == ErrorCode.NONE and topic == GROUP_METADATA_TOPIC:
            offsets_done.setdefault(i, []).append(index)
    for i, partitions in offsets_done.items():
        marker = request.markers[i]
        try:
            for listener in broker.txn_coordinator.offsets_marker_listeners:
                listener(marker.producer_id, marker.producer_epoch, marker.transaction_result,
                         partitions)
        except Exception:  # Kafka: logged, and those partitions answer UNKNOWN_SERVER_ERROR
            log.exception("updating the offsets cache on a transaction marker failed")
            for index in partitions:
                results[marker.producer_id][(GROUP_METADATA_TOPIC, index)] = (
                    ErrorCode.UNKNOWN_SERVER_ERROR)
    out = []
    for pid, errors in results.items():
        by_topic: dict[str, list[WritableTxnMarkerPartitionResult]] = {}
        for (topic, index), code in errors.items():
            by_topic.setdefault(topic, []).append(
                WritableTxnMarkerPartitionResult(partition_index=index, error_code=code))
        out.append(WritableTxnMarkerResult(producer_id=pid, topics=[
            WritableTxnMarkerTopicResult(name=topic, partitions=parts)
            for topic, parts in by_topic.items()]))
    return WriteTxnMarkersResponse(markers=out)
