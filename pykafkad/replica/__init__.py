"""The replica layer: each partition's leadership, replicas, ISR and high watermark
(``Partition``) and the one place handlers reach partitions through (``ReplicaManager``)."""

from pykafkad.replica.manager import LocalChanges, ReplicaManager
from pykafkad.replica.partition import AlterPartitionResult, Partition, PartitionRegistration

__all__ = [
    "AlterPartitionResult", "LocalChanges", "Partition", "PartitionRegistration", "ReplicaManager",
]
