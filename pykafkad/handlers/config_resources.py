"""ListConfigResources (KIP-1142; ListClientMetricsResources before Kafka 4.1): which
resources have configs that DescribeConfigs can read."""

from __future__ import annotations

from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers.admin_configs import BROKER, BROKER_LOGGER, TOPIC
from wire.errors import ErrorCode
from wire.messages.list_config_resources_response import (
    ConfigResource,
    ListConfigResourcesResponse,
)

API_KEY = 74
CLIENT_METRICS = 16
GROUP = 32
#: the resource types Kafka 4.4 lists; any other asked for is UNSUPPORTED_VERSION
LISTED_TYPES = frozenset({TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP})


@handles(API_KEY, 0, 1)
async def handle_list_config_resources(ctx: RequestContext, req) -> ListConfigResourcesResponse:
    """Versions 0-1.  v0 lists client-metrics subscriptions only; v1 the types asked for, all
    when none is named.  As Kafka: every topic (internal ones too), this node as a broker and
    as a broker logger, and the groups and client-metrics subscriptions that have configs.
    Kafka answers an unknown resource type with UNSUPPORTED_VERSION and no resources."""
    broker = ctx.broker
    metrics = [ConfigResource(name, CLIENT_METRICS) for name in broker.client_metrics.names()]
    if ctx.version == 0:
        return ListConfigResourcesResponse(throttle_time_ms=0, error_code=0,
                                           config_resources=metrics)
    wanted = set(req.resource_types) or LISTED_TYPES
    if not wanted <= LISTED_TYPES:
        return ListConfigResourcesResponse(
            throttle_time_ms=0, error_code=ErrorCode.UNSUPPORTED_VERSION, config_resources=[])
    node = str(broker.node_id)
    out = []
    # in the order Kafka 4.4 lists them: groups, client metrics, broker loggers, brokers, topics
    if GROUP in wanted:
        out += [ConfigResource(g, GROUP) for g in broker.group_configs.names()]
    if CLIENT_METRICS in wanted:
        out += metrics
    if BROKER_LOGGER in wanted:
        out.append(ConfigResource(node, BROKER_LOGGER))
    if BROKER in wanted:
        out.append(ConfigResource(node, BROKER))
    if TOPIC in wanted:
        out += [ConfigResource(name, TOPIC) for name in broker.topics.topics]
    return ListConfigResourcesResponse(throttle_time_ms=0, error_code=0, config_resources=out)
