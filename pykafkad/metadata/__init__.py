"""The KRaft metadata layer: Kafka's metadata records framed as Kafka frames them, the immutable
MetadataImage and the MetadataDelta that replays records onto it, snapshots, and the storage
files ``kafka-storage format`` writes (meta.properties and the bootstrap snapshot)."""

from pykafkad.metadata.batches import Batch, build_metadata_batch, decode_batches
from pykafkad.metadata.delta import (
    LocalReplicaChanges,
    MetadataDelta,
    MetadataReplayError,
    PartitionInfo,
)
from pykafkad.metadata.image import (
    EMPTY_IMAGE,
    BrokerRegistration,
    ControllerRegistration,
    Endpoint,
    FeaturesImage,
    MetadataImage,
    TopicImage,
    TopicsImage,
)
from pykafkad.metadata.loader import MetadataLoader
from pykafkad.metadata.partition import NO_LEADER, NO_LEADER_CHANGE, PartitionRegistration
from pykafkad.metadata.properties import MetaProperties, MetaPropertiesError, check_formatted
from pykafkad.metadata.serde import MetadataParseError, decode_record, encode_record

__all__ = [
    "EMPTY_IMAGE", "NO_LEADER", "NO_LEADER_CHANGE", "Batch", "BrokerRegistration",
    "ControllerRegistration", "Endpoint", "FeaturesImage", "LocalReplicaChanges",
    "MetaProperties", "MetaPropertiesError", "MetadataDelta", "MetadataImage", "MetadataLoader",
    "MetadataParseError", "MetadataReplayError", "PartitionInfo", "PartitionRegistration",
    "TopicImage", "TopicsImage", "build_metadata_batch", "check_formatted", "decode_batches",
    "decode_record", "encode_record",
]
