"""Broker features the scenarios depend on, read from what the broker advertises (ApiVersions).

A feature is present when every API it needs is advertised, so the same check works against
pykafkad (which advertises exactly what it implements) and Apache Kafka.
"""

from __future__ import annotations

from compat.wire_client import advertised_apis

#: feature -> {api key: name}
FEATURES: dict[str, dict[int, str]] = {
    "groups": {
        8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup",
        12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
    },
    "group-admin": {15: "DescribeGroups", 16: "ListGroups", 42: "DeleteGroups"},
    "transactions": {
        10: "FindCoordinator", 22: "InitProducerId", 24: "AddPartitionsToTxn",
        25: "AddOffsetsToTxn", 26: "EndTxn", 28: "TxnOffsetCommit",
    },
    "delete-records": {21: "DeleteRecords"},
    "consumer-groups": {68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe"},
    "streams-groups": {88: "StreamsGroupHeartbeat", 89: "StreamsGroupDescribe"},
    "share-groups": {
        76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe", 78: "ShareFetch",
        79: "ShareAcknowledge",
    },
    "describe-topic-partitions": {75: "DescribeTopicPartitions"},
}


def missing(advertised: dict[int, tuple[int, int]], feature: str) -> list[str]:
    """Names of the APIs ``feature`` needs that the broker does not advertise."""
    return [f"{name} ({key})" for key, name in FEATURES[feature].items() if key not in advertised]


def supports(bootstrap: str, *features: str) -> bool:
    apis = advertised_apis(bootstrap)
    return all(not missing(apis, f) for f in features)
