"""DescribeClientQuotas (48) and AlterClientQuotas (49): the quotas ``kafka-configs
--entity-type users/clients/ips`` shows and sets.

A single node keeps them in its own table (pykafkad/quotas); a KRaft broker forwards
AlterClientQuotas to the active controller, which writes ClientQuotaRecords, and describes
from its metadata image, as Kafka's KafkaApis does.
"""

from __future__ import annotations

from pykafkad.dispatch import CONTROLLER, RequestContext, handles
from pykafkad.quotas.broker_quotas import broker_quotas
from pykafkad.quotas.table import alter_changes, describe


@handles(48, 0, 1)
async def handle_describe_client_quotas(ctx: RequestContext, req):
    """Versions 0-1 (v1: flexible)."""
    return describe(broker_quotas(ctx.broker).quotas, req)


@handles(49, 0, 1)
async def handle_alter_client_quotas(ctx: RequestContext, req):
    """Versions 0-1 (v1: flexible); entries are validated and applied one by one, each with
    its own error."""
    response, changes = alter_changes(req)
    broker_quotas(ctx.broker).apply(changes)
    return response


@handles(49, 0, 1, listeners=CONTROLLER)
async def handle_controller_alter_client_quotas(ctx: RequestContext, req):
    """Versions 0-1 on the controller: ClientQuotaRecords for the valid entries."""
    from pykafkad.handlers.controller_apis import _submit

    return await _submit(ctx, req)
