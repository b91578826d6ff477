"""The feature ranges a pykafkad controller supports, what its ControllerRegistration tells
the quorum and what its own UpdateFeatures checks against.

A controller only finalizes the group, share, streams and transaction features: the brokers
serve them. So a pykafkad controller supports Kafka 4.4's whole range of those, as Kafka's
controller does, and can run Apache Kafka brokers formatted with Kafka's defaults
(group.version=1, transaction.version=2 ...); UpdateFeatures still refuses a level a registered
broker lacks, so pykafkad brokers are never given a level they do not serve."""

from __future__ import annotations

from pykafkad.features import FEATURES

#: Kafka 4.4's highest level of each feature only brokers act on
BROKER_SIDE_FEATURES_MAX = {
    "group.version": 1,
    "share.version": 2,
    "streams.version": 1,
    "transaction.version": 2,
}


def controller_supported_features() -> list[tuple[str, int, int]]:
    """(name, min, max), in the order Kafka 4.4 lists its features."""
    return [(f.name, f.min_version, max(f.max_version, BROKER_SIDE_FEATURES_MAX.get(f.name, 0)))
            for f in FEATURES]
