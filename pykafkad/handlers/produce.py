"""Produce: each partition's batch goes to its leader Partition (``append_records_to_leader``:
the leader and min.insync.replicas checks, Kafka's batch and record validation, the producer's
sequence and epoch, transaction verification); acks=all then waits until the ISR has it."""

from __future__ import annotations

import logging

import trio

from pykafkad.dispatch import RequestContext, handles
from pykafkad.log.errors import KafkaStorageError, LogError, RecordValidationError
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import TOPIC, TRANSACTIONAL_ID, WRITE
from wire.errors import ErrorCode, KafkaError
from wire.messages.produce_response import (
    BatchIndexAndErrorMessage,
    LeaderIdAndEpoch,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from wire.records.errors import InvalidRecordError
from wire.records.header import HEADER_SIZE, BatchHeader

log = logging.getLogger("pykafkad.produce")

API_KEY = 0
#: zstd is accepted from Produce v7 on (KIP-110)
ZSTD_MIN_VERSION = 7
#: v13 names topics by id only (KIP-516)
TOPIC_IDS_VERSION = 13
#: v10+ tells where the partition's leader is on NOT_LEADER_OR_FOLLOWER (KIP-951)
CURRENT_LEADER_VERSION = 10
#: v12+: a transaction version 2 producer's first batch in a partition adds the partition to
#: its transaction (KIP-890 part 2; no AddPartitionsToTxn from the client)
ADD_PARTITION_VERSION = 12


def _error(index: int, code: int, message: str | None = None) -> PartitionProduceResponse:
    return PartitionProduceResponse(
        index=index, error_code=code, base_offset=-1, log_append_time_ms=-1,
        log_start_offset=-1, record_errors=[], error_message=message)


def _denied(ctx: RequestContext, txn_id: str | None, topic: str | None) -> int:
    """Kafka's Produce authorization: WRITE on the transactional id (every partition of a
    denied transactional request gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then WRITE on
    each topic; 0 when allowed."""
    if ctx.broker.authorizer is None:
        return 0
    if txn_id is not None and not authorized(ctx, TRANSACTIONAL_ID, WRITE, txn_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not authorized(ctx, TOPIC, WRITE, topic or ""):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return 0


def _transaction_verifier(broker, topic: str, partition: int):
    """transaction.partition.verification.enable (KIP-890 part 1): the first transactional
    batch of a transaction in a partition needs the partition added to the transaction."""
    if not broker.config["transaction.partition.verification.enable"]:
        return None
    return lambda header: broker.txn_coordinator.verify_partition(
        header.producer_id, header.producer_epoch, topic, partition)


async def _verify_with_remote_coordinator(broker, transactional_id: str, partition, records,
                                          add: bool = False) -> tuple[int, str | None]:
    """KIP-890 part 1 when the transactional id's coordinator is another broker: the first
    transactional batch of a producer in this partition is checked with it (AddPartitionsToTxn
    verify_only) before the append; (NONE, None) when nothing needs checking.  ``add``
    (Produce v12+, part 2): the partition is added to the transaction instead, by this
    broker's coordinator or another's."""
    if len(records) < HEADER_SIZE:
        return ErrorCode.NONE, None  # the append's own checks answer
    header = BatchHeader(records)
    if (header.producer_id < 0 or not header.is_transactional or not partition.is_leader
            or partition.log.producer_state.has_ongoing_txn(
                header.producer_id, header.producer_epoch)):
        return ErrorCode.NONE, None
    return await broker.txn_verification.verify(
        transactional_id, header.producer_id, header.producer_epoch, partition.topic,
        partition.index, add=add)


@handles(API_KEY, 3, 13, advertised_min_version=0)
async def handle_produce(ctx: RequestContext, req) -> ProduceResponse | None:
    """Versions 3-13; 0-2 are advertised, as Kafka 4 does (KAFKA-18659: librdkafka needs the
    0), and refused like Kafka refuses them: the connection is closed.  v13 names topics by id
    (UNKNOWN_TOPIC_ID when unknown).  acks=0 gets no response.  Every requested partition is
    answered, in request order.  Idempotent batches: a retry of one of the producer's last five
    batches is answered NONE with its original offsets; OUT_OF_ORDER_SEQUENCE_NUMBER,
    INVALID_PRODUCER_EPOCH and INVALID_TXN_STATE as Kafka.  A transactional batch that starts
    a transaction in a partition is verified with the transactional id's coordinator (KIP-890
    part 1): directly when it is this broker, with AddPartitionsToTxn verify_only when it is
    another (NOT_ENOUGH_REPLICAS while it cannot answer).  From v12 (part 2, transaction
    version 2) that first batch adds the partition to the transaction instead (AddPartitionsToTxn
    v5 to another broker).  Records are validated as Kafka's
    LogValidator does.  A partition whose files cannot be written (disk full) answers
    KAFKA_STORAGE_ERROR, which clients retry; the others in the request are appended as usual.
    acks=all answers once every ISR member has the batch, or REQUEST_TIMED_OUT after the
    request's timeout (the batch stays appended, as in Kafka)."""
    broker = ctx.broker
    replicas = broker.replicas
    v = ctx.version
    uses_ids = v >= TOPIC_IDS_VERSION
    acks = req.acks
    responses = []
    waits: list[tuple[PartitionProduceResponse, object, int]] = []
    fault = broker.produce_fault
    txn_id = req.transactional_id
    adds = txn_id is not None and v >= ADD_PARTITION_VERSION
    remote = txn_id is not None and broker.txn_verification.is_remote(txn_id)
    # v12+: the partition is added first (here or by the remote coordinator); below, a
    # remote coordinator is asked to verify instead of the local check in the append
    ask_coordinator = adds or (
        remote and broker.config["transaction.partition.verification.enable"])
    for td in req.topic_data:
        if uses_ids:
            topic = broker.topics.by_id.get(td.topic_id)
            unknown = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = broker.topics.get(td.name)
            unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        name = topic.name if topic is not None else td.name
        denied = _denied(ctx, txn_id, name)
        parts = []
        for pd in td.partition_data:
            if acks not in (-1, 0, 1):
                parts.append(_error(pd.index, ErrorCode.INVALID_REQUIRED_ACKS))
                continue
            if denied:
                parts.append(_error(pd.index, denied))
                continue
            if topic is None:
                parts.append(_error(pd.index, unknown))
                continue
            if not 0 <= pd.index < topic.num_partitions:
                parts.append(_error(pd.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            if topic.is_internal:  # only the coordinators write there, as in Kafka
                parts.append(_error(pd.index, ErrorCode.INVALID_TOPIC_EXCEPTION,
                                    f"Cannot append to internal topic {name}"))
                continue
            try:
                partition = replicas.get_partition_or_error(name, pd.index)
                verifier = _transaction_verifier(broker, name, pd.index)
                if ask_coordinator:
                    code, message = await _verify_with_remote_coordinator(
                        broker, txn_id, partition, pd.records, add=adds)
                    if code:
                        parts.append(_error(pd.index, code, message))
                        continue
                if remote:
                    verifier = None
                before = None
                if fault is not None:
                    def before(header, name=name, index=pd.index):
                        fault("before_append", name, index, header)
                info = partition.append_records_to_leader(
                    pd.records, acks, allow_zstd=v >= ZSTD_MIN_VERSION, now_ms=broker.clock(),
                    verify_transaction=verifier,
                    before_append=before)
                if fault is not None:
                    fault("after_append", name, pd.index, None)
            except KafkaStorageError as e:  # nothing was appended; Kafka sends no message
                log.warning("%s", e)
                parts.append(_error(pd.index, e.code))
                continue
            except KafkaError as e:
                # Kafka answers append errors without a message, except record validation's
                message = None if isinstance(e, (InvalidRecordError, LogError)) else e.message
                if e.code == ErrorCode.NOT_ENOUGH_REPLICAS or (
                        e.code == ErrorCode.NOT_LEADER_OR_FOLLOWER):
                    message = None
                part = _error(pd.index, e.code, message)
                if isinstance(e, RecordValidationError):
                    part.record_errors = [BatchIndexAndErrorMessage(i, m)
                                          for i, m in e.record_errors]
                parts.append(part)
                continue
            part = PartitionProduceResponse(
                index=pd.index, error_code=0, base_offset=info.base_offset,
                log_append_time_ms=info.log_append_time, log_start_offset=info.log_start_offset,
                record_errors=[], error_message=None)
            parts.append(part)
            if acks == -1:
                waits.append((part, partition, info.last_offset + 1))
        responses.append(
            TopicProduceResponse(topic_id=td.topic_id, partition_responses=parts)
            if uses_ids
            else TopicProduceResponse(name=td.name, partition_responses=parts)
        )
    if waits:
        deadline = trio.current_time() + max(req.timeout_ms, 0) / 1000
        for part, partition, required in waits:
            part.error_code = await replicas.wait_for_acks(partition, required, deadline)
    if acks == 0:
        return None
    if v >= CURRENT_LEADER_VERSION:
        _point_to_leaders(broker, req, responses, uses_ids)
    return ProduceResponse(responses=responses, throttle_time_ms=0)


def _point_to_leaders(broker, req, responses, uses_ids: bool) -> None:
    """KIP-951, as Kafka's handleProduceRequest: each NOT_LEADER_OR_FOLLOWER partition names
    the current leader and epoch (the leader's endpoint is the metadata layer's to add, as
    for Fetch)."""
    for td, topic_response in zip(req.topic_data, responses, strict=True):
        topic = broker.topics.by_id.get(td.topic_id) if uses_ids else broker.topics.get(td.name)
        for part in topic_response.partition_responses:
            if part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                leader, epoch = (broker.replicas.current_leader(topic.name, part.index)
                                 if topic is not None else (-1, -1))
                part.current_leader = LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch)
