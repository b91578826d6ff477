"""Kafka's FeatureControlManager, the part the controller's decisions depend on: finalized
feature levels replayed from FeatureLevelRecords (metadata.version, ELR, ...)."""

from __future__ import annotations

from wire.metadata import FeatureLevelRecord

METADATA_VERSION = "metadata.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"

# Kafka 4.4.0's bootstrap levels (what `kafka-storage format` writes by default).
KAFKA_44_DEFAULT_FEATURES = {
    METADATA_VERSION: 33,
    "group.version": 1,
    "streams.version": 1,
    "transaction.version": 2,
    ELIGIBLE_LEADER_REPLICAS_VERSION: 1,
    "share.version": 2,
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
    def bootstrap_records(levels: dict[str, int] | None = None) -> list[FeatureLevelRecord]:
        """The FeatureLevelRecords a freshly formatted 4.4.0 cluster starts with."""
        levels = KAFKA_44_DEFAULT_FEATURES if levels is None else levels
        return [FeatureLevelRecord(name=n, feature_level=v) for n, v in levels.items()]
