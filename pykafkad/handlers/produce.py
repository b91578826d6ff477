"""Produce: validate each partition's batch, check its producer's sequence and epoch (per batch,
from the header), append it as sent, answer per partition."""

from __future__ import annotations

from pykafkad.broker import LEADER_EPOCH
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages.produce_response import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from wire.records.batch import decode_records, validate_produce_records

API_KEY = 0
#: zstd is accepted from Produce v7 on (KIP-110)
ZSTD_MIN_VERSION = 7
#: v13 names topics by id only (KIP-516)
TOPIC_IDS_VERSION = 13


def _error(index: int, code: int, message: str | None = None) -> PartitionProduceResponse:
    return PartitionProduceResponse(
        index=index, error_code=code, base_offset=-1, log_append_time_ms=-1,
        log_start_offset=-1, record_errors=[], error_message=message)


def _check_keys(records, topic: str, partition: int) -> None:
    """Compacted topics need a key on every record: the one produce check that decodes records
    (Kafka decodes them for compacted topics too).  Answered INVALID_RECORD with the index of
    each keyless record in ``record_errors``."""
    missing = [i for i, r in enumerate(decode_records(records)) if r.key is None]
    if missing:
        message = f"Compacted topic cannot accept message without key in topic partition {topic}-{partition}."
        raise KeylessRecordError(missing, message)


class KeylessRecordError(KafkaError):
    def __init__(self, indexes: list[int], message: str):
        super().__init__(ErrorCode.INVALID_RECORD, message)
        self.record_errors = [BatchIndexAndErrorMessage(i, message) for i in indexes]


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
    INVALID_PRODUCER_EPOCH and INVALID_TXN_STATE as Kafka."""
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
        compacted = topic is not None and "compact" in topic_config["cleanup.policy"]
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
                    raise KafkaError(ErrorCode.INVALID_RECORD, "no record batch in the request")
                header = validate_produce_records(
                    records, max_size=max_bytes, allow_zstd=v >= ZSTD_MIN_VERSION
                )
                if compacted:
                    _check_keys(records, name, pd.index)
                plog = broker.partition(name, pd.index)
                if fault is not None:
                    fault("before_append", name, pd.index, header)
                if header.producer_id >= 0:
                    _verify_transactional(broker, name, pd.index, plog, header)
                info = plog.append_produced(records, header, LEADER_EPOCH, now_ms=broker.clock())
                if fault is not None:
                    fault("after_append", name, pd.index, header)
            except KafkaError as e:
                part = _error(pd.index, e.code, e.message)
                part.record_errors = getattr(e, "record_errors", [])
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
