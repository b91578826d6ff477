"""Kafka's FeatureControlManager, the part the controller's decisions depend on: finalized
feature levels replayed from FeatureLevelRecords (metadata.version, ELR, ...)."""

from __future__ import annotations

from wire.metadata import (
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
)

METADATA_VERSION = "metadata.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"

# Kafka 4.4.0's bootstrap levels (what `kafka-storage format` writes by default), in the
# order its first metadata batch lists them.
KAFKA_44_DEFAULT_FEATURES = {
    METADATA_VERSION: 33,
    ELIGIBLE_LEADER_REPLICAS_VERSION: 1,
    "group.version": 1,
    "share.version": 2,
    "streams.version": 1,
    "transaction.version": 2,
}

IBP_3_7_IV2 = 17   # the first metadata.version with directory assignment (JBOD)
IBP_4_3_IV0 = 30   # the first with cordoned log dirs (KIP-1066)


class FeatureControlManager:
    def __init__(self) -> None:
        self.finalized: dict[str, int] = {}

    def replay(self, record: FeatureLevelRecord) -> None:
        if record.feature_level == 0:
            self.finalized.pop(record.name, None)
        else:
            self.finalized[record.name] = record.feature_level

    @property
    def metadata_version(self) -> int:
        return self.finalized.get(METADATA_VERSION, 1)

    @property
    def directory_assignment(self) -> bool:
        return self.metadata_version >= IBP_3_7_IV2

    @property
    def cordoned_log_dirs(self) -> bool:
        return self.metadata_version >= IBP_4_3_IV0

    @property
    def elr_enabled(self) -> bool:
        return self.finalized.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) >= 1

    @staticmethod
    def bootstrap_records(levels: dict[str, int] | None = None, *,
                          min_insync_replicas: int = 1) -> list:
        """The first metadata batch of a freshly formatted 4.4.0 cluster, as Kafka writes it:
        one metadata transaction of the feature levels and, with ELR on, the cluster-wide
        min.insync.replicas (KIP-966 needs it explicit)."""
        levels = KAFKA_44_DEFAULT_FEATURES if levels is None else levels
        records: list = [BeginTransactionRecord(name="Bootstrap records")]
        records += [FeatureLevelRecord(name=n, feature_level=v) for n, v in levels.items()]
        if levels.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) >= 1:
            records.append(ConfigRecord(resource_type=4, resource_name="",
                                        name="min.insync.replicas",
                                        value=str(min_insync_replicas)))
        records.append(EndTransactionRecord())
        return records
