"""Authorized-operations bit fields (KIP-430) as Kafka answers them without an authorizer:
every operation valid for the resource type (AclEntry.supportedOperations), each as
``1 << AclOperation code``; and the marker for "not requested"."""

from __future__ import annotations

#: Kafka's "authorized operations not requested" marker (Integer.MIN_VALUE)
OMITTED = -2147483648

READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12


def _bits(*operations: int) -> int:
    return sum(1 << op for op in operations)


TOPIC = _bits(READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS)
GROUP = _bits(READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS)
CLUSTER = _bits(CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
                IDEMPOTENT_WRITE)

_ALL_BY_TYPE = {2: TOPIC, 3: GROUP, 4: CLUSTER}


def of(ctx, resource_type: int, name: str) -> int:
    """The request principal's bit field for a resource: every supported operation without an
    authorizer; with one, those the ACLs allow, and 0 when DESCRIBE itself is denied (Kafka
    computes them only for a resource the principal may describe)."""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return _ALL_BY_TYPE[resource_type]
    if not authorizer.authorize(ctx.principal_name, ctx.client_host, DESCRIBE, resource_type,
                                name):
        return 0
    return authorizer.authorized_operations(ctx.principal_name, ctx.client_host, resource_type,
                                            name)
