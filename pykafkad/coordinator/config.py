"""The group coordinator's settings, taken from the broker configs of the same names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Kafka's GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS (not configurable)
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


@dataclass(frozen=True)
class GroupCoordinatorConfig:
    initial_rebalance_delay_ms: int = 3000
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    max_group_size: int = 2**31 - 1
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS
    offsets_topic_num_partitions: int = 50
    offsets_topic_segment_bytes: int = 104_857_600
    offsets_topic_compression_codec: int = 0
    offset_metadata_max_bytes: int = 4096
    offsets_retention_ms: int = 10080 * 60 * 1000
    offsets_retention_check_interval_ms: int = 600_000

    @classmethod
    def from_broker(cls, config: Mapping[str, Any]) -> GroupCoordinatorConfig:
        return cls(
            initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
            min_session_timeout_ms=config["group.min.session.timeout.ms"],
            max_session_timeout_ms=config["group.max.session.timeout.ms"],
            max_group_size=config["group.max.size"],
            offsets_topic_num_partitions=config["offsets.topic.num.partitions"],
            offsets_topic_segment_bytes=config["offsets.topic.segment.bytes"],
            offsets_topic_compression_codec=config["offsets.topic.compression.codec"],
            offset_metadata_max_bytes=config["offset.metadata.max.bytes"],
            offsets_retention_ms=config["offsets.retention.minutes"] * 60 * 1000,
            offsets_retention_check_interval_ms=config["offsets.retention.check.interval.ms"],
        )
