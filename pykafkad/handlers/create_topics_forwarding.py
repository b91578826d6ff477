"""CreateTopics on a KRaft broker with an authorizer: the topics the principal may not create
are answered TOPIC_AUTHORIZATION_FAILED here and only the others go to the controller.

Kafka's controller makes this check with the principal the Envelope carries; pykafkad's
controller does not authorize forwarded requests, so the broker (whose authorizer holds the
same ACLs, from the metadata) checks CREATE on the cluster, else on each topic, first.  The
client sees the same answer.
"""

from __future__ import annotations

import copy
from typing import Any

from pykafkad.dispatch import RequestContext
from pykafkad.handlers.admin_topics import AUTH_FAILED
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import CLUSTER, CREATE, TOPIC
from wire.errors import ErrorCode
from wire.framing import encode_request
from wire.messages.create_topics_response import CreatableTopicResult
from wire.primitives import ZERO_UUID

CREATE_TOPICS_KEY = 19


async def forward_create_topics(ctx: RequestContext, frame: bytes, request: Any, forwarding: Any,
                                response_type: type) -> Any:
    may_create_any = authorized(ctx, CLUSTER, CREATE)
    denied = set() if may_create_any else {
        t.name for t in request.topics if not authorized(ctx, TOPIC, CREATE, t.name)}
    if not denied:
        return await forwarding.forward(ctx, frame, request, response_type)
    allowed = copy.copy(request)
    allowed.topics = [t for t in request.topics if t.name not in denied]
    answered: dict[str, Any] = {}
    response = response_type(throttle_time_ms=0, topics=[])
    if allowed.topics:
        response = await forwarding.forward(
            ctx, encode_request(ctx.header, allowed)[4:], allowed, response_type)
        answered = {r.name: r for r in response.topics}
    response.topics = [
        answered.get(t.name) or CreatableTopicResult(
            name=t.name, topic_id=ZERO_UUID, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            error_message=AUTH_FAILED, num_partitions=-1, replication_factor=-1, configs=None)
        for t in request.topics]
    return response
