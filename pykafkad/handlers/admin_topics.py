"""CreateTopics, DeleteTopics, CreatePartitions (this node is the controller)."""

from __future__ import annotations

from collections import Counter

from pykafkad.config import describe_topic_configs
from pykafkad.dispatch import RequestContext, handles
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import CLUSTER, CREATE, DELETE, TOPIC
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


#: QuorumController.MAX_RECORDS_PER_USER_OP: the most metadata records one admin request may
#: write.  Kafka refuses a bigger CreateTopics/CreatePartitions whole, before touching anything.
MAX_RECORDS_PER_USER_OP = 10000
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."
TOO_MANY_ADDITIONAL_PARTITIONS = "Excessively large number of additional partitions per request."
BATCH_TOO_LARGE = "Unable to perform excessively large batch operation."


def requested_partitions(topics, default_partitions: int) -> int:
    """ReplicationControlManager.validateTotalNumberOfPartitions for CreateTopics: every topic
    counts, valid or not (-1 = num.partitions, assignments by their length, <= 0 as nothing)."""
    total = 0
    for t in topics:
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += default_partitions
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total


def _fail_all(results, message: str) -> None:
    for res in results:
        res.error_code, res.error_message = ErrorCode.POLICY_VIOLATION, message


def _plan_topic(broker, t, duplicated: bool) -> tuple[int, int, dict[str, str]]:
    """Checks one CreatableTopic as Kafka does; returns (partitions, replication factor, configs)."""
    if duplicated:
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
    broker.check_new_topic(t.name, num_partitions, configs)
    return num_partitions, rf, configs


#: the controller's message for a topic the principal may not create
AUTH_FAILED = "Authorization failed."


@handles(19, 2, 7)
async def handle_create_topics(ctx: RequestContext, req) -> CreateTopicsResponse:
    """Versions 0-7.  -1 partitions / replication factor take the broker defaults (v4+).
    A replication factor above 1 is INVALID_REPLICATION_FACTOR, as on a one-broker Kafka.
    v5+ answers the resulting partitions, replication factor and configs; v7 the topic id.

    As Kafka's controller, a request for more than 10,000 partitions in all, or whose valid
    topics would take more than 10,000 metadata records (one per topic, partition and config),
    is refused whole with POLICY_VIOLATION, validate_only or not.  The answer comes once the
    topic registry is written (once for the request), as Kafka's controller answers once its
    records are; a registry that cannot be written (disk full) answers KAFKA_STORAGE_ERROR and
    the topics are rolled back.  Logs are created afterwards (see Broker.create_topics)."""
    broker = ctx.broker
    v = ctx.version
    names = Counter(t.name for t in req.topics)
    results = [
        CreatableTopicResult(name=t.name, topic_id=ZERO_UUID, error_code=0, error_message=None,
                             num_partitions=-1, replication_factor=-1, configs=None)
        for t in req.topics
    ]
    response = CreateTopicsResponse(throttle_time_ms=0, topics=results)
    if requested_partitions(req.topics, broker.config["num.partitions"]) > MAX_RECORDS_PER_USER_OP:
        _fail_all(results, TOO_MANY_PARTITIONS)
        return response
    plans = []
    may_create_any = authorized(ctx, CLUSTER, CREATE)
    for t, res in zip(req.topics, results, strict=True):
        if not may_create_any and not authorized(ctx, TOPIC, CREATE, t.name):
            res.error_code, res.error_message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, AUTH_FAILED
            continue
        try:
            plans.append((t, res, *_plan_topic(broker, t, names[t.name] > 1)))
        except KafkaError as e:
            res.error_code, res.error_message = e.code, e.message
    records = sum(1 + n + len(configs) for _, _, n, _, configs in plans)
    if records > MAX_RECORDS_PER_USER_OP:
        _fail_all(results, BATCH_TOO_LARGE)
        return response
    created = [None] * len(plans)
    if not req.validate_only:  # all at once: one durable registry write for the request
        created = broker.create_topics([(t.name, n, configs) for t, _, n, _, configs in plans])
    for (_, res, num_partitions, rf, configs), made in zip(plans, created, strict=True):
        if isinstance(made, KafkaError):
            res.error_code, res.error_message = made.code, made.message
            continue
        res.topic_id = made.topic_id if v >= 7 and made is not None else ZERO_UUID
        res.num_partitions, res.replication_factor = num_partitions, rf
        if v >= 5:
            res.configs = [
                CreatableTopicConfigs(name=e.name, value=e.value, read_only=e.read_only,
                                      config_source=e.source, is_sensitive=e.is_sensitive)
                for e in describe_topic_configs(broker.config, configs, None, False, False)
            ]
    return response


@handles(20, 1, 6)
async def handle_delete_topics(ctx: RequestContext, req) -> DeleteTopicsResponse:
    """Versions 0-6 (v6 names topics by name or id).  A topic whose removal cannot be recorded
    (disk full) answers KAFKA_STORAGE_ERROR and stays as it was."""
    broker = ctx.broker
    if ctx.version >= 6:
        wanted = [(t.name, t.topic_id) for t in req.topics]
    else:
        wanted = [(n, ZERO_UUID) for n in req.topic_names]
    results = []
    names = []  # the named topics to delete, all at once: one durable registry write
    for name, topic_id in wanted:
        res = DeletableTopicResult(name=name, topic_id=topic_id, error_code=0)
        results.append(res)
        if name is None:
            topic = broker.topics.by_id.get(topic_id)
            if topic is None:
                res.error_code = ErrorCode.UNKNOWN_TOPIC_ID
                continue
            res.name = name = topic.name
        if not authorized(ctx, TOPIC, DELETE, name):
            res.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            continue
        names.append((res, name))
    deleted = broker.delete_topics([name for _, name in names])
    for (res, name), outcome in zip(names, deleted, strict=True):
        if isinstance(outcome, KafkaError):
            res.error_code = outcome.code
            res.error_message = outcome.message
        elif isinstance(outcome, OSError):  # the registry cannot be rewritten (disk full)
            res.error_code = ErrorCode.KAFKA_STORAGE_ERROR
            res.error_message = f"Error while deleting topic {name}: {outcome.strerror or outcome}"
        else:
            res.topic_id = outcome.topic_id
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results)


@handles(37, 0, 3)
async def handle_create_partitions(ctx: RequestContext, req) -> CreatePartitionsResponse:
    """Versions 0-3.  As Kafka's controller, more than 10,000 new partitions in all (over the
    existing topics that grow) is refused whole with POLICY_VIOLATION, validate_only or not."""
    broker = ctx.broker
    results = [CreatePartitionsTopicResult(name=t.name, error_code=0, error_message=None)
               for t in req.topics]
    response = CreatePartitionsResponse(throttle_time_ms=0, results=results)
    if additional_partitions(broker, req.topics) > MAX_RECORDS_PER_USER_OP:
        _fail_all(results, TOO_MANY_ADDITIONAL_PARTITIONS)
        return response
    for t, res in zip(req.topics, results, strict=True):
        try:
            if broker.topics.get(t.name) is None:  # Kafka answers this one without a message
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            if t.assignments is not None:
                check_assignments(broker.node_id, [a.broker_ids for a in t.assignments])
            broker.create_partitions(t.name, t.count, req.validate_only)
        except KafkaError as e:
            res.error_code = e.code
            res.error_message = e.message
    return response


def additional_partitions(broker, topics) -> int:
    """The partitions a CreatePartitions request adds to existing topics (Kafka's count)."""
    total = 0
    for t in topics:
        topic = broker.topics.get(t.name)
        if topic is not None and t.count > topic.num_partitions:
            total += t.count - topic.num_partitions
    return total
