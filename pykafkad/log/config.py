"""Per-partition log settings, with Kafka's topic-config meanings and defaults.

Field names are Kafka's topic config names with ``.`` replaced by ``_`` (``segment.bytes`` ->
``segment_bytes``). The broker builds one from resolved topic configs; ``from_topic_configs``
does that for a plain ``{name: value}`` mapping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

INDEX_ENTRY_SIZE = 8
TIME_INDEX_ENTRY_SIZE = 12


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    #: -1 keeps data forever
    retention_ms: int = 604800000
    #: -1 means no size limit
    retention_bytes: int = -1
    index_interval_bytes: int = 4096
    segment_index_bytes: int = 10485760
    max_message_bytes: int = 1048588
    #: "CreateTime" or "LogAppendTime"
    message_timestamp_type: str = "CreateTime"
    #: "delete", "compact" or "compact,delete"
    cleanup_policy: str = "delete"
    #: compacted topics: how long a tombstone (and an empty transaction's marker) survives
    #: after the cleaner first saw it (the batch's delete horizon)
    delete_retention_ms: int = 86400000
    #: compacted topics: records younger than this are never cleaned
    min_compaction_lag_ms: int = 0
    #: compacted topics: records older than this make the log cleanable whatever its dirty ratio
    max_compaction_lag_ms: int = 9223372036854775807
    #: compacted topics: the share of dirty bytes above which the cleaner cleans the log
    min_cleanable_dirty_ratio: float = 0.5
    #: accepted for fidelity; files of deleted segments are unlinked at once (see manager docs)
    file_delete_delay_ms: int = 60000
    #: accepted and ignored, as Kafka's defaults effectively do (flushing is left to the OS)
    flush_messages: int = 9223372036854775807
    flush_ms: int = 9223372036854775807
    #: accepted; segments are never preallocated (so files are always exactly their data)
    preallocate: bool = False

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"

    @property
    def delete_enabled(self) -> bool:
        """Whether retention (time/size) applies: cleanup.policy contains "delete"."""
        return "delete" in _policies(self.cleanup_policy)

    @property
    def compact_enabled(self) -> bool:
        return "compact" in _policies(self.cleanup_policy)

    @property
    def max_index_entries(self) -> int:
        return self.segment_index_bytes // INDEX_ENTRY_SIZE

    @property
    def max_time_index_entries(self) -> int:
        return self.segment_index_bytes // TIME_INDEX_ENTRY_SIZE

    @classmethod
    def from_topic_configs(cls, configs: Mapping[str, Any]) -> LogConfig:
        """From Kafka property names (``{"retention.ms": "1000"}``); unknown names are ignored."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            name = f.name.replace("_", ".")
            if name not in configs:
                continue
            raw = configs[name]
            if f.name == "cleanup_policy" and isinstance(raw, (list, tuple)):
                values[f.name] = ",".join(raw)
            elif f.type in ("int", int):
                values[f.name] = int(raw)
            elif f.type in ("float", float):
                values[f.name] = float(raw)
            elif f.type in ("bool", bool):
                values[f.name] = raw if isinstance(raw, bool) else str(raw).lower() == "true"
            else:
                values[f.name] = str(raw)
        return cls(**values)


def _policies(policy: str) -> set[str]:
    return {p.strip() for p in policy.split(",") if p.strip()}
