"""Every topic-level config of Kafka 4.4 (LogConfig), and its broker-level synonyms.

Removed in Kafka 4.0 and therefore unknown here, as there: ``message.format.version``,
``message.timestamp.difference.max.ms`` and ``message.downconversion.enable`` (the last is kept
only as a deprecated constant in Kafka's client API; the broker rejects it).
"""

from __future__ import annotations

from pykafkad.config.types import (
    ConfigDef,
    ConfigType,
    GzipLevel,
    Importance,
    ThrottledReplicaList,
    ValidList,
    ValidString,
    at_least,
    between,
    define,
    names_of,
)

BOOLEAN, STRING, INT, LONG, DOUBLE, LIST = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.LIST,
)
MEDIUM = Importance.MEDIUM
LONG_MAX = 2**63 - 1
#: Kafka's largest array size (Integer.MAX_VALUE - 8), the default and cap of
#: max.decompressed.message.bytes
MAX_DECOMPRESSED = 2**31 - 1 - 8

#: BrokerCompressionType names, in Kafka's order.
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
CLEANUP_POLICIES = ("compact", "delete")

_HOUR_MS = 60 * 60 * 1000
_MINUTE_MS = 60 * 1000

#: topic config -> its broker configs, highest priority first, each with the factor that turns
#: the broker value into the topic's unit (ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS).
TOPIC_BROKER_SYNONYMS: dict[str, tuple[tuple[str, int], ...]] = {
    "segment.bytes": (("log.segment.bytes", 1),),
    "segment.ms": (("log.roll.ms", 1), ("log.roll.hours", _HOUR_MS)),
    "segment.jitter.ms": (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", _HOUR_MS)),
    "segment.index.bytes": (("log.index.size.max.bytes", 1),),
    "flush.messages": (("log.flush.interval.messages", 1),),
    "flush.ms": (("log.flush.interval.ms", 1), ("log.flush.scheduler.interval.ms", 1)),
    "retention.bytes": (("log.retention.bytes", 1),),
    "retention.ms": (
        ("log.retention.ms", 1),
        ("log.retention.minutes", _MINUTE_MS),
        ("log.retention.hours", _HOUR_MS),
    ),
    "max.message.bytes": (("message.max.bytes", 1),),
    "index.interval.bytes": (("log.index.interval.bytes", 1),),
    "delete.retention.ms": (("log.cleaner.delete.retention.ms", 1),),
    "min.compaction.lag.ms": (("log.cleaner.min.compaction.lag.ms", 1),),
    "max.compaction.lag.ms": (("log.cleaner.max.compaction.lag.ms", 1),),
    "file.delete.delay.ms": (("log.segment.delete.delay.ms", 1),),
    "min.cleanable.dirty.ratio": (("log.cleaner.min.cleanable.ratio", 1),),
    "cleanup.policy": (("log.cleanup.policy", 1),),
    "unclean.leader.election.enable": (("unclean.leader.election.enable", 1),),
    "min.insync.replicas": (("min.insync.replicas", 1),),
    "compression.type": (("compression.type", 1),),
    "compression.gzip.level": (("compression.gzip.level", 1),),
    "compression.lz4.level": (("compression.lz4.level", 1),),
    "compression.zstd.level": (("compression.zstd.level", 1),),
    "preallocate": (("log.preallocate", 1),),
    "message.timestamp.type": (("log.message.timestamp.type", 1),),
    "message.timestamp.before.max.ms": (("log.message.timestamp.before.max.ms", 1),),
    "message.timestamp.after.max.ms": (("log.message.timestamp.after.max.ms", 1),),
    "local.retention.ms": (("log.local.retention.ms", 1),),
    "local.retention.bytes": (("log.local.retention.bytes", 1),),
    "remote.copy.lag.ms": (("log.remote.copy.lag.ms", 1),),
    "remote.copy.lag.bytes": (("log.remote.copy.lag.bytes", 1),),
    "max.decompressed.message.bytes": (("max.decompressed.message.bytes", 1),),
}

#: Kafka's broker-side synonym groups (DynamicBrokerConfig.brokerConfigSynonyms): describing any
#: member lists the whole group, highest priority first.
BROKER_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)

TOPIC_CONFIGS: dict[str, ConfigDef] = names_of(
    [
        define("segment.bytes", INT, 1073741824, at_least(1048576), MEDIUM,
               "Size of a log segment file; retention and cleaning work a segment at a time."),
        define("segment.ms", LONG, 604800000, at_least(1), MEDIUM,
               "Time after which the active segment is rolled even if not full."),
        define("segment.jitter.ms", LONG, 0, at_least(0), MEDIUM,
               "Maximum random jitter subtracted from the scheduled segment roll time."),
        define("segment.index.bytes", INT, 10485760, at_least(4), MEDIUM,
               "Size of the offset index preallocated for each segment."),
        define("flush.messages", LONG, LONG_MAX, at_least(1), MEDIUM,
               "Messages written before the log is fsynced."),
        define("flush.ms", LONG, LONG_MAX, at_least(0), MEDIUM,
               "Time after which the log is fsynced."),
        define("retention.bytes", LONG, -1, None, MEDIUM,
               "Maximum partition size before old segments are deleted; -1 for no limit."),
        define("retention.ms", LONG, 604800000, at_least(-1), MEDIUM,
               "Time a segment is kept before deletion; -1 for no time limit."),
        define("max.message.bytes", INT, 1048588, at_least(0), MEDIUM,
               "Largest record batch size allowed (after compression)."),
        define("index.interval.bytes", INT, 4096, at_least(0), MEDIUM,
               "Bytes between offset index entries."),
        define("delete.retention.ms", LONG, 86400000, at_least(0), MEDIUM,
               "Time tombstones are kept in compacted topics."),
        define("min.compaction.lag.ms", LONG, 0, at_least(0), MEDIUM,
               "Minimum time a message stays uncompacted."),
        define("max.compaction.lag.ms", LONG, LONG_MAX, at_least(1), MEDIUM,
               "Maximum time a message stays ineligible for compaction."),
        define("file.delete.delay.ms", LONG, 60000, at_least(0), MEDIUM,
               "Time to wait before deleting a file from the filesystem."),
        define("min.cleanable.dirty.ratio", DOUBLE, 0.5, between(0, 1), MEDIUM,
               "Dirty ratio above which the log compactor cleans a log."),
        define("cleanup.policy", LIST, "delete", ValidList(CLEANUP_POLICIES), MEDIUM,
               "Retention policy for old segments: delete, compact, or both."),
        define("unclean.leader.election.enable", BOOLEAN, False, None, MEDIUM,
               "Whether replicas outside the ISR may become leader as a last resort."),
        define("min.insync.replicas", INT, 1, at_least(1), MEDIUM,
               "Minimum in-sync replicas that must acknowledge a write with acks=all."),
        define("compression.type", STRING, "producer", ValidString(COMPRESSION_TYPES), MEDIUM,
               "Final compression of the topic's data; 'producer' keeps the producer's codec."),
        define("compression.gzip.level", INT, -1, GzipLevel(), MEDIUM,
               "Compression level used when compression.type is gzip."),
        define("compression.lz4.level", INT, 9, between(1, 17), MEDIUM,
               "Compression level used when compression.type is lz4."),
        define("compression.zstd.level", INT, 3, between(-131072, 22), MEDIUM,
               "Compression level used when compression.type is zstd."),
        define("preallocate", BOOLEAN, False, None, MEDIUM,
               "Whether segment files are preallocated on disk."),
        define("message.timestamp.type", STRING, "CreateTime", ValidString(TIMESTAMP_TYPES),
               MEDIUM, "Whether record timestamps are CreateTime or LogAppendTime."),
        define("message.timestamp.before.max.ms", LONG, LONG_MAX, at_least(0), MEDIUM,
               "How far a CreateTime timestamp may lie before the broker's time."),
        define("message.timestamp.after.max.ms", LONG, 3600000, at_least(0), MEDIUM,
               "How far a CreateTime timestamp may lie after the broker's time."),
        define("leader.replication.throttled.replicas", LIST, "", ThrottledReplicaList(), MEDIUM,
               "Replicas throttled on the leader side: partitionId:brokerId, or '*'."),
        define("follower.replication.throttled.replicas", LIST, "", ThrottledReplicaList(),
               MEDIUM, "Replicas throttled on the follower side: partitionId:brokerId, or '*'."),
        define("remote.storage.enable", BOOLEAN, False, None, MEDIUM,
               "Enables tiered storage for the topic."),
        define("local.retention.ms", LONG, -2, at_least(-2), MEDIUM,
               "Time local segments are kept with tiered storage; -2 means retention.ms."),
        define("local.retention.bytes", LONG, -2, at_least(-2), MEDIUM,
               "Local partition size kept with tiered storage; -2 means retention.bytes."),
        define("remote.log.copy.disable", BOOLEAN, False, None, MEDIUM,
               "Makes tiered data read-only: no more uploads."),
        define("remote.log.delete.on.disable", BOOLEAN, False, None, MEDIUM,
               "Deletes tiered data when tiered storage is disabled on the topic."),
        define("remote.copy.lag.ms", LONG, 0, at_least(-1), MEDIUM,
               "How long a segment waits before it is copied to tiered storage; -1 means "
               "until local retention would delete it."),
        define("remote.copy.lag.bytes", LONG, -1, at_least(-1), MEDIUM,
               "How many bytes may wait locally before segments are copied to tiered storage; "
               "-1 means until local retention would delete them."),
        define("max.decompressed.message.bytes", INT, MAX_DECOMPRESSED, between(1, MAX_DECOMPRESSED),
               MEDIUM, "Largest declared body of one record in a compressed batch: a Produce "
               "with a larger one gets INVALID_RECORD (uncompressed batches are bounded by "
               "max.message.bytes alone)."),
        define("errors.deadletterqueue.group.enable", BOOLEAN, False, None, MEDIUM,
               "Whether share groups may use this topic as their dead-letter queue."),
        define("internal.segment.bytes", INT, None, None, MEDIUM,
               "Segment size overriding segment.bytes, for tests only (no minimum).",
               internal=True),
    ]
)  # fmt: skip

_NOT_THROTTLED = "replication is not throttled"
_NO_TIERED = "no tiered storage"

#: Topic configs pykafkad accepts (validates, describes) but does not act on, with the reason;
#: every other topic config is applied.  ``pykafkad --help-config`` and the README list them.
NOT_APPLIED_TOPIC_CONFIGS: dict[str, str] = {
    "flush.messages": "flushing is left to the OS, as Kafka's defaults do",
    "flush.ms": "flushing is left to the OS, as Kafka's defaults do",
    "file.delete.delay.ms": "files of deleted segments are removed at once",
    "preallocate": "segment files are never preallocated",
    "leader.replication.throttled.replicas": _NOT_THROTTLED,
    "follower.replication.throttled.replicas": _NOT_THROTTLED,
    "remote.storage.enable": _NO_TIERED,
    "local.retention.ms": _NO_TIERED,
    "local.retention.bytes": _NO_TIERED,
    "remote.log.copy.disable": _NO_TIERED,
    "remote.log.delete.on.disable": _NO_TIERED,
    "remote.copy.lag.ms": _NO_TIERED,
    "remote.copy.lag.bytes": _NO_TIERED,
    "errors.deadletterqueue.group.enable": "share and streams groups are not served",
}
