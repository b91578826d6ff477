"""CreateTopics, DeleteTopics, CreatePartitions (this node is the controller)."""

from __future__ import annotations

from collections import Counter

from pykafkad.config import describe_topic_configs
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages.create_partitions_response import (
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)
from wire.messages.create_topics_response import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsResponse,
)
from wire.messages.delete_topics_response import DeletableTopicResult, DeleteTopicsResponse
from wire.primitives import ZERO_UUID


def replication_error(rf: int) -> KafkaError:
    return KafkaError(
        ErrorCode.INVALID_REPLICATION_FACTOR,
        f"Unable to replicate the partition {rf} time(s): The target replication factor of "
        f"{rf} cannot be reached because only 1 broker(s) are registered.",
    )


def check_assignments(node_id: int, assignments: list[list[int]]) -> None:
    for broker_ids in assignments:
        if any(b != node_id for b in broker_ids) or not broker_ids:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker(s) other than {node_id}.",
            )
        if len(broker_ids) > 1:
            raise replication_error(len(broker_ids))


@handles(19, 2, 7)
async def handle_create_topics(ctx: RequestContext, req) -> CreateTopicsResponse:
    """Versions 0-7.  -1 partitions / replication factor take the broker defaults (v4+).
    A replication factor above 1 is INVALID_REPLICATION_FACTOR, as on a one-broker Kafka.
    v5+ answers the resulting partitions, replication factor and configs; v7 the topic id."""
    broker = ctx.broker
    v = ctx.version
    names = Counter(t.name for t in req.topics)
    results = []
    for t in req.topics:
        res = CreatableTopicResult(name=t.name, topic_id=ZERO_UUID, error_code=0,
                                   num_partitions=-1, replication_factor=-1, configs=None)
        results.append(res)
        try:
            if names[t.name] > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Create topics request from client contains duplicate topic {t.name}")
            if t.assignments:
                if t.num_partitions != -1 or t.replication_factor != -1:
                    raise KafkaError(ErrorCode.INVALID_REQUEST,
                                     "Both numPartitions or replicationFactor and "
                                     "replicasAssignments were set. Both cannot be used at the same time.")
                check_assignments(broker.node_id, [a.broker_ids for a in t.assignments])
                num_partitions, rf = len(t.assignments), 1
            else:
                num_partitions = t.num_partitions
                if num_partitions == -1:
                    num_partitions = broker.config["num.partitions"]
                rf = t.replication_factor
                if rf == -1:
                    rf = broker.config["default.replication.factor"]
                if rf <= 0:
                    raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                                     "Replication factor must be larger than 0, or -1 to use "
                                     "the default value.")
                if rf > 1:
                    raise replication_error(rf)
            configs = {}
            for c in t.configs:
                if c.value is None:
                    raise KafkaError(ErrorCode.INVALID_CONFIG,
                                     f"Null value not supported for topic configs: {c.name}")
                configs[c.name] = c.value
            if req.validate_only:
                broker.check_new_topic(t.name, num_partitions, configs)
                topic_id = ZERO_UUID
            else:
                topic_id = broker.create_topic(t.name, num_partitions, configs).topic_id
        except KafkaError as e:
            res.error_code = e.code
            res.error_message = e.message
            continue
        res.topic_id = topic_id if v >= 7 else ZERO_UUID
        res.num_partitions, res.replication_factor = num_partitions, rf
        if v >= 5:
            res.configs = [
                CreatableTopicConfigs(name=e.name, value=e.value, read_only=e.read_only,
                                      config_source=e.source, is_sensitive=e.is_sensitive)
                for e in describe_topic_configs(broker.config, configs, None, False, False)
            ]
    return CreateTopicsResponse(throttle_time_ms=0, topics=results)


@handles(20, 1, 6)
async def handle_delete_topics(ctx: RequestContext, req) -> DeleteTopicsResponse:
    """Versions 0-6 (v6 names topics by name or id)."""
    broker = ctx.broker
    if ctx.version >= 6:
        wanted = [(t.name, t.topic_id) for t in req.topics]
    else:
        wanted = [(n, ZERO_UUID) for n in req.topic_names]
    results = []
    for name, topic_id in wanted:
        res = DeletableTopicResult(name=name, topic_id=topic_id, error_code=0)
        results.append(res)
        if name is None:
            topic = broker.topics.by_id.get(topic_id)
            if topic is None:
                res.error_code = ErrorCode.UNKNOWN_TOPIC_ID
                continue
            res.name = name = topic.name
        try:
            topic = broker.delete_topic(name)
            res.topic_id = topic.topic_id
        except KafkaError as e:
            res.error_code = e.code
            res.error_message = e.message
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results)


@handles(37, 0, 3)
async def handle_create_partitions(ctx: RequestContext, req) -> CreatePartitionsResponse:
    """Versions 0-3."""
    broker = ctx.broker
    results = []
    for t in req.topics:
        res = CreatePartitionsTopicResult(name=t.name, error_code=0, error_message=None)
        results.append(res)
        try:
            if t.assignments is not None:
                check_assignments(broker.node_id, [a.broker_ids for a in t.assignments])
            broker.create_partitions(t.name, t.count, req.validate_only)
        except KafkaError as e:
            res.error_code = e.code
            res.error_message = e.message
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)
