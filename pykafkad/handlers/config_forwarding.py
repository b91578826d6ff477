"""AlterConfigs and IncrementalAlterConfigs on a KRaft broker: Kafka's ConfigAdminManager
.preprocess, then forwarding.

Each resource is first checked here, with the broker's own answers (the same checks and
messages as the single node always gave, compared with Kafka's in tests/integration/
test_admin_answers.py); one refused here is answered here.  Broker loggers are this process's
own, and group and client-metrics configs are kept by this broker (the controller here does
not take them), so those are applied here too.  Only the topic and broker resources that pass
go to the active controller, whose ConfigRecords are what every broker then applies (topic
overrides by the metadata publisher, broker configs by DynamicConfigPublisher).  The answer
keeps the request's order of resources.
"""

from __future__ import annotations

import copy
from typing import Any

from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.dispatch import RequestContext
from pykafkad.handlers.admin_configs import (
    BROKER,
    BROKER_LOGGER,
    CLIENT_METRICS,
    GROUP,
    TOPIC,
    handle_alter_configs,
    handle_incremental_alter_configs,
)
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import ALTER_CONFIGS as ALTER_CONFIGS_OP
from pykafkad.security.authorizer import CLUSTER
from pykafkad.security.authorizer import GROUP as AclGROUP
from wire.errors import ErrorCode
from wire.framing import RequestHeader, encode_request
from wire.messages.alter_configs_response import AlterConfigsResourceResponse as LegacyResult
from wire.messages.incremental_alter_configs_response import AlterConfigsResourceResponse

ALTER_CONFIGS = 33
INCREMENTAL_ALTER_CONFIGS = 44
CONFIG_APIS = (ALTER_CONFIGS, INCREMENTAL_ALTER_CONFIGS)
#: the resources the controller keeps (as ConfigRecords)
CONTROLLER_RESOURCES = (TOPIC, BROKER)


def _with(message: Any, **fields: Any) -> Any:
    """A shallow copy of a generated message with some fields replaced."""
    out = copy.copy(message)
    for name, value in fields.items():
        setattr(out, name, value)
    return out


def _local_alter_denied(ctx: RequestContext, res: Any) -> Any:
    """The refusal of a resource this broker alters itself, when the principal may not:
    ALTER_CONFIGS on the group for a group, on the cluster for broker loggers and client
    metrics (as Kafka's broker preprocess and controller check them); else None."""
    if res.resource_type == GROUP:
        if authorized(ctx, AclGROUP, ALTER_CONFIGS_OP, res.resource_name):
            return None
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif res.resource_type in (BROKER_LOGGER, CLIENT_METRICS):
        if authorized(ctx, CLUSTER, ALTER_CONFIGS_OP):
            return None
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    else:
        return None
    response_type = (LegacyResult if ctx.header.api_key == ALTER_CONFIGS
                     else AlterConfigsResourceResponse)
    return response_type(error_code=code, error_message=DEFAULT_MESSAGES[code],
                         resource_type=res.resource_type, resource_name=res.resource_name)


async def forward_configs(ctx: RequestContext, frame: Any, request: Any, forwarding: Any,
                          response_type: type) -> Any:
    local = (handle_alter_configs if ctx.header.api_key == ALTER_CONFIGS
             else handle_incremental_alter_configs)
    answers: list[Any] = [None] * len(request.resources)
    forwarded: list[int] = []
    for i, res in enumerate(request.resources):
        one = _with(request, resources=[res])
        if res.resource_type in CONTROLLER_RESOURCES:
            # a broker resource names this broker (or is ""), as Kafka's preprocess requires
            checked = await local(ctx, _with(one, validate_only=True))
            code = checked.responses[0].error_code
            # a topic not (yet) in this broker's metadata image may be in the controller's:
            # Kafka's preprocess checks only duplicates and nulls for topics, and the
            # controller answers for unknown ones
            if code and not (code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                             and res.resource_type == TOPIC):
                answers[i] = checked.responses[0]
                continue
            forwarded.append(i)
        elif (denied := _local_alter_denied(ctx, res)) is not None:
            answers[i] = denied
        else:
            answers[i] = (await local(ctx, one)).responses[0]
    if not forwarded:
        return response_type(throttle_time_ms=0, responses=answers)
    if len(forwarded) == len(request.resources):
        response = await forwarding.forward(ctx, frame, request, response_type)
        return response
    remaining = _with(request, resources=[request.resources[i] for i in forwarded])
    h = ctx.header
    header = RequestHeader(h.api_key, h.api_version, h.correlation_id, h.client_id, h.version)
    remaining_frame = memoryview(encode_request(header, remaining))[4:]
    response = await forwarding.forward(ctx, remaining_frame, remaining, response_type)
    for i, answer in zip(forwarded, response.responses, strict=False):
        answers[i] = answer
    return _with(response, responses=answers)
