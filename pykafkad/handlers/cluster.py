"""DescribeCluster and FindCoordinator: this node is the whole cluster and every coordinator."""

from __future__ import annotations

import base64
import binascii

from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers import authorized_operations, describe_cluster
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import (
    CLUSTER,
    CLUSTER_ACTION,
    CLUSTER_NAME,
    DESCRIBE,
    GROUP,
    TRANSACTIONAL_ID,
)
from wire.errors import ErrorCode, KafkaError
from wire.messages.describe_cluster_response import DescribeClusterResponse
from wire.messages.find_coordinator_response import Coordinator, FindCoordinatorResponse

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2
#: InvalidRequestException's default message: what Kafka's error responses carry
INVALID_REQUEST_MESSAGE = (
    "This most likely occurs because of a request being malformed by the client library or "
    "the message was sent to an incompatible broker. See the broker logs for more details.")
CLUSTER_DENIED = "Cluster authorization failed."


@handles(60, 0, 2)
async def handle_describe_cluster(ctx: RequestContext, req) -> DescribeClusterResponse:
    """Versions 0-2 on a broker listener: the alive brokers (v1: endpoint_type must be 1,
    brokers; v2: ``include_fenced_brokers`` adds the fenced ones, ``is_fenced`` says which)."""
    error = describe_cluster.endpoint_error(ctx.version, req, describe_cluster.BROKER_ENDPOINT)
    if error is not None:
        return error
    cache = ctx.broker.metadata_cache
    nodes = cache.brokers(ctx.listener_name, ctx.version >= 2 and req.include_fenced_brokers)
    return describe_cluster.described(
        req, describe_cluster.BROKER_ENDPOINT, ctx.broker.cluster_id,
        cache.controller_id(ctx.listener_name),
        [(n.node_id, n.host, n.port, n.rack, fenced) for n, fenced in nodes],
        authorized_operations.of(ctx, CLUSTER, CLUSTER_NAME))


def valid_share_key(key: str) -> bool:
    """Kafka's SharePartitionKey.validate: "groupId:topicId:partition", a non-blank group id,
    a topic id in Uuid's URL-safe base64 form (16 bytes) and an int partition."""
    tokens = key.split(":")
    while tokens and tokens[-1] == "":  # as Java's String.split drops trailing empties
        tokens.pop()
    if len(tokens) != 3 or not tokens[0].strip():
        return False
    topic_id = tokens[1]
    try:
        if len(topic_id) > 24 or len(base64.b64decode(
                topic_id + "=" * (-len(topic_id) % 4), altchars=b"-_", validate=True)) != 16:
            return False
        partition = int(tokens[2])
    except (ValueError, binascii.Error):
        return False
    return -2**31 <= partition < 2**31 and tokens[2].strip() == tokens[2] and "_" not in tokens[2]


@handles(10, 0, 6)
async def handle_find_coordinator(ctx: RequestContext, req) -> FindCoordinatorResponse:
    """Versions 0-6: the single ``key`` form (v0-3) and batched ``coordinator_keys`` (v4+).
    Group and transaction keys (key_type 1; __transaction_state is created on the first
    lookup) resolve to this node.  Messages are Kafka's: v0-3 say "NONE" on success, v4+
    never set one (""), except that an unknown key type fails the request as a whole."""
    ep = ctx.endpoint
    v = ctx.version
    if req.key_type == SHARE_KEY_TYPE and v >= 6 and not authorized(ctx, CLUSTER, CLUSTER_ACTION):
        # share keys are looked up by share-partition leaders, brokers: Kafka's check throws,
        # so the request as a whole fails, every key with the error's default message
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=[Coordinator(
            key=key, node_id=-1, host="", port=-1,
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=CLUSTER_DENIED)
            for key in req.coordinator_keys])
    locator = ctx.broker.coordinator_locator
    coordinator_of: dict[str, object] = {}

    def answer(key: str) -> tuple[int, str | None]:
        if req.key_type == SHARE_KEY_TYPE and (v < 6 or not valid_share_key(key)):
            return ErrorCode.INVALID_REQUEST, ""  # share keys came with v6
        if req.key_type == GROUP_KEY_TYPE and not authorized(ctx, GROUP, DESCRIBE, key):
            return ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed."
        if req.key_type == TRANSACTION_KEY_TYPE and not authorized(
                ctx, TRANSACTIONAL_ID, DESCRIBE, key):
            return (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                    "Transactional Id authorization failed.")
        if locator is not None and req.key_type in (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE,
                                                     SHARE_KEY_TYPE):
            # a KRaft broker: the leader of the key's internal-topic partition (a share key,
            # "group:topicId:partition", is how share-partition leaders find their share
            # coordinator)
            topic = {GROUP_KEY_TYPE: "__consumer_offsets",
                     TRANSACTION_KEY_TYPE: "__transaction_state"}.get(
                req.key_type, "__share_group_state")
            err, node = locator.find(topic, key, ctx.listener_name)
            if err:
                return err, "The coordinator is not available."
            coordinator_of[key] = node
            return ErrorCode.NONE, None
        try:
            return lookup(key)
        except KafkaError:  # the internal topic cannot be created (e.g. disk full): retriable
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available."

    def lookup(key: str) -> tuple[int, str | None]:
        if req.key_type == TRANSACTION_KEY_TYPE:
            # any id, even "", maps to a partition of __transaction_state (as in Kafka)
            ctx.broker.txn_coordinator.ensure_state_topic()  # as Kafka, on first lookup
            return ErrorCode.NONE, None
        if req.key_type == SHARE_KEY_TYPE:
            from pykafkad.coordinator.share_group.service import service_of

            if not service_of(ctx.broker).store.ensure_topic():
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available."
            return ErrorCode.NONE, None
        if req.key_type != GROUP_KEY_TYPE:
            return ErrorCode.INVALID_REQUEST, f"Unknown coordinator type {req.key_type}"
        # any group id, even "", maps to a partition of __consumer_offsets (as in Kafka),
        # which is created on the first lookup
        ctx.broker.groups.ensure_ready()
        return ErrorCode.NONE, None

    if v >= 4:
        coords = []
        for key in req.coordinator_keys:
            err, msg = answer(key)
            ok = err == ErrorCode.NONE
            unknown_type = req.key_type > SHARE_KEY_TYPE
            node = coordinator_of.get(key, ep)
            coords.append(Coordinator(
                key=key, node_id=node.node_id if ok else -1, host=node.host if ok else "",
                port=node.port if ok else -1, error_code=err,
                error_message=INVALID_REQUEST_MESSAGE if unknown_type else (
                    "" if ok or locator is None else msg)))
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=coords)
    err, msg = answer(req.key)
    ok = err == ErrorCode.NONE
    ep = coordinator_of.get(req.key, ep)
    if ok:
        msg = "NONE"
    elif err == ErrorCode.INVALID_REQUEST:
        msg = INVALID_REQUEST_MESSAGE
    return FindCoordinatorResponse(
        throttle_time_ms=0, error_code=err, error_message=msg,
        node_id=ep.node_id if ok else -1, host=ep.host if ok else "", port=ep.port if ok else -1)
