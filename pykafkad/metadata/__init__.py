"""The KRaft metadata layer: Kafka's metadata records framed as Kafka frames them, the immutable
MetadataImage and the MetadataDelta that replays records onto it, snapshots, and the storage
files ``kafka-storage format`` writes (meta.properties and the bootstrap snapshot).

The names below load with their module on first use: a process that needs one file of this
package (the launcher needs meta.properties' name) does not import the whole layer."""

from __future__ import annotations

import importlib

#: name -> the module of this package that defines it
_EXPORTS = {
    **dict.fromkeys(("Batch", "build_metadata_batch", "decode_batches"), "batches"),
    **dict.fromkeys(("LocalReplicaChanges", "MetadataDelta", "MetadataReplayError",
                     "PartitionInfo"), "delta"),
    **dict.fromkeys(("EMPTY_IMAGE", "BrokerRegistration", "ControllerRegistration", "Endpoint",
                     "FeaturesImage", "MetadataImage", "TopicImage", "TopicsImage"), "image"),
    "MetadataLoader": "loader",
    **dict.fromkeys(("NO_LEADER", "NO_LEADER_CHANGE", "PartitionRegistration"), "partition"),
    **dict.fromkeys(("MetaProperties", "MetaPropertiesError", "check_formatted"), "properties"),
    **dict.fromkeys(("MetadataParseError", "decode_record", "encode_record"), "serde"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
