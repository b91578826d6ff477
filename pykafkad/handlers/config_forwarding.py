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

from pykafkad.dispatch import RequestContext
from pykafkad.handlers.admin_configs import (
    BROKER,
    TOPIC,
    handle_alter_configs,
    handle_incremental_alter_configs,
)
from wire.framing import RequestHeader, encode_request

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
            if checked.responses[0].error_code:
                answers[i] = checked.responses[0]
                continue
            forwarded.append(i)
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
