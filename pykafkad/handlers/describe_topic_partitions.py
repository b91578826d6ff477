"""DescribeTopicPartitions (key 75): topic metadata in pages, for Java's ``Admin.describeTopics``.

Java's admin client (and so Spark's driver) describes topics with this API and follows
``next_cursor`` until it is null; it falls back to Metadata only when the API is not
advertised.  Paging follows Kafka's broker: topics in name order, at most
``min(response_partition_limit, max.request.partition.size.limit)`` partitions a page (at least
one), and a cursor that points at the first partition left out.
"""

from __future__ import annotations

from pykafkad.cluster import INTERNAL_TOPICS, validate_topic_name
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations
from wire.errors import ErrorCode, KafkaError
from wire.messages.describe_topic_partitions_response import (
    Cursor,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)
from wire.primitives import ZERO_UUID

API_KEY = 75

#: Kafka without an authorizer reports every operation a topic supports.
TOPIC_AUTHORIZED_OPERATIONS = authorized_operations.TOPIC


def _partition(broker, topic: str, index: int) -> DescribeTopicPartitionsResponsePartition:
    view = broker.metadata_cache.partition(topic, index)
    return DescribeTopicPartitionsResponsePartition(
        error_code=0,
        partition_index=index,
        leader_id=view.leader,
        leader_epoch=view.leader_epoch,
        replica_nodes=view.replicas,
        isr_nodes=view.isr,
        eligible_leader_replicas=[],
        last_known_elr=[],
        offline_replicas=view.offline,
    )


def _missing_topic(name: str) -> DescribeTopicPartitionsResponseTopic:
    try:
        validate_topic_name(name)
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except KafkaError:
        code = ErrorCode.INVALID_TOPIC_EXCEPTION
    return DescribeTopicPartitionsResponseTopic(
        error_code=code, name=name, topic_id=ZERO_UUID, is_internal=name in INTERNAL_TOPICS,
        partitions=[],
        topic_authorized_operations=TOPIC_AUTHORIZED_OPERATIONS)


def _error_response(req, code: int) -> DescribeTopicPartitionsResponse:
    """Kafka's answer to a request it refuses as a whole: every requested topic carries the
    error, with no partitions and no cursor."""
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=[
        DescribeTopicPartitionsResponseTopic(error_code=code, name=t.name, topic_id=ZERO_UUID,
                                             is_internal=False, partitions=[])
        for t in req.topics
    ])


@handles(API_KEY, 0, 0)
async def handle_describe_topic_partitions(
    ctx: RequestContext, req
) -> DescribeTopicPartitionsResponse:
    """Version 0.  An empty topic list means every topic (internal ones included).  With a
    cursor, topics named before the cursor's topic are skipped and the cursor's topic starts at
    its partition index; a cursor whose topic is not among the requested ones, or whose index
    is negative, makes the whole request INVALID_REQUEST.  A page holds
    ``min(response_partition_limit, max.request.partition.size.limit)`` partitions, at least
    one.  Unknown requested topics are answered with UNKNOWN_TOPIC_OR_PARTITION
    (INVALID_TOPIC_EXCEPTION for illegal names) and take no room in the page.  A topic whose
    partitions do not all fit ends the page with a cursor at the first one left out; when the
    page is full exactly, the cursor points at the next topic's partition 0.  All of this was
    compared with Apache Kafka 4.1 answering the same requests."""
    broker = ctx.broker
    cursor = req.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    fetch_all = not req.topics
    if fetch_all:
        names = {n for n in broker.topics.topics if n >= cursor_topic}
    else:
        names = {t.name for t in req.topics if t.name >= cursor_topic}
        if cursor is not None and cursor.topic_name not in names:
            return _error_response(req, ErrorCode.INVALID_REQUEST)
    if cursor is not None and cursor.partition_index < 0:
        return _error_response(req, ErrorCode.INVALID_REQUEST)

    # Kafka 4 serves at least one partition a page, whatever limit the request names
    remaining = max(1, min(broker.config["max.request.partition.size.limit"],
                           req.response_partition_limit))
    out: list[DescribeTopicPartitionsResponseTopic] = []
    next_cursor = None
    for name in sorted(names):
        if remaining == 0:
            next_cursor = Cursor(topic_name=name, partition_index=0)
            break
        topic = broker.topics.get(name)
        if topic is None:
            if not fetch_all:
                out.append(_missing_topic(name))
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        upper = min(topic.num_partitions, start + remaining)
        out.append(DescribeTopicPartitionsResponseTopic(
            error_code=0,
            name=name,
            topic_id=topic.topic_id,
            is_internal=topic.is_internal,
            partitions=[_partition(ctx.broker, name, p) for p in range(start, upper)],
            topic_authorized_operations=TOPIC_AUTHORIZED_OPERATIONS,
        ))
        if upper < topic.num_partitions:
            next_cursor = Cursor(topic_name=name, partition_index=upper)
            break
        remaining -= max(upper - start, 0)
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=out, next_cursor=next_cursor)
