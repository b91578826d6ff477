"""Produce: validate each partition's batch (header and CRC, then every record as Kafka's
LogValidator does, which may rewrite the batch for the topic's compression.type), check its
producer's sequence and epoch (per batch, from the header), append it, answer per partition."""

from __future__ import annotations

import logging

from pykafkad.broker import LEADER_EPOCH
from pykafkad.dispatch import RequestContext, handles
from pykafkad.log.errors import KafkaStorageError, LogError, RecordValidationError
from pykafkad.log.record_validation import RecordPolicy, validate_records
from wire.errors import ErrorCode, KafkaError
from wire.messages.produce_response import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from wire.records.batch import validate_produce_records
from wire.records.errors import InvalidRecordError

log = logging.getLogger("pykafkad.produce")

API_KEY = 0
#: zstd is accepted from Produce v7 on (KIP-110)
ZSTD_MIN_VERSION = 7
#: v13 names topics by id only (KIP-516)
TOPIC_IDS_VERSION = 13


def _error(index: int, code: int, message: str | None = None) -> PartitionProduceResponse:
    return PartitionProduceResponse(
        index=index, error_code=code, base_offset=-1, log_append_time_ms=-1,
        log_start_offset=-1, record_errors=[], error_message=message)


def _verify_transactional(broker, topic: str, partition: int, plog, header) -> None:
    """transaction.partition.verification.enable (KIP-890 part 1): the first transactional
    batch of a transaction in a partition needs the partition added to the transaction."""
    if (
        header.is_transactional
        and not plog.producer_state.has_ongoing_txn(header.producer_id)
        and broker.config["transaction.partition.verification.enable"]
    ):
        err = broker.txn_coordinator.verify_partition(
            header.producer_id, header.producer_epoch, topic, partition)
        if err:
            raise KafkaError(err, f"the partition {topic}-{partition} is not part of an ongoing "
                                  "transaction of this producer")


@handles(API_KEY, 3, 13, advertised_min_version=0)
async def handle_produce(ctx: RequestContext, req) -> ProduceResponse | None:
    """Versions 3-13; 0-2 are advertised, as Kafka 4 does (KAFKA-18659: librdkafka needs the
    0), and refused like Kafka refuses them: the connection is closed.  v13 names topics by id
    (UNKNOWN_TOPIC_ID when unknown).  acks=0 gets no response.  Every requested partition is
    answered, in request order.  Idempotent batches: a retry of one of the producer's last five
    batches is answered NONE with its original offsets; OUT_OF_ORDER_SEQUENCE_NUMBER,
    INVALID_PRODUCER_EPOCH and INVALID_TXN_STATE as Kafka.  Records are validated as Kafka's
    LogValidator does.  A partition whose files cannot be written (disk full) answers
    KAFKA_STORAGE_ERROR, which clients retry; the others in the request are appended as usual."""
    broker = ctx.broker
    v = ctx.version
    uses_ids = v >= TOPIC_IDS_VERSION
    acks = req.acks
    responses = []
    appended = False
    fault = broker.produce_fault
    for td in req.topic_data:
        if uses_ids:
            topic = broker.topics.by_id.get(td.topic_id)
            unknown = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = broker.topics.get(td.name)
            unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        name = topic.name if topic is not None else td.name
        topic_config = broker.topic_config(topic) if topic else None
        max_bytes = topic_config["max.message.bytes"] if topic else None
        policy = RecordPolicy.from_topic_config(topic_config) if topic else None
        parts = []
        for pd in td.partition_data:
            if acks not in (-1, 0, 1):
                parts.append(_error(pd.index, ErrorCode.INVALID_REQUIRED_ACKS))
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
                records = pd.records
                if not records:
                    raise KafkaError(ErrorCode.INVALID_RECORD, None)  # Kafka: no message
                header = validate_produce_records(
                    records, max_size=max_bytes, allow_zstd=v >= ZSTD_MIN_VERSION
                )
                if len(records) > header.size:  # a trailing partial batch: dropped, as Kafka
                    records = records[:header.size]
                now = broker.clock()
                records, header = validate_records(
                    records, header, policy, now, f"{name}-{pd.index}")
                plog = broker.partition(name, pd.index)
                if fault is not None:
                    fault("before_append", name, pd.index, header)
                if header.producer_id >= 0:
                    _verify_transactional(broker, name, pd.index, plog, header)
                info = plog.append_produced(records, header, LEADER_EPOCH, now_ms=now)
                if fault is not None:
                    fault("after_append", name, pd.index, header)
            except KafkaStorageError as e:  # nothing was appended; Kafka sends no message
                log.warning("%s", e)
                parts.append(_error(pd.index, e.code))
                continue
            except KafkaError as e:
                # Kafka answers append errors without a message, except record validation's
                message = None if isinstance(e, (InvalidRecordError, LogError)) else e.message
                part = _error(pd.index, e.code, message)
                if isinstance(e, RecordValidationError):
                    part.record_errors = [BatchIndexAndErrorMessage(i, m)
                                          for i, m in e.record_errors]
                parts.append(part)
                continue
            appended = appended or not info.duplicate
            parts.append(PartitionProduceResponse(
                index=pd.index, error_code=0, base_offset=info.base_offset,
                log_append_time_ms=info.log_append_time, log_start_offset=info.log_start_offset,
                record_errors=[], error_message=None))
        responses.append(
            TopicProduceResponse(topic_id=td.topic_id, partition_responses=parts)
            if uses_ids
            else TopicProduceResponse(name=td.name, partition_responses=parts)
        )
    if appended:
        broker.notify_append()
    if acks == 0:
        return None
    return ProduceResponse(responses=responses, throttle_time_ms=0)
