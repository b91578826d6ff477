from __future__ import annotations

from pykafkad.log.config import LogConfig


def test_defaults_are_kafkas():
    c = LogConfig()
    assert c.segment_bytes == 1073741824
    assert c.retention_ms == 604800000 and c.retention_bytes == -1
    assert c.index_interval_bytes == 4096 and c.segment_index_bytes == 10485760
    assert c.max_message_bytes == 1048588
    assert c.message_timestamp_type == "CreateTime" and not c.log_append_time
    assert c.delete_enabled and not c.compact_enabled
    assert c.max_index_entries == 10485760 // 8
    assert c.max_time_index_entries == 10485760 // 12


def test_from_topic_configs():
    c = LogConfig.from_topic_configs(
        {
            "segment.bytes": "1000",
            "retention.ms": -1,
            "cleanup.policy": ["compact", "delete"],
            "message.timestamp.type": "LogAppendTime",
            "preallocate": "true",
            "unrelated.setting": "x",
        }
    )
    assert c.segment_bytes == 1000 and c.retention_ms == -1
    assert c.cleanup_policy == "compact,delete" and c.delete_enabled and c.compact_enabled
    assert c.log_append_time and c.preallocate
    assert c.segment_ms == LogConfig().segment_ms
