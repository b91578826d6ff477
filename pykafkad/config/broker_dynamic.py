"""Kafka 4.4's rules for dynamic broker configs (DynamicBrokerConfig.validateConfigs) over the
configs pykafkad accepts but does not use: which a running Kafka lets AlterConfigs change, with
what type, and at which level.  Clients (librdkafka's 0081) alter e.g.
``sasl.kerberos.min.time.before.relogin`` and expect Kafka's answer, not a refusal.

Names Kafka does not know at all are accepted as Kafka accepts them (it only checks names it
knows); pykafkad keeps them but, like the configs below, never uses them.
"""

from __future__ import annotations

from collections.abc import Iterable

from pykafkad.config.types import ConfigError, ConfigType

BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = (
    ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.SHORT, ConfigType.LONG,
    ConfigType.DOUBLE, ConfigType.LIST, ConfigType.CLASS, ConfigType.PASSWORD,
)  # fmt: skip

#: Kafka's dynamic broker configs that pykafkad does not define, with their types
UNUSED_DYNAMIC_CONFIGS: dict[str, ConfigType] = {
    "config.providers": LIST,
    "cordoned.log.dirs": LIST,
    "errors.deadletterqueue.auto.create.topics.enable": BOOLEAN,
    "errors.deadletterqueue.topic.name.prefix": STRING,
    "follower.fetch.last.tiered.offset.enable": BOOLEAN,
    "follower.replication.throttled.rate": LONG,
    "group.consumer.assignment.interval.ms": INT,
    "group.consumer.assignor.offload.enable": BOOLEAN,
    "group.coordinator.cached.buffer.max.bytes": INT,
    "group.share.assignment.interval.ms": INT,
    "group.share.assignor.offload.enable": BOOLEAN,
    "group.streams.assignment.interval.ms": INT,
    "group.streams.assignor.offload.enable": BOOLEAN,
    "leader.replication.throttled.rate": LONG,
    "metric.reporters": LIST,
    "principal.builder.class": CLASS,
    "remote.fetch.max.wait.ms": INT,
    "remote.list.offsets.request.timeout.ms": LONG,
    "remote.log.index.file.cache.total.size.bytes": LONG,
    "remote.log.manager.copier.thread.pool.size": INT,
    "remote.log.manager.copy.max.bytes.per.second": LONG,
    "remote.log.manager.expiration.thread.pool.size": INT,
    "remote.log.manager.fetch.max.bytes.per.second": LONG,
    "remote.log.manager.follower.thread.pool.size": INT,
    "remote.log.reader.threads": INT,
    "replica.alter.log.dirs.io.max.bytes.per.second": LONG,
    "sasl.enabled.mechanisms": LIST,
    "sasl.jaas.config": PASSWORD,
    "sasl.kerberos.kinit.cmd": STRING,
    "sasl.kerberos.min.time.before.relogin": LONG,
    "sasl.kerberos.principal.to.local.rules": LIST,
    "sasl.kerberos.service.name": STRING,
    "sasl.kerberos.ticket.renew.jitter": DOUBLE,
    "sasl.kerberos.ticket.renew.window.factor": DOUBLE,
    "sasl.login.refresh.buffer.seconds": SHORT,
    "sasl.login.refresh.min.period.seconds": SHORT,
    "sasl.login.refresh.window.factor": DOUBLE,
    "sasl.login.refresh.window.jitter": DOUBLE,
    "sasl.mechanism.inter.broker.protocol": STRING,
    "share.coordinator.cached.buffer.max.bytes": INT,
    "ssl.cipher.suites": LIST,
    "ssl.client.auth": STRING,
    "ssl.enabled.protocols": LIST,
    "ssl.endpoint.identification.algorithm": STRING,
    "ssl.engine.factory.class": CLASS,
    "ssl.key.password": PASSWORD,
    "ssl.keymanager.algorithm": STRING,
    "ssl.keystore.certificate.chain": PASSWORD,
    "ssl.keystore.key": PASSWORD,
    "ssl.keystore.location": STRING,
    "ssl.keystore.password": PASSWORD,
    "ssl.keystore.type": STRING,
    "ssl.protocol": STRING,
    "ssl.provider": STRING,
    "ssl.secure.random.implementation": STRING,
    "ssl.trustmanager.algorithm": STRING,
    "ssl.truststore.certificates": PASSWORD,
    "ssl.truststore.location": STRING,
    "ssl.truststore.password": PASSWORD,
    "ssl.truststore.type": STRING,
}  # fmt: skip

#: Dynamic configs Kafka lets change only per broker (PerBrokerConfigs)
PER_BROKER_DYNAMIC_CONFIGS: frozenset[str] = frozenset({
    "cordoned.log.dirs", "listener.security.protocol.map", "listeners", "principal.builder.class",
} | {n for n in UNUSED_DYNAMIC_CONFIGS if n.startswith(("sasl.", "ssl."))})  # fmt: skip

#: SSL stores Kafka changes only per listener (``listener.name.<l>.ssl.keystore.location``)
LISTENER_ONLY_CONFIGS: frozenset[str] = frozenset(
    f"ssl.{n}" for n in (
        "key.password", "keystore.certificate.chain", "keystore.key", "keystore.location",
        "keystore.password", "keystore.type", "truststore.certificates", "truststore.location",
        "truststore.password", "truststore.type",
    )
)  # fmt: skip

LISTENER_PREFIX = "listener.name."
#: listener configs that stay cluster-wide even with a listener prefix
CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset(
    {"max.connections", "max.connection.creation.rate", "num.network.threads"})


def listener_base_name(name: str) -> str | None:
    """``listener.name.plaintext.ssl.keystore.location`` -> ``ssl.keystore.location``."""
    if not name.startswith(LISTENER_PREFIX):
        return None
    rest = name[len(LISTENER_PREFIX):]
    _, dot, base = rest.partition(".")
    return base if dot and base else None


def is_per_broker(name: str) -> bool:
    base = listener_base_name(name)
    if base is not None:
        return base not in CLUSTER_LEVEL_LISTENER_CONFIGS
    return name in PER_BROKER_DYNAMIC_CONFIGS


CORDONED_LOG_DIRS = "cordoned.log.dirs"


def check_cordoned_log_dirs(value: str, log_dirs: Iterable[str]) -> None:
    """KafkaConfig's KIP-1066 rule: ``*`` alone, or only dirs named exactly as in log.dirs;
    Kafka refuses anything else (INVALID_REQUEST on an alter) with these messages."""
    entries = [e.strip() for e in value.split(",") if e.strip()]
    if len(set(entries)) < len(entries):
        raise ConfigError(
            f"Configuration '{CORDONED_LOG_DIRS}' values must not be duplicated.", CORDONED_LOG_DIRS)
    if "*" in entries and len(entries) > 1:
        raise ConfigError(
            "requirement failed: When cordoned.log.dirs is set to *, it must not contain other "
            "values", CORDONED_LOG_DIRS)
    known = set(log_dirs)
    missing = [e for e in entries if e != "*" and e not in known]
    if missing:
        raise ConfigError(
            "requirement failed: All entries in cordoned.log.dirs must be present in log.dirs or "
            f"log.dir. Missing entries : {', '.join(missing)}", CORDONED_LOG_DIRS)
