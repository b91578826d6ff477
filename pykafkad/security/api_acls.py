"""The one table of which operation on which resource each API needs (Kafka 4.4's KafkaApis,
ControllerApis and AuthHelper), and the helper handlers check it through.

Every API a listener serves has a row (tests/security/test_api_acls.py walks the registry),
so a new API cannot be served without saying what it needs.  A row lists its checks in the
order Kafka makes them; ``CLUSTER_ONLY`` rows are checked against the one cluster resource.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.dispatch import CONTROLLER
from pykafkad.security.authorizer import (
    ALTER,
    ALTER_CONFIGS,
    CLUSTER,
    CLUSTER_ACTION,
    CLUSTER_NAME,
    CREATE,
    DELETE,
    DESCRIBE,
    DESCRIBE_CONFIGS,
    GROUP,
    IDEMPOTENT_WRITE,
    READ,
    TOPIC,
    TRANSACTIONAL_ID,
    WRITE,
)


@dataclass(frozen=True)
class Check:
    resource_type: int
    operation: int
    #: when Kafka makes it (empty: always)
    when: str = ""


def _c(rt: int, op: int, when: str = "") -> Check:
    return Check(rt, op, when)


#: api key -> the checks Kafka makes for it (empty tuple: none, e.g. ApiVersions)
API_ACLS: dict[int, tuple[Check, ...]] = {
    0: (_c(TRANSACTIONAL_ID, WRITE, "transactional"), _c(TOPIC, WRITE)),  # Produce
    1: (_c(CLUSTER, CLUSTER_ACTION, "follower"), _c(TOPIC, READ, "consumer")),  # Fetch
    2: (_c(TOPIC, DESCRIBE),),  # ListOffsets
    3: (_c(TOPIC, DESCRIBE), _c(CLUSTER, CREATE, "auto-create"),
        _c(TOPIC, CREATE, "auto-create without CREATE on the cluster")),  # Metadata
    8: (_c(GROUP, READ), _c(TOPIC, READ)),  # OffsetCommit
    9: (_c(GROUP, DESCRIBE), _c(TOPIC, DESCRIBE)),  # OffsetFetch
    10: (_c(GROUP, DESCRIBE, "group key"), _c(TRANSACTIONAL_ID, DESCRIBE, "txn key"),
         _c(CLUSTER, CLUSTER_ACTION, "share key")),
    11: (_c(GROUP, READ),),  # JoinGroup
    12: (_c(GROUP, READ),),  # Heartbeat
    13: (_c(GROUP, READ),),  # LeaveGroup
    14: (_c(GROUP, READ),),  # SyncGroup
    15: (_c(GROUP, DESCRIBE),),  # DescribeGroups
    16: (_c(CLUSTER, DESCRIBE, "else groups filtered by DESCRIBE"), _c(GROUP, DESCRIBE)),
    18: (),  # ApiVersions
    19: (_c(CLUSTER, CREATE), _c(TOPIC, CREATE, "without CREATE on the cluster"),
         _c(TOPIC, DESCRIBE_CONFIGS)),  # CreateTopics
    20: (_c(CLUSTER, DELETE, "covers every topic"), _c(TOPIC, DESCRIBE),
         _c(TOPIC, DELETE)),  # DeleteTopics
    21: (_c(TOPIC, DELETE),),  # DeleteRecords
    22: (_c(TRANSACTIONAL_ID, WRITE, "transactional"),
         _c(CLUSTER, IDEMPOTENT_WRITE, "idempotent, else WRITE on some topic")),
    23: (_c(CLUSTER, CLUSTER_ACTION, "follower"), _c(TOPIC, DESCRIBE)),
    24: (_c(TRANSACTIONAL_ID, WRITE, "v3-"), _c(TOPIC, WRITE, "v3-"),
         _c(CLUSTER, CLUSTER_ACTION, "v4+ verify-only batches")),  # AddPartitionsToTxn
    25: (_c(TRANSACTIONAL_ID, WRITE), _c(GROUP, READ)),  # AddOffsetsToTxn
    26: (_c(TRANSACTIONAL_ID, WRITE),),  # EndTxn
    27: (_c(CLUSTER, CLUSTER_ACTION),),  # WriteTxnMarkers
    28: (_c(TRANSACTIONAL_ID, WRITE), _c(GROUP, READ), _c(TOPIC, READ)),  # TxnOffsetCommit
    29: (_c(CLUSTER, DESCRIBE),),  # DescribeAcls
    30: (_c(CLUSTER, ALTER),),  # CreateAcls
    31: (_c(CLUSTER, ALTER),),  # DeleteAcls
    32: (_c(CLUSTER, DESCRIBE_CONFIGS, "broker, broker logger"), _c(TOPIC, DESCRIBE_CONFIGS),
         _c(GROUP, DESCRIBE_CONFIGS)),  # DescribeConfigs
    33: (_c(CLUSTER, ALTER_CONFIGS, "broker"), _c(TOPIC, ALTER_CONFIGS),
         _c(GROUP, ALTER_CONFIGS)),  # AlterConfigs
    34: (_c(CLUSTER, ALTER),),  # AlterReplicaLogDirs
    35: (_c(CLUSTER, DESCRIBE),),  # DescribeLogDirs
    37: (_c(TOPIC, ALTER),),  # CreatePartitions
    42: (_c(GROUP, DELETE),),  # DeleteGroups
    43: (_c(CLUSTER, ALTER),),  # ElectLeaders
    44: (_c(CLUSTER, ALTER_CONFIGS, "broker"), _c(TOPIC, ALTER_CONFIGS),
         _c(GROUP, ALTER_CONFIGS)),  # IncrementalAlterConfigs
    45: (_c(CLUSTER, ALTER),),  # AlterPartitionReassignments
    46: (_c(CLUSTER, DESCRIBE),),  # ListPartitionReassignments
    47: (_c(GROUP, DELETE), _c(TOPIC, READ)),  # OffsetDelete
    52: (_c(CLUSTER, CLUSTER_ACTION),),  # Vote
    53: (_c(CLUSTER, CLUSTER_ACTION),),  # BeginQuorumEpoch
    54: (_c(CLUSTER, CLUSTER_ACTION),),  # EndQuorumEpoch
    55: (_c(CLUSTER, DESCRIBE),),  # DescribeQuorum
    56: (_c(CLUSTER, CLUSTER_ACTION),),  # AlterPartition
    57: (_c(CLUSTER, ALTER),),  # UpdateFeatures
    58: (_c(CLUSTER, CLUSTER_ACTION),),  # Envelope
    59: (_c(CLUSTER, CLUSTER_ACTION),),  # FetchSnapshot
    60: (_c(CLUSTER, DESCRIBE, "authorized operations only"),),  # DescribeCluster
    61: (_c(TOPIC, READ),),  # DescribeProducers
    62: (_c(CLUSTER, CLUSTER_ACTION),),  # BrokerRegistration
    63: (_c(CLUSTER, CLUSTER_ACTION),),  # BrokerHeartbeat
    64: (_c(CLUSTER, ALTER),),  # UnregisterBroker
    65: (_c(TRANSACTIONAL_ID, DESCRIBE), _c(TOPIC, DESCRIBE)),  # DescribeTransactions
    66: (_c(TRANSACTIONAL_ID, DESCRIBE, "filters the answer"),),  # ListTransactions
    67: (_c(CLUSTER, CLUSTER_ACTION),),  # AllocateProducerIds
    70: (_c(CLUSTER, CLUSTER_ACTION),),  # ControllerRegistration
    74: (_c(CLUSTER, DESCRIBE_CONFIGS),),  # ListConfigResources
    75: (_c(TOPIC, DESCRIBE),),  # DescribeTopicPartitions
    17: (),  # SaslHandshake (before authentication)
    36: (),  # SaslAuthenticate (before authentication)
    48: (_c(CLUSTER, DESCRIBE_CONFIGS),),  # DescribeClientQuotas
    49: (_c(CLUSTER, ALTER_CONFIGS),),  # AlterClientQuotas
    50: (_c(CLUSTER, DESCRIBE),),  # DescribeUserScramCredentials
    51: (_c(CLUSTER, ALTER),),  # AlterUserScramCredentials
    68: (_c(GROUP, READ),),  # ConsumerGroupHeartbeat
    69: (_c(GROUP, DESCRIBE),),  # ConsumerGroupDescribe (denied groups listed first)
    73: (_c(CLUSTER, CLUSTER_ACTION),),  # AssignReplicasToDirs
    76: (_c(GROUP, READ),),  # ShareGroupHeartbeat
    77: (_c(GROUP, DESCRIBE),),  # ShareGroupDescribe (denied groups listed first)
    78: (_c(GROUP, READ), _c(TOPIC, READ)),  # ShareFetch
    79: (_c(GROUP, READ), _c(TOPIC, READ)),  # ShareAcknowledge
    80: (_c(CLUSTER, ALTER),),  # AddRaftVoter
    81: (_c(CLUSTER, ALTER),),  # RemoveRaftVoter
    82: (_c(CLUSTER, CLUSTER_ACTION),),  # UpdateRaftVoter
    83: (_c(CLUSTER, CLUSTER_ACTION),),  # InitializeShareGroupState
    84: (_c(CLUSTER, CLUSTER_ACTION),),  # ReadShareGroupState
    85: (_c(CLUSTER, CLUSTER_ACTION),),  # WriteShareGroupState
    86: (_c(CLUSTER, CLUSTER_ACTION),),  # DeleteShareGroupState
    87: (_c(CLUSTER, CLUSTER_ACTION),),  # ReadShareGroupStateSummary
    88: (_c(GROUP, READ),),  # StreamsGroupHeartbeat
    89: (_c(GROUP, DESCRIBE),),  # StreamsGroupDescribe (denied groups listed first)
    90: (_c(GROUP, DESCRIBE), _c(TOPIC, DESCRIBE)),  # DescribeShareGroupOffsets
    91: (_c(GROUP, READ), _c(TOPIC, READ)),  # AlterShareGroupOffsets
    92: (_c(GROUP, DELETE), _c(TOPIC, READ)),  # DeleteShareGroupOffsets
}


#: the APIs whose one check, an operation on the cluster, is made before the handler runs
#: (Kafka's AuthHelper.authorizeClusterOperation), answered with the API's error response.
#: The ACL and SCRAM APIs check in their handlers.
CLUSTER_GATED = frozenset({27, 34, 35, 43, 45, 46, 48, 49, 52, 53, 54, 55, 56, 57, 58, 59, 62, 63,
                           64, 67, 70, 73, 74, 80, 81, 82, 83, 84, 85, 86, 87})


#: the CLUSTER_GATED APIs a KRaft broker forwards unchecked: the controller checks them, with
#: the client's principal and address the Envelope carries (Kafka's ControllerApis)
CHECKED_BY_THE_CONTROLLER = frozenset({43, 45, 46, 49, 55, 57, 64, 80, 81})


def cluster_gate_allows(ctx, *, forwarded: bool = False) -> bool:
    """Whether a CLUSTER_GATED request may go on (always, for other APIs, on a node without an
    authorizer, on a KRaft broker that forwards it, and on the single node's internal
    controller listener, which only hears the node itself, except for the client requests a
    broker forwarded there: ``forwarded``)."""
    key = ctx.header.api_key
    if key not in CLUSTER_GATED or getattr(ctx.broker, "authorizer", None) is None:
        return True
    if ctx.listener_kind is not CONTROLLER and key in CHECKED_BY_THE_CONTROLLER \
            and getattr(ctx.broker, "forwarding", None) is not None:
        return True
    if not forwarded and ctx.listener_kind is CONTROLLER \
            and getattr(ctx.broker, "internal_controller_listener", False):
        return True
    return all(authorized(ctx, c.resource_type, c.operation) for c in API_ACLS[key])


def authorized(ctx, resource_type: int, operation: int, name: str = CLUSTER_NAME) -> bool:
    """Whether the request's principal, from its host, may do ``operation`` on the resource;
    always True on a node without an authorizer.  The operation must be one the API's row
    names, so the table stays the one place that says what an API needs."""
    authorizer = getattr(ctx.broker, "authorizer", None)
    if authorizer is None:
        return True
    assert Check(resource_type, operation) in _BARE.get(ctx.header.api_key, ()), (
        f"API {ctx.header.api_key} checks an operation its API_ACLS row does not name")
    return authorizer.authorize(ctx.principal_name, ctx.client_host, operation,
                                resource_type, name)


def split_by_authorization(ctx, resource_type: int, operation: int,
                           names) -> tuple[list[str], list[str]]:
    """(denied, allowed) names, in request order: the describe APIs of the newer group kinds
    answer GROUP_AUTHORIZATION_FAILED for the denied ones, listed first, as Kafka does."""
    denied, allowed = [], []
    for name in names:
        (allowed if authorized(ctx, resource_type, operation, name) else denied).append(name)
    return denied, allowed


_BARE = {k: {Check(c.resource_type, c.operation) for c in v} for k, v in API_ACLS.items()}
