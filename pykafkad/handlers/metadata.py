"""Metadata: brokers, the controller, topics with ids and partitions, auto topic creation."""

from __future__ import annotations

from pykafkad.cluster import validate_topic_name
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import CLUSTER, CLUSTER_NAME, CREATE, DESCRIBE, TOPIC
from wire.errors import ErrorCode, KafkaError
from wire.messages.metadata_response import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from wire.primitives import ZERO_UUID

API_KEY = 3


def _partition(broker, topic: str, index: int) -> MetadataResponsePartition:
    view = broker.metadata_cache.partition(topic, index)
    return MetadataResponsePartition(
        error_code=0 if view.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
        partition_index=index, leader_id=view.leader, leader_epoch=view.leader_epoch,
        replica_nodes=view.replicas, isr_nodes=view.isr, offline_replicas=view.offline)


def topic_metadata(broker, topic, node_id: int, topic_ops: int) -> MetadataResponseTopic:
    """The topic's partitions as the metadata cache knows them (leader, epoch, replicas, ISR)."""
    parts = [_partition(broker, topic.name, p) for p in range(topic.num_partitions)]
    return MetadataResponseTopic(
        error_code=0,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=parts,
        topic_authorized_operations=topic_ops,
    )


#: topic ids in requests are served from v12 on; v10-11 carry the field but Kafka refuses it
TOPIC_IDS_VERSION = 12
FIRST_TOPIC_ID_FIELD_VERSION = 10


def _error_topic(code: int, name: str | None, ops: int,
                 topic_id: bytes = ZERO_UUID) -> MetadataResponseTopic:
    return MetadataResponseTopic(error_code=code, name=name, topic_id=topic_id,
                                 topic_authorized_operations=ops)


def _topics_by_id(broker, req, node_id: int, ops: int) -> list[MetadataResponseTopic]:
    """v12+ with any topic id: names are ignored, each id is answered once, unknown ids first
    (UNKNOWN_TOPIC_ID, null name), as Kafka does."""
    ids = list(dict.fromkeys(t.topic_id for t in req.topics if t.topic_id != ZERO_UUID))
    known = [broker.topics.by_id.get(i) for i in ids]
    return [_error_topic(ErrorCode.UNKNOWN_TOPIC_ID, None, ops, i)
            for i, t in zip(ids, known, strict=True) if t is None] + [
        topic_metadata(broker, t, node_id, ops) for t in known if t is not None]


def _topics_by_name(broker, req, node_id: int, allow_auto: bool, ops: int) -> list[MetadataResponseTopic]:
    """Each name answered once: existing topics first, then the others (auto-created, or an
    error: INVALID_TOPIC_EXCEPTION for an illegal name even without auto-creation), as Kafka
    does.  A null name at v12+ fails as it fails in Kafka (-1)."""
    found, rest = [], []
    for name in dict.fromkeys(t.name for t in req.topics):
        if name is None:
            rest.append(_error_topic(ErrorCode.UNKNOWN_SERVER_ERROR, "", ops))
            continue
        topic = broker.topics.get(name)
        if topic is not None:
            found.append(topic_metadata(broker, topic, node_id, ops))
            continue
        err = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        try:
            validate_topic_name(name)  # an illegal name: INVALID_TOPIC_EXCEPTION, as Kafka
            if allow_auto and broker.auto_topic_creation is not None:
                # a KRaft broker: the controller creates it; Kafka 4.4 answers this
                # request UNKNOWN_TOPIC_OR_PARTITION (seen on a live broker), the next one
                # the topic once this broker's metadata has it
                broker.auto_topic_creation.create_topic(name)
            elif allow_auto:
                topic = broker.auto_create_topic(name)
        except KafkaError as e:
            err = e.code
        rest.append(topic_metadata(broker, topic, node_id, ops) if topic is not None
                    else _error_topic(err, name, ops))
    return found + rest


def _may_create(ctx: RequestContext, req) -> bool:
    """Auto-creation needs CREATE on the cluster or on every topic to create."""
    return authorized(ctx, CLUSTER, CREATE) or all(
        authorized(ctx, TOPIC, CREATE, t.name or "") for t in req.topics)


@handles(API_KEY, 0, 13)
async def handle_metadata(ctx: RequestContext, req) -> MetadataResponse:
    """Versions 0-13 (v13 adds a top-level ``error_code``, only ever set by Kafka to ask a
    client to rebootstrap).  A null topic list (v1+) or an empty one at v0 means all topics.
    Unknown topics are auto-created when the request allows it (v4+; always before) and
    ``auto.create.topics.enable`` is on; Kafka then answers LEADER_NOT_AVAILABLE once, but a
    single node has the leader at once, so the topic is returned ready.  Topic ids: v10-11
    have the field but Kafka answers INVALID_REQUEST for every topic when one is set (or a
    name is null); from v12 a request with any id is answered by id only.  v8+ fill in the
    authorized operations when asked (every topic's, even an unknown one's; the cluster's up
    to v10), as Kafka does without an authorizer."""
    broker = ctx.broker
    ep = ctx.endpoint
    v = ctx.version
    all_topics = req.topics is None or (v == 0 and not req.topics)
    ops = (authorized_operations.TOPIC if v >= 8 and req.include_topic_authorized_operations
           else authorized_operations.OMITTED)
    if all_topics:
        out = [topic_metadata(broker, topic, ep.node_id, ops)
               for topic in broker.topics.topics.values()]
    elif v >= FIRST_TOPIC_ID_FIELD_VERSION and any(
            t.topic_id != ZERO_UUID or (v < TOPIC_IDS_VERSION and t.name is None)
            for t in req.topics):
        if v < TOPIC_IDS_VERSION:
            out = [_error_topic(ErrorCode.INVALID_REQUEST, t.name or "", ops, t.topic_id)
                   for t in req.topics]
        else:
            out = _topics_by_id(broker, req, ep.node_id, ops)
    else:
        allow_auto = req.allow_auto_topic_creation if v >= 4 else True
        if broker.authorizer is not None and allow_auto:
            allow_auto = _may_create(ctx, req)
        out = _topics_by_name(broker, req, ep.node_id, allow_auto, ops)
    if broker.authorizer is not None:
        out = _authorize_topics(ctx, out, all_topics, ops != authorized_operations.OMITTED)
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[MetadataResponseBroker(n.node_id, n.host, n.port, n.rack)
                 for n in broker.metadata_cache.alive_brokers(ctx.listener_name)],
        cluster_id=broker.cluster_id,
        controller_id=broker.metadata_cache.controller_id(ctx.listener_name),
        topics=out,
        cluster_authorized_operations=(
            cluster_ops(ctx) if 8 <= v <= 10 and req.include_cluster_authorized_operations
            else authorized_operations.OMITTED),
    )


def _authorize_topics(ctx: RequestContext, out: list, listed_all: bool,
                      ops_requested: bool) -> list:
    """With an authorizer: topics without DESCRIBE are left out of an all-topics answer and
    answered TOPIC_AUTHORIZATION_FAILED when named, as Kafka does; the authorized operations
    are the principal's."""
    authorizer = ctx.broker.authorizer
    kept = []
    for t in out:
        name = t.name or ""
        if not authorized(ctx, TOPIC, DESCRIBE, name):
            if listed_all:
                continue
            t = _error_topic(ErrorCode.TOPIC_AUTHORIZATION_FAILED, t.name,
                             t.topic_authorized_operations)
        elif ops_requested:
            t.topic_authorized_operations = authorizer.authorized_operations(
                ctx.principal_name, ctx.client_host, TOPIC, name)
        kept.append(t)
    return kept


def cluster_ops(ctx: RequestContext) -> int:
    """The cluster's authorized operations: all of them without an authorizer."""
    return authorized_operations.of(ctx, CLUSTER, CLUSTER_NAME)
