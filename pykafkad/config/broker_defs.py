"""The broker configs pykafkad honours or reports, with Kafka 4.4's names, types, defaults and
validators; which of them AlterConfigs may change on a running broker; and the Kafka broker
configs that are accepted but ignored so a stock server.properties loads unchanged.

One deliberate difference: Kafka requires ``process.roles`` and ``node.id``.  Without
``process.roles`` pykafkad is the single node (a one-voter combined KRaft node the start
configures itself, pykafkad/kraft/single_node.py), and ``node.id`` (and its synonym
``broker.id``) defaults to 1; with it, ``node.id`` is required as in Kafka (kraft.py).
"""

from __future__ import annotations

from pykafkad.config.broker_unused import UNUSED_BROKER_CONFIGS
from pykafkad.config.kraft import KRAFT_DEFS
from pykafkad.config.topic_defs import (
    CLEANUP_POLICIES,
    COMPRESSION_TYPES,
    MAX_DECOMPRESSED,
    TIMESTAMP_TYPES,
    TOPIC_BROKER_SYNONYMS,
)
from pykafkad.config.types import (
    DOUBLE_MAX,
    INT_MAX,
    LONG_MAX,
    ConfigDef,
    ConfigType,
    GzipLevel,
    Importance,
    ValidList,
    ValidString,
    at_least,
    between,
    define,
    names_of,
)

BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.SHORT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.LIST,
)
HIGH, MEDIUM, LOW = Importance.HIGH, Importance.MEDIUM, Importance.LOW

DEFAULT_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
REBALANCE_PROTOCOLS = ("classic", "consumer", "share", "streams")

_DEFS = [
    # --- identity, listeners, network
    define("node.id", INT, 1, at_least(0), HIGH,
           "This node's id (Kafka requires it; pykafkad defaults to 1)."),
    define("broker.id", INT, 1, None, HIGH,
           "Synonym of node.id; if both are set they must be equal."),
    define("broker.rack", STRING, None, None, MEDIUM, "Rack of the broker."),
    define("listeners", STRING, "PLAINTEXT://:9092", None, HIGH,
           "Comma-separated listener URIs (NAME://host:port) to bind; empty host = all."),
    define("advertised.listeners", STRING, None, None, HIGH,
           "Listeners published to clients, if different from listeners."),
    define("listener.security.protocol.map", STRING, DEFAULT_PROTOCOL_MAP, None, LOW,
           "Maps listener names to security protocols (NAME:PROTOCOL,...)."),
    define("controller.listener.names", STRING, None, None, HIGH,
           "Listener names used by the KRaft controller; not served to clients."),
    define("num.network.threads", INT, 3, at_least(1), HIGH, "Network threads (accepted)."),
    define("num.io.threads", INT, 8, at_least(1), HIGH, "Request handler threads (accepted)."),
    define("background.threads", INT, 10, at_least(1), HIGH,
           "Background task threads (accepted)."),
    define("num.recovery.threads.per.data.dir", INT, 2, at_least(1), HIGH,
           "Threads per data directory for recovery and shutdown flush (accepted)."),
    define("num.replica.fetchers", INT, 1, at_least(1), HIGH, "Replica fetcher threads."),
    define("socket.send.buffer.bytes", INT, 102400, None, HIGH,
           "SO_SNDBUF of server sockets; -1 for the OS default."),
    define("socket.receive.buffer.bytes", INT, 102400, None, HIGH,
           "SO_RCVBUF of server sockets; -1 for the OS default."),
    define("socket.request.max.bytes", INT, 104857600, at_least(1), HIGH,
           "Largest request size accepted."),
    define("socket.listen.backlog.size", INT, 50, at_least(1), MEDIUM,
           "Listen backlog of server sockets."),
    define("queued.max.requests", INT, 500, at_least(1), HIGH,
           "Requests queued before the network threads stop reading."),
    define("queued.max.request.bytes", LONG, -1, None, MEDIUM,
           "Bytes of queued requests before reads stop; -1 for no limit."),
    define("connections.max.idle.ms", LONG, 600000, None, MEDIUM,
           "Idle connections are closed after this time."),
    define("max.connections", INT, INT_MAX, at_least(0), MEDIUM,
           "Maximum connections to the broker."),
    define("max.connections.per.ip", INT, INT_MAX, at_least(0), MEDIUM,
           "Maximum connections from one IP address."),
    define("max.connections.per.ip.overrides", STRING, "", None, MEDIUM,
           "Per-IP or per-host overrides of max.connections.per.ip (host:count,...)."),
    define("max.connection.creation.rate", INT, INT_MAX, at_least(0), MEDIUM,
           "Maximum new connections per second."),
    define("quota.window.num", INT, 11, at_least(1), LOW,
           "Samples kept for client quotas and connection creation rates."),
    define("quota.window.size.seconds", INT, 1, at_least(1), LOW,
           "Time span of each sample of client quotas and connection creation rates."),
    define("controller.quota.window.num", INT, 11, at_least(1), LOW,
           "Samples of the controller mutation quota (its token bucket holds this many "
           "windows of the quota)."),
    define("controller.quota.window.size.seconds", INT, 1, at_least(1), LOW,
           "Time span of each sample of the controller mutation quota."),
    define("request.timeout.ms", INT, 30000, None, HIGH,
           "Time the broker's own clients wait for a response (transaction markers, acks=all "
           "on the transaction log)."),
    define("message.max.bytes", INT, 1048588, at_least(0), HIGH,
           "Largest record batch size allowed; topic synonym max.message.bytes.",
           topic_name="max.message.bytes"),
    define("fetch.max.bytes", INT, 57671680, at_least(1024), MEDIUM,
           "Maximum bytes returned for one fetch request."),
    define("max.incremental.fetch.session.cache.slots", INT, 1000, at_least(0), MEDIUM,
           "Maximum incremental fetch sessions kept."),
    define("max.request.partition.size.limit", INT, 2000, at_least(1), MEDIUM,
           "Maximum partitions in one request."),
    # --- topics
    define("auto.create.topics.enable", BOOLEAN, True, None, HIGH,
           "Create topics on first metadata request or produce."),
    define("delete.topic.enable", BOOLEAN, True, None, HIGH, "Allow deleting topics."),
    define("num.partitions", INT, 1, at_least(1), MEDIUM,
           "Default number of partitions of a new topic."),
    define("default.replication.factor", INT, 1, None, MEDIUM,
           "Default replication factor of a new topic."),
    define("min.insync.replicas", INT, 1, at_least(1), HIGH,
           "Minimum in-sync replicas for acks=all writes.", topic_name="min.insync.replicas"),
    define("unclean.leader.election.enable", BOOLEAN, False, None, HIGH,
           "Allow out-of-sync replicas to become leader.",
           topic_name="unclean.leader.election.enable"),
    define("compression.type", STRING, "producer", ValidString(COMPRESSION_TYPES), HIGH,
           "Final compression of topic data; 'producer' keeps the producer's codec.",
           topic_name="compression.type"),
    define("compression.gzip.level", INT, -1, GzipLevel(), MEDIUM, "gzip compression level.",
           topic_name="compression.gzip.level"),
    define("compression.lz4.level", INT, 9, between(1, 17), MEDIUM, "lz4 compression level.",
           topic_name="compression.lz4.level"),
    define("compression.zstd.level", INT, 3, between(-131072, 22), MEDIUM,
           "zstd compression level.", topic_name="compression.zstd.level"),
    define("replica.fetch.max.bytes", INT, 1048576, at_least(0), MEDIUM,
           "Bytes per partition a follower fetches (accepted)."),
    define("replica.lag.time.max.ms", LONG, 30000, None, HIGH,
           "Time before a silent follower leaves the ISR (accepted)."),
    # --- log
    define("log.dirs", STRING, None, None, HIGH,
           "Comma-separated data directories; log.dir is used if unset."),
    define("log.dir", STRING, "/tmp/kafka-logs", None, HIGH,
           "Data directory, used when log.dirs is unset."),
    define("log.segment.bytes", INT, 1073741824, at_least(1048576), HIGH,
           "Maximum size of a log segment file.", topic_name="segment.bytes"),
    define("log.roll.ms", LONG, None, None, HIGH,
           "Time before a new segment is rolled; log.roll.hours if unset.",
           topic_name="segment.ms"),
    define("log.roll.hours", INT, 168, at_least(1), HIGH,
           "Time before a new segment is rolled, in hours; second to log.roll.ms."),
    define("log.roll.jitter.ms", LONG, None, None, HIGH,
           "Maximum jitter subtracted from the roll time; log.roll.jitter.hours if unset.",
           topic_name="segment.jitter.ms"),
    define("log.roll.jitter.hours", INT, 0, at_least(0), HIGH,
           "Roll jitter in hours; second to log.roll.jitter.ms."),
    define("log.retention.ms", LONG, None, None, HIGH,
           "Time a log segment is kept; log.retention.minutes if unset; -1 for no limit.",
           topic_name="retention.ms"),
    define("log.retention.minutes", INT, None, None, HIGH,
           "Retention in minutes; second to log.retention.ms, log.retention.hours if unset."),
    define("log.retention.hours", INT, 168, None, HIGH,
           "Retention in hours; third to log.retention.ms."),
    define("log.retention.bytes", LONG, -1, None, HIGH,
           "Maximum partition size before deletion; -1 for no limit.",
           topic_name="retention.bytes"),
    define("log.retention.check.interval.ms", LONG, 300000, at_least(1), MEDIUM,
           "How often logs are checked for segments to delete."),
    define("log.cleanup.policy", LIST, "delete", ValidList(CLEANUP_POLICIES), MEDIUM,
           "Default cleanup policy: delete, compact, or both.", topic_name="cleanup.policy"),
    define("log.index.size.max.bytes", INT, 10485760, at_least(4), MEDIUM,
           "Maximum size of an offset index.", topic_name="segment.index.bytes"),
    define("log.index.interval.bytes", INT, 4096, at_least(0), MEDIUM,
           "Bytes between offset index entries.", topic_name="index.interval.bytes"),
    define("log.flush.interval.messages", LONG, LONG_MAX, at_least(1), HIGH,
           "Messages before a partition is fsynced.", topic_name="flush.messages"),
    define("log.flush.interval.ms", LONG, None, None, HIGH,
           "Time before a partition is fsynced; log.flush.scheduler.interval.ms if unset.",
           topic_name="flush.ms"),
    define("log.flush.scheduler.interval.ms", LONG, LONG_MAX, None, HIGH,
           "How often the flusher checks for logs to fsync."),
    define("log.flush.offset.checkpoint.interval.ms", INT, 60000, at_least(0), HIGH,
           "How often the recovery point checkpoint is written."),
    define("log.flush.start.offset.checkpoint.interval.ms", INT, 60000, at_least(0), HIGH,
           "How often the log start offset checkpoint is written."),
    define("log.segment.delete.delay.ms", LONG, 60000, at_least(0), HIGH,
           "Time before a deleted segment's files are removed.",
           topic_name="file.delete.delay.ms"),
    define("log.preallocate", BOOLEAN, False, None, MEDIUM,
           "Preallocate new segment files.", topic_name="preallocate"),
    define("log.message.timestamp.type", STRING, "CreateTime", ValidString(TIMESTAMP_TYPES),
           MEDIUM, "CreateTime or LogAppendTime.", topic_name="message.timestamp.type"),
    define("log.message.timestamp.before.max.ms", LONG, LONG_MAX, at_least(0), MEDIUM,
           "How far a CreateTime timestamp may lie in the past.",
           topic_name="message.timestamp.before.max.ms"),
    define("log.message.timestamp.after.max.ms", LONG, 3600000, at_least(0), MEDIUM,
           "How far a CreateTime timestamp may lie in the future.",
           topic_name="message.timestamp.after.max.ms"),
    define("log.local.retention.ms", LONG, -2, at_least(-2), MEDIUM,
           "Local retention time with tiered storage; -2 means log.retention.ms.",
           topic_name="local.retention.ms"),
    define("log.local.retention.bytes", LONG, -2, at_least(-2), MEDIUM,
           "Local retention size with tiered storage; -2 means log.retention.bytes.",
           topic_name="local.retention.bytes"),
    define("log.remote.copy.lag.ms", LONG, 0, at_least(-1), MEDIUM,
           "Default remote.copy.lag.ms of topics (tiered storage).",
           topic_name="remote.copy.lag.ms"),
    define("log.remote.copy.lag.bytes", LONG, -1, at_least(-1), MEDIUM,
           "Default remote.copy.lag.bytes of topics (tiered storage).",
           topic_name="remote.copy.lag.bytes"),
    define("max.decompressed.message.bytes", INT, MAX_DECOMPRESSED,
           between(1, MAX_DECOMPRESSED), MEDIUM,
           "Default max.decompressed.message.bytes of topics.",
           topic_name="max.decompressed.message.bytes"),
    define("log.cleaner.enable", BOOLEAN, True, None, MEDIUM,
           "Run the log cleaner (needed for compacted topics)."),
    define("log.cleaner.threads", INT, 1, at_least(0), MEDIUM, "Log cleaner threads."),
    define("log.cleaner.backoff.ms", LONG, 15000, at_least(0), MEDIUM,
           "Sleep when there is nothing to clean."),
    define("log.cleaner.dedupe.buffer.size", LONG, 134217728, None, MEDIUM,
           "Memory for log deduplication across all cleaner threads."),
    define("log.cleaner.io.buffer.size", INT, 524288, at_least(0), MEDIUM,
           "I/O buffer memory across all cleaner threads."),
    define("log.cleaner.io.buffer.load.factor", DOUBLE, 0.9, None, MEDIUM,
           "Dedupe buffer load factor."),
    define("log.cleaner.io.max.bytes.per.second", DOUBLE, DOUBLE_MAX, None, MEDIUM,
           "Cleaner I/O throttle."),
    define("log.cleaner.min.cleanable.ratio", DOUBLE, 0.5, between(0, 1), MEDIUM,
           "Dirty ratio that makes a log eligible for cleaning.",
           topic_name="min.cleanable.dirty.ratio"),
    define("log.cleaner.delete.retention.ms", LONG, 86400000, at_least(0), MEDIUM,
           "Time tombstones are kept in compacted topics.", topic_name="delete.retention.ms"),
    define("log.cleaner.min.compaction.lag.ms", LONG, 0, at_least(0), MEDIUM,
           "Minimum time a message stays uncompacted.", topic_name="min.compaction.lag.ms"),
    define("log.cleaner.max.compaction.lag.ms", LONG, LONG_MAX, at_least(1), MEDIUM,
           "Maximum time a message stays ineligible for compaction.",
           topic_name="max.compaction.lag.ms"),
    # --- group coordinator
    define("offsets.topic.num.partitions", INT, 50, at_least(1), HIGH,
           "Partitions of __consumer_offsets (fixed once created)."),
    define("offsets.topic.replication.factor", SHORT, 3, at_least(1), HIGH,
           "Replication factor of __consumer_offsets (a single node uses 1)."),
    define("offsets.topic.segment.bytes", INT, 104857600, at_least(1), HIGH,
           "Segment size of __consumer_offsets."),
    define("offsets.topic.compression.codec", INT, 0, None, HIGH,
           "Compression codec id for __consumer_offsets records."),
    define("offsets.load.buffer.size", INT, 5242880, at_least(1), HIGH,
           "Read batch size when loading offsets."),
    define("offsets.commit.timeout.ms", INT, 5000, at_least(1), HIGH,
           "Time an offset commit waits for the write."),
    define("offsets.retention.minutes", INT, 10080, at_least(1), HIGH,
           "Time committed offsets of an empty group are kept."),
    define("offsets.retention.check.interval.ms", LONG, 600000, at_least(1), HIGH,
           "How often stale offsets are checked."),
    define("offset.metadata.max.bytes", INT, 4096, None, HIGH,
           "Maximum size of offset commit metadata."),
    define("group.coordinator.rebalance.protocols", LIST, "classic,consumer,streams",
           ValidList(REBALANCE_PROTOCOLS), MEDIUM, "Enabled rebalance protocols."),
    define("group.initial.rebalance.delay.ms", INT, 3000, None, MEDIUM,
           "Wait for more members before the first rebalance of an empty classic group."),
    define("group.min.session.timeout.ms", INT, 6000, None, MEDIUM,
           "Minimum session timeout of classic group members."),
    define("group.max.session.timeout.ms", INT, 1800000, None, MEDIUM,
           "Maximum session timeout of classic group members."),
    define("group.max.size", INT, INT_MAX, at_least(1), MEDIUM,
           "Maximum members of a classic group."),
    define("group.consumer.session.timeout.ms", INT, 45000, at_least(1), MEDIUM,
           "Session timeout of consumer-protocol members."),
    define("group.consumer.min.session.timeout.ms", INT, 45000, at_least(1), MEDIUM,
           "Minimum session timeout of consumer-protocol members."),
    define("group.consumer.max.session.timeout.ms", INT, 60000, at_least(1), MEDIUM,
           "Maximum session timeout of consumer-protocol members."),
    define("group.consumer.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM,
           "Heartbeat interval of consumer-protocol members."),
    define("group.consumer.min.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM,
           "Minimum heartbeat interval of consumer-protocol members."),
    define("group.consumer.max.heartbeat.interval.ms", INT, 15000, at_least(1), MEDIUM,
           "Maximum heartbeat interval of consumer-protocol members."),
    define("group.streams.session.timeout.ms", INT, 45000, at_least(1), MEDIUM,
           "Session timeout of streams-protocol members (KIP-1071)."),
    define("group.streams.heartbeat.interval.ms", INT, 5000, at_least(1), MEDIUM,
           "Heartbeat interval of streams-protocol members."),
    define("group.streams.initial.rebalance.delay.ms", INT, 3000, at_least(0), MEDIUM,
           "How long a new streams group waits before its first task assignment."),
    define("group.streams.num.standby.replicas", INT, 0, at_least(0), MEDIUM,
           "Standby replicas of each stateful task in streams groups."),
    define("group.consumer.max.size", INT, INT_MAX, at_least(1), MEDIUM,
           "Maximum members of a consumer-protocol group."),
    define("group.consumer.assignors", LIST, "uniform,range", None, MEDIUM,
           "Server-side assignors, the first is the default."),
    define("group.consumer.migration.policy", STRING, "bidirectional", None, MEDIUM,
           "Online migration between classic and consumer groups: disabled, upgrade, "
           "downgrade or bidirectional (case insensitive)."),
    define("group.consumer.assignment.interval.ms", INT, 1000, at_least(0), MEDIUM,
           "A consumer group gets a new target assignment at most this often."),
    # --- transactions and producer ids
    define("transaction.max.timeout.ms", INT, 900000, at_least(1), HIGH,
           "Largest transaction timeout a producer may ask for."),
    define("transactional.id.expiration.ms", INT, 604800000, at_least(1), HIGH,
           "Idle time after which a transactional id expires."),
    define("transaction.abort.timed.out.transaction.cleanup.interval.ms", INT, 10000,
           at_least(1), LOW, "How often timed-out transactions are rolled back."),
    define("transaction.remove.expired.transaction.cleanup.interval.ms", INT, 3600000,
           at_least(1), LOW, "How often expired transactional ids are removed."),
    define("transaction.state.log.num.partitions", INT, 50, at_least(1), HIGH,
           "Partitions of __transaction_state (fixed once created)."),
    define("transaction.state.log.replication.factor", SHORT, 3, at_least(1), HIGH,
           "Replication factor of __transaction_state (a single node uses 1)."),
    define("transaction.state.log.min.isr", INT, 2, at_least(1), HIGH,
           "min.insync.replicas of __transaction_state."),
    define("transaction.state.log.segment.bytes", INT, 104857600, at_least(1), HIGH,
           "Segment size of __transaction_state."),
    define("transaction.state.log.load.buffer.size", INT, 5242880, at_least(1), HIGH,
           "Read batch size when loading transaction state."),
    define("transaction.partition.verification.enable", BOOLEAN, True, None, LOW,
           "Verify a partition was added to the transaction before writing to it."),
    define("producer.id.expiration.ms", INT, 86400000, at_least(1), LOW,
           "Idle time after which a producer id's state is dropped."),
    define("producer.id.expiration.check.interval.ms", INT, 600000, at_least(1), LOW,
           "How often expired producer ids are removed.", internal=True),
    *KRAFT_DEFS,
]  # fmt: skip

#: Configs Kafka lets AlterConfigs change on a running broker (DynamicBrokerConfig.AllDynamicConfigs
#: restricted to the configs defined here). Log defaults are only the first synonym of each topic
#: config: log.retention.ms is dynamic, log.retention.hours is not.
DYNAMIC_BROKER_CONFIGS: frozenset[str] = frozenset(
    {synonyms[0][0] for synonyms in TOPIC_BROKER_SYNONYMS.values()}
    | {
        "log.cleaner.threads", "log.cleaner.dedupe.buffer.size",
        "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size",
        "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms", "message.max.bytes",
        "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
        "background.threads", "num.network.threads", "listeners",
        "listener.security.protocol.map", "max.connections", "max.connection.creation.rate",
        "max.connections.per.ip", "max.connections.per.ip.overrides",
        "producer.id.expiration.ms", "transaction.partition.verification.enable",
        "group.consumer.assignment.interval.ms",
    }
)  # fmt: skip

#: Dynamic configs that can only be set for a broker id, never as the cluster-wide default.
PER_BROKER_CONFIGS: frozenset[str] = frozenset({"listeners", "listener.security.protocol.map"})

#: Thread pools Kafka only lets grow or shrink by at most a factor of two at a time.
THREAD_POOL_CONFIGS = (
    "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
    "background.threads",
)  # fmt: skip

BROKER_CONFIGS: dict[str, ConfigDef] = names_of(
    [
        ConfigDef(
            d.name, d.type, d.default, d.validator, d.importance, d.documentation,
            d.topic_name, d.name not in DYNAMIC_BROKER_CONFIGS, d.internal,
        )
        for d in _DEFS
    ]
)  # fmt: skip

#: Kafka broker configs (4.1, plus ones removed since 3.x) that pykafkad accepts and ignores.
IGNORED_BROKER_CONFIGS: frozenset[str] = frozenset(
    """
    early.start.listeners authorizer.class.name super.users allow.everyone.if.no.acl.found
    principal.builder.class connection.failed.authentication.delay.ms connections.max.reauth.ms
    socket.connection.setup.timeout.ms socket.connection.setup.timeout.max.ms
    num.replica.alter.log.dirs.threads controlled.shutdown.enable unstable.api.versions.enable
    unstable.feature.versions.enable initial.broker.registration.timeout.ms
    server.max.startup.time.ms controller.socket.timeout.ms replica.socket.receive.buffer.bytes
    replica.selector.class
    replica.alter.log.dirs.io.max.bytes.per.second fetch.purgatory.purge.interval.requests
    producer.purgatory.purge.interval.requests delete.records.purgatory.purge.interval.requests
    share.fetch.purgatory.purge.interval.requests
    leader.replication.throttled.rate follower.replication.throttled.rate
    create.topic.policy.class.name alter.config.policy.class.name
    log.dir.failure.timeout.ms log.initial.task.delay.ms
    metric.reporters metrics.num.samples metrics.recording.level metrics.sample.window.ms
    kafka.metrics.polling.interval.secs kafka.metrics.reporters telemetry.max.bytes
    client.quota.callback.class
    replication.quota.window.num replication.quota.window.size.seconds
    alter.log.dirs.replication.quota.window.num
    alter.log.dirs.replication.quota.window.size.seconds group.coordinator.threads
    group.coordinator.append.linger.ms
    group.consumer.regex.refresh.interval.ms transaction.two.phase.commit.enable
    add.partitions.to.txn.retry.backoff.ms add.partitions.to.txn.retry.backoff.max.ms
    security.providers inter.broker.protocol.version log.message.format.version
    log.message.timestamp.difference.max.ms log.message.downconversion.enable
    offsets.commit.required.acks control.plane.listener.name broker.id.generation.enable
    reserved.broker.max.id controlled.shutdown.max.retries controlled.shutdown.retry.backoff.ms
    leader.imbalance.per.broker.percentage auto.include.jmx.reporter
    eligible.leader.replicas.enable group.coordinator.new.enable metadata.log.segment.min.bytes
    """.split()
)

#: Whole families of Kafka broker configs that pykafkad accepts and ignores.
IGNORED_BROKER_CONFIG_PREFIXES: tuple[str, ...] = (
    "listener.name.", "ssl.", "sasl.", "zookeeper.", "controller.quorum.",
    "controller.performance.",
    "remote.log.", "remote.fetch.", "remote.list.", "group.share.", "group.streams.",
    "share.coordinator.", "delegation.token.", "password.encoder.", "config.providers",
    "internal.metadata.",
)  # fmt: skip


#: the security settings kept with the ignored ones (untyped) but read by pykafkad/security
#: (listeners' TLS and SASL, re-authentication, the StandardAuthorizer): help and the README
#: do not list them as ignored
SECURITY_BROKER_CONFIGS: frozenset[str] = frozenset({
    "authorizer.class.name", "super.users", "allow.everyone.if.no.acl.found",
    "connections.max.reauth.ms"})
SECURITY_BROKER_CONFIG_PREFIXES: tuple[str, ...] = ("listener.name.", "ssl.", "sasl.")


#: pykafkad's own settings, which are no Kafka config (never described): the fault control
#: channel for tests (pykafkad/faults)
PYKAFKAD_CONFIGS: frozenset[str] = frozenset({"pykafkad.faults.enable"})


def is_ignored_broker_config(name: str) -> bool:
    return (name in IGNORED_BROKER_CONFIGS or name in UNUSED_BROKER_CONFIGS
            or name in PYKAFKAD_CONFIGS
            or name.startswith(IGNORED_BROKER_CONFIG_PREFIXES))


_ONE_THREAD = "one trio thread serves everything"
_KIP848_BOUND = "only bounds per-group overrides (group configs) when they are set"
_KRAFT = "read by KRaft nodes (process.roles); a single node has one replica of everything"

#: Broker configs pykafkad defines (validates, describes, lets AlterConfigs change) but does not
#: act on, with the reason; every other config in BROKER_CONFIGS is applied.  ``pykafkad
#: --help-config`` and the README (scripts/config_table.py) are generated from this table.
NOT_APPLIED_BROKER_CONFIGS: dict[str, str] = {
    "num.network.threads": _ONE_THREAD,
    "num.io.threads": _ONE_THREAD,
    "background.threads": _ONE_THREAD,
    "num.recovery.threads.per.data.dir": _ONE_THREAD,
    "queued.max.requests": "each connection handles one request at a time; nothing queues",
    "queued.max.request.bytes": "each connection handles one request at a time; nothing queues",
    "log.flush.interval.messages": "flushing is left to the OS, as Kafka's defaults do",
    "log.flush.interval.ms": "flushing is left to the OS, as Kafka's defaults do",
    "log.flush.scheduler.interval.ms": "flushing is left to the OS, as Kafka's defaults do",
    "log.flush.offset.checkpoint.interval.ms":
        "recovery points are checkpointed at segment roll and shutdown",
    "log.flush.start.offset.checkpoint.interval.ms":
        "log start offsets are checkpointed whenever one moves",
    "log.segment.delete.delay.ms": "files of deleted segments are removed at once",
    "log.preallocate": "segment files are never preallocated",
    "log.local.retention.ms": "no tiered storage",
    "log.local.retention.bytes": "no tiered storage",
    "log.remote.copy.lag.ms": "no tiered storage",
    "log.remote.copy.lag.bytes": "no tiered storage",
    "log.cleaner.threads": "one cleaner process cleans one log at a time",
    "log.cleaner.dedupe.buffer.size": "the cleaner's offset map is not bounded",
    "log.cleaner.io.buffer.size": "the cleaner sizes its own reads",
    "log.cleaner.io.buffer.load.factor": "the cleaner's offset map is not bounded",
    "log.cleaner.io.max.bytes.per.second": "the cleaner is not throttled",
    "group.coordinator.rebalance.protocols": "the classic and consumer protocols are always served",
    "group.consumer.min.session.timeout.ms": _KIP848_BOUND,
    "group.consumer.max.session.timeout.ms": _KIP848_BOUND,
    "group.consumer.min.heartbeat.interval.ms": _KIP848_BOUND,
    "group.consumer.max.heartbeat.interval.ms": _KIP848_BOUND,
    "transaction.state.log.load.buffer.size": "transaction state is read in one pass at start",
}

#: Applied configs whose application differs in some way worth telling.
APPLIED_WITH_NOTE: dict[str, str] = {
    "log.dirs": "only the first directory is used",
    "listeners": "every listener is bound; controller listeners serve Kafka's controller APIs",
    "socket.send.buffer.bytes": "when set; unset, the OS tunes the buffer",
    "socket.receive.buffer.bytes": "when set; unset, the OS tunes the buffer",
    "listener.security.protocol.map": "only PLAINTEXT is served: SSL and SASL listeners are refused",
    "controller.listener.names": "its listeners serve the controller APIs, not clients' APIs",
    "process.roles": "unset: pykafkad's single-node broker; set: a KRaft node",
    "controller.quorum.voters": "the static quorum of KRaft nodes",
    "controller.quorum.bootstrap.servers": (
        "a dynamic quorum (KIP-853): voters from the log, the leader found through these"),
    **{name: _KRAFT for name in (
        "num.replica.fetchers", "min.insync.replicas", "unclean.leader.election.enable",
        "replica.fetch.max.bytes", "replica.lag.time.max.ms", "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor", "transaction.state.log.min.isr",
        "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
        "controller.quorum.election.backoff.max.ms", "controller.quorum.request.timeout.ms",
        "broker.session.timeout.ms", "broker.heartbeat.interval.ms", "replica.fetch.wait.max.ms",
        "replica.fetch.min.bytes", "replica.fetch.backoff.ms", "replica.fetch.response.max.bytes",
        "replica.socket.timeout.ms", "auto.leader.rebalance.enable",
        "leader.imbalance.check.interval.seconds", "unclean.leader.election.interval.ms",
        "metadata.max.idle.interval.ms", "metadata.log.dir", "metadata.log.segment.bytes",
        "metadata.log.segment.ms", "metadata.max.retention.bytes", "metadata.max.retention.ms",
        "metadata.log.max.record.bytes.between.snapshots",
        "metadata.log.max.snapshot.interval.ms")},
}
