"""Metadata: brokers, the controller, topics with ids and partitions, auto topic creation."""

from __future__ import annotations

from pykafkad.broker import LEADER_EPOCH
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages.metadata_response import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from wire.primitives import ZERO_UUID

API_KEY = 3
#: Kafka's "authorized operations not requested" marker
AUTHORIZED_OPERATIONS_OMITTED = -2147483648


def topic_metadata(broker, topic, node_id: int) -> MetadataResponseTopic:
    parts = [
        MetadataResponsePartition(
            error_code=0,
            partition_index=p,
            leader_id=node_id,
            leader_epoch=LEADER_EPOCH,
            replica_nodes=[node_id],
            isr_nodes=[node_id],
            offline_replicas=[],
        )
        for p in range(topic.num_partitions)
    ]
    return MetadataResponseTopic(
        error_code=0,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=parts,
        topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
    )


@handles(API_KEY, 0, 13)
async def handle_metadata(ctx: RequestContext, req) -> MetadataResponse:
    """Versions 0-13 (v13 adds a top-level ``error_code``, only ever set by Kafka to ask a
    client to rebootstrap).  A null topic list (v1+) or an empty one at v0 means all topics.
    Unknown topics are auto-created when the request allows it (v4+; always before) and
    ``auto.create.topics.enable`` is on; Kafka then answers LEADER_NOT_AVAILABLE once, but a
    single node has the leader at once, so the topic is returned ready.  v10+ may name
    topics by id only."""
    broker = ctx.broker
    ep = broker.endpoint
    v = ctx.version
    all_topics = req.topics is None or (v == 0 and not req.topics)
    out = []
    if all_topics:
        for topic in broker.topics.topics.values():
            out.append(topic_metadata(broker, topic, ep.node_id))
    else:
        allow_auto = req.allow_auto_topic_creation if v >= 4 else True
        for t in req.topics:
            name = t.name
            if name is None and t.topic_id != ZERO_UUID:
                topic = broker.topics.by_id.get(t.topic_id)
                if topic is None:
                    out.append(MetadataResponseTopic(
                        error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None, topic_id=t.topic_id,
                        topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED))
                    continue
            else:
                topic = broker.topics.get(name)
            if topic is None:
                err = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if allow_auto:
                    try:
                        topic = broker.auto_create_topic(name)
                    except KafkaError as e:
                        err = e.code
                if topic is None:
                    out.append(MetadataResponseTopic(
                        error_code=err, name=name, topic_id=ZERO_UUID,
                        topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED))
                    continue
            out.append(topic_metadata(broker, topic, ep.node_id))
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[MetadataResponseBroker(ep.node_id, ep.host, ep.port, None)],
        cluster_id=broker.cluster_id,
        controller_id=ep.node_id,
        topics=out,
        cluster_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
    )
